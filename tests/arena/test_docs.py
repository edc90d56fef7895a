"""The guides as pages (arena.docs): their index, the links between them down to a section,
and the project's own error pages in place of the framework's."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import pytest
from django.test import Client, RequestFactory, override_settings
from django.views.defaults import server_error

from arena import docs

pytestmark = pytest.mark.django_db


def test_the_index_lists_every_guide_and_every_page_header_links_to_it() -> None:
    index = Client().get("/docs/")
    assert index.status_code == 200
    page = index.content.decode()
    for name, (title, _) in docs.GUIDES.items():
        assert f'href="/docs/{name}/">{title}</a>' in page
        assert str(docs.SUMMARIES[name]) in page
    for address in ("/", "/matches/", "/docs/bots/", "/no-such-page/"):
        assert 'href="/docs/">Guides</a>' in Client().get(address).content.decode(), address


def test_every_link_between_guides_lands_on_a_page_and_on_its_section() -> None:
    client = Client()
    checked = 0
    for name in docs.GUIDES:
        here = f"/docs/{name}/"
        for href in re.findall(r'href="([^"]+)"', docs.render(name)):
            parts = urlsplit(urljoin(here, href))
            if parts.scheme not in ("", "http") or parts.netloc not in ("", "testserver"):
                continue  # another site's
            target = client.get(parts.path)
            assert target.status_code == 200, f"{name}: {href} -> {parts.path}"
            if parts.fragment:
                assert f'id="{parts.fragment}"' in target.content.decode(), f"{name}: {href}"
            checked += 1
    assert checked >= 5  # the guides do link to one another


@override_settings(DEBUG=False)
def test_a_missing_page_is_the_projects_own_404_in_the_pages_language() -> None:
    for address in ("/no-such-page/", "/docs/no-such-guide/", "/matches/999999/"):
        response = Client().get(address)
        assert response.status_code == 404
        page = response.content.decode()
        assert "There is nothing here" in page and 'href="/docs/"' in page, address
    persian = Client(headers={"accept-language": "fa"}).get("/no-such-page/").content.decode()
    assert 'dir="rtl"' in persian and "There is nothing here" not in persian


@override_settings(DEBUG=False)
def test_the_500_page_renders_with_nothing_but_its_template() -> None:
    """Django renders it without a request's context: it must need no database, session or
    context processor (any of them may be what failed)."""
    response = server_error(RequestFactory().get("/"))
    page = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in page and "/static/arena/site.css" in page
