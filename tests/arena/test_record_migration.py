"""Records stored before the play direction became a setting keep replaying (migration 0014):
a game of a seed-001 preset played the old way, stored naming only its preset, gets the
settings it was played under."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from arena import services
from arena.models import Match
from bots_sdk.referee.runner import run_match
from engine.record import replay, verify

pytestmark = pytest.mark.django_db
MIGRATION = importlib.import_module("arena.migrations.0014_records_keep_their_direction")


def _stored_the_old_way(preset: str, players: int, played_under: dict[str, object]) -> Match:
    """A finished match of ``preset`` played under ``played_under`` (the old reading), whose
    rules and record name only the preset and the table size, as before the setting."""
    spec = {"preset": preset, "players": players, **played_under}
    record = run_match(spec, seed=11, bots=["heuristic"] * players, hands=3).games[0].to_dict()
    old_spec = {"preset": preset, "players": players}
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=[services.SeatSpec(builtin="low")] * players,
        rules=old_spec,
        hands=3,
        seed=11,
    )
    Match.objects.filter(pk=match.pk).update(
        status=Match.Status.FINISHED, record={**record, "rules": {**old_spec, "target": 10**9}}
    )
    return Match.objects.get(pk=match.pk)


@pytest.mark.parametrize(
    ("preset", "players", "played_under"),
    [
        ("persian", 4, {"direction": "clockwise"}),
        ("hokm_40", 4, {"direction": "clockwise"}),
        ("black_lady_54", 3, {"direction": "clockwise"}),
    ],
)
def test_an_old_record_replays_after_the_migration_as_it_was_played(
    preset: str, players: int, played_under: dict[str, object]
) -> None:
    match = _stored_the_old_way(preset, players, played_under)
    assert not verify(match.record)["valid"]  # the new reading cannot replay it
    before = match.record["hands"]

    MIGRATION.forwards(apps, None)

    match.refresh_from_db()
    assert verify(match.record)["valid"]
    assert match.record["hands"] == before  # the game itself is untouched
    assert match.record["rules"]["direction"] == "clockwise" == match.rules["direction"]
    assert replay(match.record).rules.direction == "clockwise"


def test_a_record_of_the_new_reading_is_left_alone() -> None:
    new = run_match("persian", seed=3, bots=["heuristic"] * 4, hands=3).games[0].to_dict()
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        rules="persian",
        hands=3,
        seed=3,
        seats=[services.SeatSpec(builtin="low")] * 4,
    )
    Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED, record=new)
    # At five seats the old reading passed as the new one does: nothing to change.
    five = _stored_the_old_way(
        "persian", 5, {"direction": "clockwise", "pass_cycle": ["left", "right"]}
    )
    assert verify(five.record)["valid"]
    before = five.record

    MIGRATION.forwards(apps, None)

    assert Match.objects.get(pk=match.pk).record == new
    assert Match.objects.get(pk=five.pk).record == before
