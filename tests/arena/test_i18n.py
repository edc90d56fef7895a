"""The pages in Persian: right to left, translated, Persian digits; the language switcher
remembered in a cookie and, for a signed-in user, with them; the translation catalog complete
and its compiled form up to date."""

from __future__ import annotations

import gettext
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.test import Client

from arena import services
from arena.models import Ladder
from tests.support import PROJECT_DIR

pytestmark = pytest.mark.django_db

LOCALE = PROJECT_DIR / "arena" / "locale" / "fa" / "LC_MESSAGES"
PAGES = [
    "/",
    "/tournaments/",
    "/bots/",
    "/matches/",
    "/ladders/standard/",  # (its id: 1 unless an earlier test flushed the tables)
    "/bots/builtin/low/",
    "/docs/bots/",
    "/signup/",
    "/login/",
]


def _persian() -> Client:
    return Client(HTTP_ACCEPT_LANGUAGE="fa-IR,fa;q=0.9")


@pytest.mark.parametrize("path", PAGES)
def test_every_page_speaks_persian_right_to_left_to_a_persian_browser(path: str) -> None:
    if path == "/ladders/standard/":
        path = f"/ladders/{Ladder.objects.get(name='standard').pk}/"
    response = _persian().get(path)
    assert response.status_code == 200, path
    html = response.content.decode()
    assert re.search(r'<html lang="fa" dir="rtl">', html), html[:200]
    nav = re.search(r'<nav aria-label="اصلی">(.*?)</nav>', html, re.S)
    assert nav and "تورنمنت‌ها" in nav.group(1) and "Tournaments" not in nav.group(1)
    assert "بی‌دل، میدان ربات‌های دل" in html  # the footer
    english = _persian_free(html)
    assert not english, english


def _persian_free(html: str) -> list[str]:
    """English words the page shows outside what stays English (names, code, the guides)."""
    body = re.sub(
        r"<(script|style|code|pre|article|datalist|option)\b.*?</\1>", " ", html, flags=re.S
    )
    body = re.sub(r'<[^>]*\blang="en"[^>]*>.*?</[a-z]+>', " ", body, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", body)
    words = re.findall(
        r"\b(?:Rank|Rating|Matches|Bots|Status|Search|Show|Sign up|Log in|"
        r"Password|Username|Home|Tournaments|Seats|Page)\b",
        text,
    )
    return words


def test_numbers_are_in_persian_digits_where_people_read_them() -> None:
    html = _persian().get("/").content.decode()
    now = re.search(r'class="now"[^>]*>(.*?)</p>', html, re.S)
    assert now and "۰ مسابقه در جریان" in now.group(1) and not re.search(r"[0-9]", now.group(1))
    english = Client().get("/").content.decode()
    assert "Now: 0 matches playing" in english


def test_a_version_reads_as_a_word_and_a_number_never_as_one_number() -> None:
    """A Latin v before Persian digits reads as one more digit (v۱ as ۷۱): Persian pages
    name a version with the word."""
    from arena.models import BotVersion, Match

    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    version = BotVersion.objects.create(
        bot=bot, number=1, filename="bot.py", code=b"x = 1\n", sha256="0" * 64, status="active"
    )
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=[services.SeatSpec(version=version)]
        + [services.SeatSpec(builtin=b) for b in ("random", "low", "heuristic")],
        hands=1,
        seed=5,
        requested_by=owner,
    )
    for path in (f"/matches/{match.pk}/", "/matches/"):
        html = _persian().get(path).content.decode()
        assert "ada-bot</a> نسخهٔ ۱" in html or "ada-bot نسخهٔ ۱</a>" in html, path
        assert not re.search(r"v[۰-۹]", html), path
        english = Client().get(path).content.decode()
        assert "ada-bot</a> v1" in english or "ada-bot v1</a>" in english, path


def test_the_switcher_is_remembered_in_a_cookie_and_with_a_signed_in_user() -> None:
    visitor = Client()
    chose = visitor.post("/language/", {"language": "fa", "next": "/bots/"})
    assert chose.status_code == 302 and chose["Location"] == "/bots/"
    assert 'lang="fa"' in visitor.get("/bots/").content.decode()  # the cookie
    away = visitor.post("/language/", {"language": "fa", "next": "https://elsewhere.example/"})
    assert away["Location"] == "/"  # never sent off the site
    user = services.user_create(username="ada", password="a long passphrase")
    browser = Client()
    browser.force_login(user)
    browser.post("/language/", {"language": "fa", "next": "/account/"})
    elsewhere = Client(HTTP_ACCEPT_LANGUAGE="en")  # another device, an English browser
    elsewhere.force_login(user)
    assert '<html lang="fa" dir="rtl">' in elsewhere.get("/account/").content.decode()
    elsewhere.post("/language/", {"language": "en", "next": "/"})
    assert '<html lang="en" dir="ltr">' in browser.get("/account/").content.decode()
    # the API keeps its own words (a program reads them), whatever the pages speak
    assert browser.get("/api/bots/999/").json() == {"detail": ["No Bot matches the given query."]}
    persian_api = Client(HTTP_ACCEPT_LANGUAGE="fa")
    persian_api.cookies["django_language"] = "fa"
    refused = persian_api.post("/api/users/", {"username": "x"})
    assert refused.json()["password"] == ["This field is required."]


def test_the_catalog_is_complete_and_its_compiled_form_matches(tmp_path: Path) -> None:
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:
        pytest.skip("gettext's msgfmt is not installed (apt-get install gettext)")
    for domain in ("django", "djangojs"):
        po = LOCALE / f"{domain}.po"
        stats = subprocess.run(
            [msgfmt, "--check", "--statistics", "-o", "/dev/null", str(po)],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        assert "untranslated" not in stats and "fuzzy" not in stats, (domain, stats)
        fresh = tmp_path / f"{domain}.mo"
        subprocess.run([msgfmt, "-o", str(fresh), str(po)], check=True)
        with fresh.open("rb") as a, (LOCALE / f"{domain}.mo").open("rb") as b:
            assert gettext.GNUTranslations(a)._catalog == gettext.GNUTranslations(b)._catalog, (
                f"{domain}.mo is stale: cd arena && python ../manage.py compilemessages"
            )


def test_a_persian_form_says_what_is_wrong_in_persian_and_the_api_in_english() -> None:
    services.user_create(username="taken", password="a long passphrase")
    page = _persian().post("/signup/", {"username": "taken", "password": "a long passphrase"})
    assert page.status_code == 400
    assert "این نام کاربری گرفته شده است" in page.content.decode()
    api = Client(HTTP_ACCEPT_LANGUAGE="fa").post(
        "/api/users/", {"username": "taken", "password": "a long passphrase"}
    )
    assert api.json() == {"username": ["that username is taken"]}
    user = services.user_create(username="ada", password="a long passphrase")
    client = _persian()
    client.force_login(user)
    bot = services.bot_create(owner=user, name="ada-bot")
    from django.core.files.uploadedfile import SimpleUploadedFile

    refused = client.post(
        f"/bots/{bot.pk}/upload/", {"file": SimpleUploadedFile("bot.py", b"def (:\n")}
    )
    assert "bot.py: خطای نحوی در سطر 1:" in refused.content.decode()
