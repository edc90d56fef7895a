"""Rating math (pure): Plackett–Luce on the Elo scale with intervals, and live Elo."""

from __future__ import annotations

import math
import random
import time

import pytest

from arena.domain.ratings import (
    ELO_PER_THETA,
    History,
    Table,
    fit,
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


#: The fit of :func:`_tied_log` by the ratings code before it was made to scale (a dense
#: Newton fit over tables as objects): the same to the printed precision, ties and mixed table
#: sizes included. Name: (rating, low, high, matches).
BEFORE = {
    "p00": (1514.1387, 1489.7852, 1538.4922, 225),
    "p01": (1485.8613, 1461.5078, 1510.2148, 232),
    "p02": (989.5572, 930.2623, 1048.8521, 252),
    "p03": (1326.9403, 1285.429, 1368.4517, 260),
    "p04": (1446.6702, 1405.299, 1488.0413, 231),
    "p05": (1435.0744, 1393.1561, 1476.9927, 221),
    "p06": (1213.6286, 1166.189, 1261.0683, 218),
    "p07": (1242.0683, 1197.1946, 1286.9419, 233),
    "p08": (1407.0458, 1366.323, 1447.7686, 248),
    "p09": (1159.7727, 1109.503, 1210.0424, 217),
    "p10": (1349.788, 1305.9861, 1393.5899, 225),
    "p11": (1072.5693, 1019.5816, 1125.557, 244),
    "p12": (1370.5484, 1327.3853, 1413.7115, 219),
    "p13": (1134.8195, 1086.0299, 1183.6091, 231),
    "p14": (1391.5411, 1349.1949, 1433.8873, 226),
    "p15": (1595.7139, 1550.1699, 1641.2579, 212),
    "p16": (1564.9356, 1520.458, 1609.4132, 218),
    "p17": (1564.3697, 1521.9759, 1606.7635, 231),
    "p18": (1118.266, 1067.8919, 1168.6401, 227),
    "p19": (1424.2063, 1381.3151, 1467.0974, 216),
    "p20": (1277.6637, 1233.2542, 1322.0732, 235),
    "p21": (1152.746, 1103.8308, 1201.6613, 245),
    "p22": (1404.6948, 1362.0937, 1447.2959, 227),
    "p23": (1491.6518, 1449.0851, 1534.2184, 236),
}


def _tied_log(seed: int = 2026, players: int = 24, tables: int = 1500) -> list[Table]:
    """Tables of two to five seats with scores that often tie (910 of these 1,500 tables)."""
    rng = random.Random(seed)
    names = [f"p{i:02d}" for i in range(players)]
    strength = {n: rng.gauss(0, 1) for n in names}
    out = []
    for _ in range(tables):
        size = rng.choice([2, 3, 4, 4, 4, 5])
        seated = rng.sample(names, size)
        scores = [round(rng.gauss(-strength[p], 1.2)) for p in seated]
        out.append(Table(tuple(seated), places_from_scores(scores)))
    return out


def test_the_fit_gives_what_the_fit_before_it_gave() -> None:
    ratings = fit_ratings(_tied_log(), ["p00", "p01"])
    assert sorted(ratings) == sorted(BEFORE)
    for name, (rating, low, high, matches) in BEFORE.items():
        got = ratings[name]
        assert got.matches == matches
        assert (got.rating, got.low, got.high) == pytest.approx((rating, low, high), abs=1e-3)


def test_entries_yet_to_play_are_rated_at_the_anchor_with_the_priors_interval() -> None:
    ratings = fit_ratings([], ["a", "b"])
    assert ratings["a"].rating == ratings["b"].rating == 1500.0 and ratings["a"].matches == 0
    assert fit_ratings([], []) == {}
    one = fit_ratings([Table(("a", "b"), (0, 1))], ["b", "c"])
    assert one["c"].matches == 0 and one["a"].rating > one["b"].rating


def test_a_warm_start_ends_where_a_cold_one_does() -> None:
    history = History.of(_tied_log())
    cold = fit(history)
    start = {name: 0.5 * theta for name, theta in zip(cold.names, cold.theta, strict=True)}
    warm = fit(history, start=start)
    assert warm.theta == pytest.approx(cold.theta, abs=1e-8)
    assert warm.ratings(["p00"]) == cold.ratings(["p00"])


def test_folding_new_results_in_matches_a_full_refit() -> None:
    past, recent = _simulate(20_000, 11), _simulate(60, 12)
    recent.append(Table(("newcomer", "random", "low", "x"), (0, 1, 2, 3)))  # a first match
    anchors = ["random", "low"]
    folded = fit(History.of(past)).fold(recent).ratings(anchors)
    full = fit_ratings(past + recent, anchors)
    assert sorted(folded) == sorted(full)
    for name, exact in full.items():
        near = folded[name]
        assert near.matches == exact.matches
        assert abs(near.rating - exact.rating) < 0.05, name  # (printed: whole points)
        assert abs(near.low - exact.low) < 0.5 and abs(near.high - exact.high) < 0.5, name
    # and the history itself was not needed: the fold saw only the new tables
    assert folded["newcomer"].matches == 1


def test_live_elo_moves_once_per_match_and_conserves_points() -> None:
    ratings: dict[str, float] = {}
    for table in _simulate(400, 5):
        before = sum(ratings.get(p, 1500.0) for p in table.players)
        ratings = live_elo(ratings, table)
        assert sum(ratings[p] for p in table.players) == pytest.approx(before)
    assert ratings["montecarlo"] > ratings["random"]


def test_ten_thousand_matches_fit_in_seconds() -> None:
    tables = _simulate(10_000, 8)
    # Its CPU time (this process's, every thread's): the work the fit takes, which a busy
    # machine's other processes do not lengthen as they do its wall time.
    started = time.process_time()
    ratings = fit_ratings(tables, ["random", "low", "heuristic", "montecarlo"])
    elapsed = time.process_time() - started
    assert len(ratings) == len(TRUE) and elapsed < 30
