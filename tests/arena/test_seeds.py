"""Deal seeds nobody can guess: drawn from the cryptographic source, stored with the match,
hidden while it is queued or running, shown once it is finished (replays and
``python -m engine verify`` need it)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from arena import selectors, services
from arena.models import Match
from arena.services import tournaments
from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from engine.record import verify

pytestmark = pytest.mark.django_db

BUILTINS = ["random", "low", "heuristic", "montecarlo"]
GOOD = (
    b"from bots_sdk import Bot, lowest\n\n\nclass Good(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n        return lowest(view.legal)\n"
)


def _started(**options: Any) -> Any:
    tournament = tournaments.tournament_create(
        name="cup",
        format="round_robin",
        bots=BUILTINS,
        table_size=4,
        hands_per_table=1,
        **options,
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    return tournament


def test_two_identical_tournaments_are_dealt_different_seeds() -> None:
    first, second = _started(games_per_table=3), _started(games_per_table=3)
    seeds = [
        list(t.matches.order_by("round", "table", "pk").values_list("seed", flat=True))
        for t in (first, second)
    ]
    assert len(seeds[0]) == len(seeds[1]) == 3
    assert not set(seeds[0]) & set(seeds[1])  # nothing derived from the public numbers
    assert len(set(seeds[0])) == 3  # each game of a table its own deal
    assert all(0 <= seed < 2**62 for seed in seeds[0] + seeds[1])


def test_duplicate_rotations_of_a_table_share_the_stored_seed() -> None:
    tournament = _started(duplicate=True, games_per_table=2)
    by_deal: dict[tuple[int, int], set[int]] = {}
    for match in tournament.matches.all():
        by_deal.setdefault((match.table, match.seed), set()).add(match.rotation)
    assert sorted(by_deal.values(), key=sorted) == [{0, 1, 2, 3}, {0, 1, 2, 3}]
    for match in tournament.matches.all():
        services.match_run(match_id=match.pk)
    rows = selectors.tournament_standings(tournament)  # paired by the stored seed
    assert [r["matches"] for r in rows] == [8, 8, 8, 8]
    assert all(r["hands"] == 8 for r in rows)


def test_match_seeds_are_drawn_fresh() -> None:
    seats = [services.SeatSpec(builtin=b) for b in BUILTINS]
    seeds = {
        services.match_create(kind=Match.Kind.CHALLENGE, seats=seats, hands=1).seed
        for _ in range(5)
    }
    assert len(seeds) == 5


def test_validation_seeds_differ_between_two_validations_of_the_same_code(settings) -> None:  # type: ignore[no-untyped-def]
    try:
        default_launcher()
    except SandboxUnavailable:
        settings.BIDEL_UNSAFE_NO_SANDBOX = True
    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    seeds = []
    for _ in range(2):
        version = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
        validated = services.version_validate(version_id=version.pk)
        assert validated.status == "active"
        found = re.search(r"\(seed (\d+)\)", validated.validation_log)
        assert found, validated.validation_log
        seeds.append(int(found.group(1)))
    assert seeds[0] != seeds[1]
    assert version.pk not in seeds  # no longer the version's id


def test_a_match_hides_its_seed_until_it_is_finished() -> None:
    seats = [services.SeatSpec(builtin=b) for b in BUILTINS]
    match = services.match_create(kind=Match.Kind.CHALLENGE, seats=seats, hands=1)
    api, web = APIClient(), Client()

    def shown() -> list[str]:
        detail = api.get(f"/api/matches/{match.pk}/")
        listed = api.get("/api/matches/")
        page = web.get(f"/matches/{match.pk}/")
        home = web.get("/")
        assert {r.status_code for r in (detail, listed, page, home)} == {200}
        assert detail.json()["seed"] == next(
            m["seed"] for m in listed.json()["results"] if m["id"] == match.pk
        )
        return [
            detail.content.decode(),
            listed.content.decode(),
            page.content.decode(),
            home.content.decode(),
        ]

    assert api.get(f"/api/matches/{match.pk}/").json()["seed"] is None
    assert not any(str(match.seed) in text for text in shown())  # queued
    services.match_claim(match_id=match.pk)
    assert not any(str(match.seed) in text for text in shown())  # running
    services.match_attempt_failed(match_id=match.pk, attempt=1, error="a platform failure")
    services.match_run(match_id=match.pk)
    assert Match.objects.get(pk=match.pk).status == Match.Status.FINISHED
    detail, listed, page, _ = shown()
    assert api.get(f"/api/matches/{match.pk}/").json()["seed"] == match.seed
    assert str(match.seed) in listed
    assert re.search(rf"seed (<span[^>]*>)?{match.seed}\b", page), "the finished match shows it"
    record = api.get(f"/api/matches/{match.pk}/record/").json()
    assert record["seed"] == match.seed and verify(record)["valid"]  # replayable by anyone
