"""Tournament scheduling (pure): balanced round robins, Swiss rounds, the SPRT."""

from __future__ import annotations

import itertools
import random
from datetime import UTC

import pytest

from arena.domain.scheduling import (
    default_swiss_rounds,
    elo_to_score,
    pair_counts,
    round_robin_rounds,
    sprt,
    standings_order,
    swiss_round,
)


@pytest.mark.parametrize(
    ("players", "size", "spread"),
    # pairs within one of each other where the search finds it; a field with no such even
    # schedule of a few rounds (10 at tables of 3 would need a perfect design) within two
    [(9, 4, 1), (16, 4, 1), (8, 4, 1), (5, 4, 0), (7, 5, 1), (6, 6, 0), (10, 3, 2), (7, 4, 2)],
)
def test_round_robin_every_bot_plays_as_often_and_every_pair_meets_evenly(
    players: int, size: int, spread: int
) -> None:
    names = [f"bot{i}" for i in range(players)]
    rounds = round_robin_rounds(names, size, random.Random(players))
    tables = [t for r in rounds for t in r]
    played = {name: sum(name in t for t in tables) for name in names}
    assert len(set(played.values())) == 1, played  # the same number of matches each
    counts = pair_counts(tables)
    assert set(counts) == {frozenset(p) for p in itertools.combinations(names, 2)}
    assert max(counts.values()) - min(counts.values()) <= spread
    for tables_of_round in rounds:  # nobody twice in a round; tables are full
        seated = [p for t in tables_of_round for p in t]
        assert len(seated) == len(set(seated)) and all(len(t) == size for t in tables_of_round)


def test_nine_bots_at_four_player_tables_share_byes_fairly() -> None:
    names = [f"bot{i}" for i in range(9)]
    rounds = round_robin_rounds(names, 4, random.Random(3))
    sat_out = [sorted(set(names) - {p for t in r for p in t}) for r in rounds]
    per_player = {n: sum(n in s for s in sat_out) for n in names}
    assert len(set(per_player.values())) == 1


def test_swiss_over_sixteen_bots_avoids_repeat_tables() -> None:
    names = [f"bot{i:02}" for i in range(16)]
    rng = random.Random(5)
    history: list[list[str]] = []
    standing = names[:]
    for _ in range(default_swiss_rounds(16, 4)):
        tables = swiss_round(standing, 4, history, rng)
        assert sorted(p for t in tables for p in t) == sorted(names)
        assert not {frozenset(t) for t in tables} & {frozenset(t) for t in history}
        history += tables
        rng.shuffle(standing)  # any new standing
    counts = pair_counts(history)
    assert max(counts.values()) <= 2  # repeats of pairs only where unavoidable


def test_swiss_groups_by_standing() -> None:
    names = [f"bot{i:02}" for i in range(16)]
    tables = swiss_round(names, 4, [], random.Random(1))
    assert tables[0] == names[:4] and tables[-1] == names[-4:]


def _scores(p_win: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [1.0 if rng.random() < p_win else 0.0 for _ in range(n)]


def test_sprt_finds_the_stronger_side_and_stops() -> None:
    strong = None
    scores = _scores(elo_to_score(120), 2000, 1)
    for n in range(2, len(scores)):
        result = sprt(scores[:n], elo0=0, elo1=60)
        if result.verdict:
            strong = result
            break
    assert strong is not None and strong.verdict == "H1" and strong.games < 2000
    assert sprt(_scores(0.5, 4000, 2), 0, 60).verdict == "H0"  # no difference: H0


def test_standings_tie_break_rule() -> None:
    order = standings_order(
        {"a": 10, "b": 10, "c": 10}, {"a": 0, "b": 1, "c": 1}, {"a": 5, "b": 5, "c": 5}
    )
    assert order == ["b", "c", "a"]


def test_repeat_is_standard_cron_with_leap_days_right() -> None:
    from datetime import datetime

    from django.core.exceptions import ValidationError

    from arena.domain.cron import next_run

    start = datetime(2030, 1, 1, tzinfo=UTC)
    assert next_run("0 0 29 2 *", start) == datetime(2032, 2, 29, tzinfo=UTC)
    assert next_run("30 18 * * 0", start) == datetime(2030, 1, 6, 18, 30, tzinfo=UTC)
    # standard cron: a restricted day of month OR a restricted weekday fires
    assert next_run("0 12 15 * 1", start) == datetime(2030, 1, 7, 12, tzinfo=UTC)  # Monday
    with pytest.raises(ValidationError, match="never fires"):
        next_run("0 0 31 2 *", start)
    for bad in ("someday", "61 * * * *", "0 0 32 1 *"):
        with pytest.raises(ValidationError):
            next_run(bad, start)


@pytest.mark.django_db
def test_a_repeat_that_never_fires_is_refused_at_creation() -> None:
    from django.core.exceptions import ValidationError

    from arena.services.tournaments import tournament_create

    with pytest.raises(ValidationError, match="never fires"):
        tournament_create(
            name="Never",
            format="round_robin",
            bots=["random", "low", "heuristic", "montecarlo"],
            repeat="0 0 30 2 *",
        )
