"""A bot's words are its owner's: what a bot raises, sends or names (an exception's text, an
action that is not a card, a class of its own making) is never in what the public reads of a
match (the API's match and record, the match page, the lists, the replay), and is in what
its owner reads (the match's logs, the validation log). The public sees the fault's kind and
where it happened, in the referee's words."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from arena import services
from arena.models import BotVersion, Match, MatchSeat

pytestmark = pytest.mark.django_db

#: What each bot says once it faults: the word no public page may show.
SECRET = "LEAKWORD"

#: Each plays well through the platform's validation (two hands), then, from the third hand
#: on, faults in its own way with the secret in its words.
BOTS = {
    "raises": f"""\
from bots_sdk import Bot, lowest


class Raises(Bot):
    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        if view.hand_number >= 2:
            raise RuntimeError("{SECRET} " + " ".join(view.hand))
        return lowest(view.legal)
""",
    "named": f"""\
from bots_sdk import Bot, lowest


class {SECRET}Error(Exception):
    pass


class Named(Bot):
    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        if view.hand_number >= 2:
            raise {SECRET}Error()
        return lowest(view.legal)
""",
    "says": f"""\
from bots_sdk import Bot, lowest


class Says(Bot):
    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        if view.hand_number >= 2:
            return "{SECRET} " + view.hand[0]
        return lowest(view.legal)
""",
}


@pytest.fixture
def played() -> tuple[Any, Match]:
    """An owner of three such bots, and a finished match of theirs (with a built-in) in which
    each faulted."""
    owner = services.user_create(username="ada", password="a long pass phrase")
    seats = []
    for name, code in BOTS.items():
        bot = services.bot_create(owner=owner, name=name, join_ladders=[])
        version = services.version_upload(
            bot=bot, user=owner, filename="bot.py", data=code.encode()
        )
        version = services.version_validate(version_id=version.pk)
        assert version.status == BotVersion.Status.ACTIVE, version.validation_log
        seats.append(services.SeatSpec(version=version))
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=[*seats, services.SeatSpec(builtin="low")],
        hands=3,
        seed=5,
        requested_by=owner,
    )
    finished = services.match_run(match_id=match.pk)
    assert finished is not None and finished.status == Match.Status.FINISHED
    for seat in MatchSeat.objects.filter(match=finished).order_by("seat")[:3]:
        assert seat.faults, f"seat {seat.seat} was to fault in hand 3"
    return owner, finished


def _texts(client: Any, paths: list[str]) -> dict[str, str]:
    answers = {}
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        answers[path] = response.content.decode()
    return answers


def test_what_a_bot_said_is_in_no_public_view_of_its_match(
    played: tuple[Any, Match],
) -> None:
    owner, match = played
    bots = [seat.version.bot_id for seat in match.seats.exclude(version=None)]
    stranger = services.user_create(username="eve", password="a long pass phrase")
    staff = services.user_create(username="root", password="a long pass phrase")
    type(staff).objects.filter(pk=staff.pk).update(is_staff=True)
    paths = [
        f"/api/matches/{match.pk}/",
        f"/api/matches/{match.pk}/record/",
        "/api/matches/",
        f"/api/matches/?bot={bots[0]}",
        f"/matches/{match.pk}/",
        "/matches/",
        "/",
        *[f"/bots/{bot}/" for bot in bots],
    ]
    for who in (None, stranger, staff):
        web, api = Client(), APIClient()
        if who is not None:
            web.force_login(who)
            api.force_authenticate(who)
        for path, text in _texts(web, [p for p in paths if not p.startswith("/api/")]).items():
            assert SECRET not in text, (who, path)
        for path, text in _texts(api, [p for p in paths if p.startswith("/api/")]).items():
            assert SECRET not in text, (who, path)
    # What the public reads: the kind, where, and the referee's words for it.
    record = APIClient().get(f"/api/matches/{match.pk}/record/").json()
    faults = [seat["faults"][0] for seat in record["seats"][:3]]
    assert [(f["class"], f["hand"]) for f in faults] == [("crash", 2), ("crash", 2), ("illegal", 2)]
    assert [f["detail"] for f in faults] == [
        "the bot reported a crash",
        "the bot reported a crash",
        "sent something that is not a card",
    ]
    assert all("said" not in f for f in faults), faults


def test_its_owner_reads_what_it_said(played: tuple[Any, Match]) -> None:
    owner, match = played
    api = APIClient()
    api.force_authenticate(owner)
    logs = api.get(f"/api/matches/{match.pk}/logs/").json()
    said = {seat["bot"]: [f.get("said", "") for f in seat["faults"]] for seat in logs["seats"]}
    assert said["raises"][0].startswith(f"RuntimeError: {SECRET} "), said
    assert said["named"][0].startswith(f"{SECRET}Error"), said
    assert f"'{SECRET} " in said["says"][0], said
    page = Client()
    page.force_login(owner)
    # The owner's page of the match shows its seats' faults with what they said; the replay
    # on the same page is the public one.
    text = page.get(f"/matches/{match.pk}/").content.decode()
    assert f"RuntimeError: {SECRET}" in text
    frames = re.search(r'data-frames="([^"]*)"', text)
    assert frames is not None and SECRET not in html.unescape(frames.group(1))
