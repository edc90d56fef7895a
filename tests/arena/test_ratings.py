"""Rating math (pure): Plackett–Luce on the Elo scale with intervals, and live Elo."""

from __future__ import annotations

import math
import random
import time

import pytest

from arena.domain.ratings import (
    ELO_PER_THETA,
    Table,
    fit_ratings,
    live_elo,
    places_from_scores,
    win_probability,
)

TRUE = {
    "random": 1200.0,
    "low": 1350.0,
    "heuristic": 1600.0,
    "montecarlo": 1800.0,
    "x": 1500.0,
    "y": 1650.0,
}


def _simulate(tables: int, seed: int, size: int = 4) -> list[Table]:
    """Tables drawn from a Plackett–Luce model with the TRUE ratings."""
    rng = random.Random(seed)
    names = sorted(TRUE)
    out = []
    for _ in range(tables):
        seated = rng.sample(names, size)
        remaining = list(seated)
        order = []
        while remaining:
            weights = [math.exp(TRUE[p] / ELO_PER_THETA) for p in remaining]
            pick = rng.choices(remaining, weights)[0]
            order.append(pick)
            remaining.remove(pick)
        out.append(Table(tuple(seated), tuple(order.index(p) for p in seated)))
    return out


def _anchored_truth(anchors: list[str]) -> dict[str, float]:
    shift = 1500 - sum(TRUE[a] for a in anchors) / len(anchors)
    return {name: r + shift for name, r in TRUE.items()}


def test_recovers_known_strengths_with_honest_intervals() -> None:
    anchors = ["random", "low", "heuristic", "montecarlo"]
    truth = _anchored_truth(anchors)
    covered = total = 0
    for seed in range(6):
        ratings = fit_ratings(_simulate(600, seed), anchors)
        order = sorted(ratings, key=lambda n: ratings[n].rating)
        assert order == sorted(truth, key=truth.get), (seed, ratings)
        for name, rating in ratings.items():
            total += 1
            covered += rating.low <= truth[name] <= rating.high
        assert abs(sum(ratings[a].rating for a in anchors) / 4 - 1500) < 1e-6
    assert covered / total >= 0.85  # 95% intervals: most cover the truth


def test_pairwise_probability_matches_the_elo_formula() -> None:
    ratings = fit_ratings(_simulate(2000, 9, size=2), ["random"])
    a, b = ratings["montecarlo"].rating, ratings["heuristic"].rating
    expected = 1 / (1 + 10 ** (-(TRUE["montecarlo"] - TRUE["heuristic"]) / 400))
    assert abs(win_probability(a, b) - expected) < 0.06


def test_ties_share_places_and_change_nothing_when_symmetric() -> None:
    tables = [Table(("a", "b"), (0, 0))] * 10 + [
        Table(("a", "b"), (0, 1)),
        Table(("a", "b"), (1, 0)),
    ]
    ratings = fit_ratings(tables, ["a", "b"])
    assert ratings["a"].rating == pytest.approx(ratings["b"].rating)
    assert places_from_scores([10, 10, 3, 40]) == (1, 1, 0, 2)


def test_undefeated_entry_stays_finite_and_intervals_shrink_with_data() -> None:
    few = fit_ratings([Table(("a", "b"), (0, 1))] * 3, ["b"])
    many = fit_ratings(_simulate(1500, 3), ["random"])
    some = fit_ratings(_simulate(150, 3), ["random"])
    assert math.isfinite(few["a"].rating) and few["a"].rating > 1500
    width = lambda r: r.high - r.low  # noqa: E731
    assert width(many["montecarlo"]) < width(some["montecarlo"])


def test_fit_is_deterministic_and_order_free() -> None:
    tables = _simulate(300, 4)
    first = fit_ratings(tables, ["random"])
    assert fit_ratings(list(tables), ["random"]) == first
    assert fit_ratings(list(reversed(tables)), ["random"]).keys() == first.keys()
    shuffled = fit_ratings(list(reversed(tables)), ["random"])
    assert all(abs(shuffled[n].rating - first[n].rating) < 1e-6 for n in first)


def test_live_elo_moves_once_per_match_and_conserves_points() -> None:
    ratings: dict[str, float] = {}
    for table in _simulate(400, 5):
        before = sum(ratings.get(p, 1500.0) for p in table.players)
        ratings = live_elo(ratings, table)
        assert sum(ratings[p] for p in table.players) == pytest.approx(before)
    assert ratings["montecarlo"] > ratings["random"]


def test_ten_thousand_matches_fit_in_seconds() -> None:
    tables = _simulate(10_000, 8)
    started = time.perf_counter()
    ratings = fit_ratings(tables, ["random", "low", "heuristic", "montecarlo"])
    elapsed = time.perf_counter() - started
    assert len(ratings) == len(TRUE) and elapsed < 30
