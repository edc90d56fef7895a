"""The reads the pages and the API share; above all the one rule of who reads a bot's logs."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from rest_framework.test import APIClient

from arena import selectors, services
from arena.models import BotVersion, Ladder, LadderEntry, Match, MatchSeat

pytestmark = pytest.mark.django_db


def _people() -> tuple[Any, Any, Any]:
    owner = services.user_create(username="ada", password="a long passphrase")
    other = services.user_create(username="eve", password="a long passphrase")
    staff = services.user_create(username="root", password="a long passphrase")
    staff.is_staff = True
    staff.save()
    return owner, other, staff


def test_only_the_owner_sees_a_bots_logs() -> None:
    owner, other, staff = _people()
    bot = services.bot_create(owner=owner, name="ada-bot")
    assert selectors.can_see_logs(owner, bot)
    assert not selectors.can_see_logs(other, bot)
    assert not selectors.can_see_logs(staff, bot)  # staff read the database, not the pages
    assert not selectors.can_see_logs(AnonymousUser(), bot)


def test_every_door_applies_the_one_rule() -> None:
    # The bot page, the match page and the API's version and logs: its owner reads the
    # validation log and the stderr; nobody else does, staff included.
    owner, other, staff = _people()
    bot = services.bot_create(owner=owner, name="ada-bot")
    version = BotVersion.objects.create(
        bot=bot,
        number=1,
        filename="bot.py",
        code=b"x = 1\n",
        sha256="0" * 64,
        status=BotVersion.Status.ACTIVE,
        validation_log="validated fine",
    )
    ladder = Ladder.objects.get(name="standard")
    entry = LadderEntry.objects.create(ladder=ladder, bot=bot)
    match = Match.objects.create(
        kind=Match.Kind.LADDER, status=Match.Status.FINISHED, ladder=ladder, seed=1
    )
    MatchSeat.objects.create(
        match=match,
        seat=0,
        entry=entry,
        version=version,
        rank=0,
        score=0,
        stderr="secret thoughts\n",
    )
    for seat, name in enumerate(["low", "random", "heuristic"], 1):
        MatchSeat.objects.create(match=match, seat=seat, builtin=name, rank=seat, score=seat)

    def doors(user: Any) -> dict[str, bool]:
        page, api = Client(), APIClient()
        page.force_login(user)
        api.force_authenticate(user)
        version_body = api.get(f"/api/bots/{bot.pk}/versions/1/").json()
        return {
            "bot page": "secret thoughts" in page.get(f"/bots/{bot.pk}/").content.decode(),
            "validation log": "validated fine" in page.get(f"/bots/{bot.pk}/").content.decode(),
            "match page": "secret thoughts" in page.get(f"/matches/{match.pk}/").content.decode(),
            "api version": "validation_log" in version_body,
            "api logs": bool(api.get(f"/api/matches/{match.pk}/logs/").json()["seats"]),
        }

    assert set(doors(owner).values()) == {True}, doors(owner)
    assert set(doors(other).values()) == {False}, doors(other)
    assert set(doors(staff).values()) == {False}, doors(staff)
    anonymous = Client().get(f"/bots/{bot.pk}/").content.decode()
    assert "secret thoughts" not in anonymous and "validated fine" not in anonymous


def test_lookups_of_what_a_url_names_are_404s() -> None:
    from django.http import Http404

    for lookup in (
        selectors.bot_get,
        selectors.ladder_get,
        selectors.match_get,
        selectors.tournament_get,
    ):
        with pytest.raises(Http404):
            lookup(999_999)
    assert selectors.ladder_named("nowhere") is None
    assert selectors.bot_id_named("nobody") is None
