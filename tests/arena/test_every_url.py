"""Every URL of the URLconf, pages and API, over a database that holds every kind of row
(:mod:`tests.arena.every_kind`): each route filled with the id of every object of its kind
and ids of none, requested with GET (following redirects) by a visitor, the owner of the
bots, a stranger and staff, in English and in Persian (:data:`WHO` and :func:`requests` say
which values each asks). No answer may be a 5xx, and no page may print a variable its
template does not have (they print :data:`INVALID` here, not Django's silent ""). A route no
request reaches fails the test: a new URL is covered the day it is added, or excluded here
with its reason."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.contrib.contenttypes.models import ContentType
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from rest_framework.renderers import BrowsableAPIRenderer

from arena import docs
from arena.models import Bot, Ladder, Match, Tournament
from arena.services import people
from bots_sdk.builtin import BUILTIN
from tests.arena.every_kind import BREAKOUT, PERSIAN, SCRIPT, EveryKind
from tests.deadline import LONG_TEST

#: A walk of every URL is minutes of rendering on a busy machine (180 s seen with both
#: cores taken): bounded as work known to be long, not by the per-test 300 s.
pytestmark = [pytest.mark.django_db, pytest.mark.timeout(LONG_TEST)]

#: What a template prints for a variable it does not have (Django prints "" by default).
INVALID = "@@no such variable: %s@@"
#: An id that names nothing.
NONE = "999999999"
#: Server errors that are a route's answer: the health check says 503 when the broker or the
#: workers are not there (none are, in this test).
ANSWERS = {("api/health/", 503)}
#: Routes no request reaches, each with its reason (none so far: keep it short).
EXCLUDED: dict[str, str] = {}


def routes() -> dict[str, URLPattern]:
    """Every route of the URLconf, as :attr:`django.urls.ResolverMatch.route` spells it."""
    found: dict[str, URLPattern] = {}

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            route = URLResolver._join_route(prefix, str(pattern.pattern))
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            else:
                found[route] = pattern

    walk(get_resolver().url_patterns, "")
    return found


_PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>|\(\?P<(\w+)>")


def _fill(route: str, values: dict[str, str]) -> str:
    """The path of ``route`` with each parameter (``<int:x>`` or a regex's ``(?P<x>…)``)
    replaced by ``values[x]``."""
    path, at = "", 0
    for found in _PARAMETER.finditer(route):
        if found.start() < at:
            continue
        path += route[at : found.start()]
        name = found.group(1) or found.group(2)
        at = found.end()
        if found.group(2):  # skip the group's regex, nested parentheses and escapes included
            depth = 1
            while depth:
                char = route[at]
                at += 2 if char == "\\" else 1
                depth += {"(": 1, ")": -1}.get(char, 0) if char != "\\" else 0
        path += values[name]
    path += route[at:]
    return "/" + path.removeprefix("^").removesuffix("$")


def _ids(rows: Any) -> list[str]:
    return [str(pk) for pk in rows] + [NONE]


def _admin_objects(model: Any, world: EveryKind) -> list[str]:
    """The objects of a model whose admin pages are drawn: matches whose seats are of every
    kind (people signed in and not, uploaded versions with faults, tournament entries), the
    first and the last of any other model, and none."""
    if model is Match:
        keys = ("human/finished", "human/finished/signed in", "challenge/finished")
        return _ids([*(world.matches[key] for key in keys), world.matches["tournament/finished"]])
    rows = list(model._default_manager.order_by("pk").values_list("pk", flat=True))
    return _ids(sorted({*rows[:1], *rows[-1:]}))


def parameters(route: str, world: EveryKind) -> list[dict[str, str]]:
    """The values each request of ``route`` fills in: every object of the kind it names, and
    ones that name nothing."""
    names = [a or b for a, b in _PARAMETER.findall(route)]
    if not names:
        return [{}]
    bots = _ids(world.bots.values())
    matches = _ids(Match.objects.order_by("pk").values_list("pk", flat=True))
    tournaments = _ids(Tournament.objects.order_by("pk").values_list("pk", flat=True))
    ladders = _ids(Ladder.objects.order_by("pk").values_list("pk", flat=True))
    tokens = _ids(world.tokens.values())
    if route.startswith("admin/"):
        if names == ["app_label"]:
            return [
                {"app_label": app}
                for app in sorted({m._meta.app_label for m in admin.site._registry})
            ]
        if names == ["url"]:
            return [{"url": "no/such/page/"}]
        if names == ["content_type_id", "object_id"]:
            kinds = ContentType.objects.get_for_models(Bot, Match)
            return [
                {"content_type_id": str(kinds[Bot].pk), "object_id": str(world.bots[PERSIAN])},
                {
                    "content_type_id": str(kinds[Match].pk),
                    "object_id": str(world.matches["human/finished"]),
                },
                {"content_type_id": NONE, "object_id": "1"},
            ]
        app, model = route.split("/")[1:3]
        (name,) = names  # object_id, or id (a user's password)
        return [{name: pk} for pk in _admin_objects(apps.get_model(app, model), world)]
    if names in (["pk", "number"], ["bot_id", "number"]):  # a bot's version
        bot_key = names[0]
        return [
            {bot_key: str(bot), "number": str(number)}
            for bot, numbers in world.versions.items()
            for number in [*numbers, 999]
        ] + [{bot_key: NONE, "number": "1"}]
    if names == ["pk", "seat"]:  # a match's seat's analysis: made, waiting, failed, none
        return [{"pk": match, "seat": seat} for match in matches for seat in ("0", "1", "2", "9")]
    if names == ["uidb64", "token"]:
        uid, token = world.reset
        return [
            {"uidb64": uid, "token": token},
            {"uidb64": uid, "token": "set-password"},
            {"uidb64": uid, "token": "0-not-a-token"},
            {"uidb64": "nothing", "token": token},
        ]
    (name,) = names
    if route.startswith("api/"):
        resource = route.split("/")[1]
        values = {
            "bots": bots,
            "ladders": ladders,
            "matches": matches,
            "tournaments": tournaments,
            "tokens": tokens,
        }[resource]
    else:
        values = {
            "ladder_id": ladders,
            "bot_id": bots,
            "match_id": matches,
            "tournament_id": tournaments,
            "token_id": tokens,
        }.get(name, [])
    if route == "bots/builtin/<str:name>/":
        values = [*sorted(BUILTIN), "nosuch", quote(SCRIPT, safe=""), quote(PERSIAN)]
    elif route == "docs/<slug:name>/":
        values = [*docs.GUIDES, "nosuch"]
    elif route == "play/<str:token>/":
        values = [world.seat_cookie, "not-a-seat"]
    assert values, f"no values for {name} of {route}: teach parameters() this route"
    return [{name: value} for value in values]


def _queries(world: EveryKind) -> list[str]:
    """The lists again, filtered every way their forms and the API offer."""
    bots = [str(pk) for pk in world.bots.values()]
    queries = [
        *(f"/matches/?{urlencode({'kind': kind})}" for kind in Match.Kind.values),
        *(f"/matches/?bot={bot}" for bot in bots),
        *(f"/matches/?opponent={name}" for name in [*BUILTIN, *bots[:1]]),
        *(f"/matches/?tournament={pk}" for pk in world.tournaments.values()),
        f"/matches/?bot={bots[0]}&opponent=low&kind=human",
        "/matches/?page=2",
        "/matches/?page=999",
        f"/matches/?{urlencode({'bot': SCRIPT, 'opponent': PERSIAN, 'kind': BREAKOUT})}",
        *(f"/tournaments/?status={status}" for status in Tournament.Status.values),
        *(f"/bots/?{urlencode({'q': q})}" for q in (PERSIAN, SCRIPT, BREAKOUT, "nobody")),
        *(f"/play/?{urlencode({'opponent': name})}" for name in world.bots),
        "/play/?seats=7",
        "/challenges/new/?seats=11",
        "/login/?next=/account/",
        *(f"/api/matches/?{urlencode({'kind': kind})}" for kind in Match.Kind.values),
        *(f"/api/matches/?{urlencode({'status': status})}" for status in Match.Status.values),
        *(f"/api/matches/?bot={bot}" for bot in bots),
        "/api/matches/?opponent=low",
        *(f"/api/tournaments/?status={status}" for status in Tournament.Status.values),
        "/api/tournaments/?format=swiss",
        f"/api/bots/?{urlencode({'name': PERSIAN})}",
        "/api/schema/?format=json",
    ]
    return queries


@dataclass(frozen=True)
class Who:
    name: str  #: visitor, owner, stranger or staff
    language: str  #: en or fa
    every: bool  #: every page with every value (else the first object and none)


#: The visitor (whose pages everyone sees) asks every page of every object in English, the
#: owner (who sees the most of them) in Persian; the others ask the first object and none.
WHO = [
    Who("visitor", "en", every=True),
    Who("visitor", "fa", every=False),
    Who("owner", "en", every=False),
    Who("owner", "fa", every=True),
    Who("stranger", "en", every=False),
    Who("stranger", "fa", every=False),
    Who("staff", "en", every=False),
    Who("staff", "fa", every=False),
]
#: Asks DRF for its browsable API, a page of its own over each route of the API.
BROWSABLE = {"HTTP_ACCEPT": "text/html"}


def requests(world: EveryKind, who: Who) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(route, path, headers) of every request ``who`` makes: each route with its values
    (every one, or the first object and none: :attr:`Who.every`), then the lists' filters.
    The API answers in English whatever the language (its JSON holds no translated words but
    its errors'): every value by the visitor and the owner in English (what the owner alone
    is shown included), the first and none by the others. The admin sends anyone but staff
    to its log-in page: every value by staff in English. DRF's browsable API (the same data
    drawn once more) is asked in English for the first object and none."""
    for route in routes():
        if route in EXCLUDED:
            continue
        filled = [_fill(route, values) for values in parameters(route, world)]
        ends = list(dict.fromkeys([filled[0], filled[-1]]))
        if route.startswith("api/"):
            every = who.language == "en" and who.name in ("visitor", "owner")
        elif route.startswith("admin/"):
            every = who.language == "en" and who.name == "staff"
        else:
            every = who.every
        for path in filled if every else ends:
            yield route, path, {}
        if route.startswith("api/") and who.language == "en":
            for path in ends:
                yield route, path, BROWSABLE
    for path in _queries(world):
        yield resolve(path.split("?")[0]).route, path, {}


def _client(who: Who, world: EveryKind) -> Client:
    client = Client(raise_request_exception=False, HTTP_ACCEPT_LANGUAGE=who.language)
    user = {"owner": world.owner, "stranger": world.stranger, "staff": world.staff}.get(who.name)
    if user is None:  # a visitor with the seat of an open game in its cookie
        client.cookies[people.SEAT_COOKIE] = world.seat_cookie
    else:
        client.force_login(user)
    return client


def _templates_strict() -> Any:
    engines = [
        {**engine, "OPTIONS": {**engine.get("OPTIONS", {}), "string_if_invalid": INVALID}}
        for engine in settings.TEMPLATES
    ]
    return override_settings(TEMPLATES=engines)


def _problem(route: str, response: Any) -> str:
    """What is wrong with an answer ('' when nothing is)."""
    if (route, response.status_code) in ANSWERS:
        return ""
    if response.status_code >= 500 or getattr(response, "exc_info", None):
        exc = response.exc_info[1] if getattr(response, "exc_info", None) else None
        return f"{response.status_code} {type(exc).__name__ if exc else ''}: {exc}"
    if not response.get("Content-Type", "").startswith("text/html"):
        return ""
    # The admin's templates and DRF's browsable API are Django's and DRF's, written for an
    # empty string in place of a variable they do not have.
    if route.startswith("admin/") or isinstance(
        getattr(response, "accepted_renderer", None), BrowsableAPIRenderer
    ):
        return ""
    missing = sorted(set(re.findall(INVALID.replace("%s", "(.*?)"), response.content.decode())))
    return f"template variables missing: {', '.join(missing)}" if missing else ""


@pytest.mark.parametrize("who", WHO, ids=lambda w: f"{w.name}-{w.language}")
def test_every_url_answers_without_a_server_error(every_kind: EveryKind, who: Who) -> None:
    client = _client(who, every_kind)
    requested: set[str] = set()
    refused: set[str] = set()  # routes that answer GET 405: for any object, before its lookup
    problems: list[str] = []
    with _templates_strict():
        for route, path, headers in requests(every_kind, who):
            assert resolve(path.split("?")[0]).route == route, (path, route)
            if route in refused:
                continue
            response = client.get(path, follow=True, **headers)
            if response.status_code == 405 and not response.redirect_chain:
                refused.add(route)
            problem = _problem(route, response)
            if problem:
                problems.append(f"{path}{' (browsable)' if headers else ''}: {problem}")
            requested.add(route)
    assert not problems, "\n".join(problems)
    every = set(routes())
    assert set(EXCLUDED) <= every, "an exclusion names a route that is gone"
    assert not every - set(EXCLUDED) - requested, sorted(every - set(EXCLUDED) - requested)
