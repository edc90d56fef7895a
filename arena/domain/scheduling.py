"""Tournament scheduling and decisions (pure; no Django): balanced round-robin tables, Swiss
rounds, and the sequential probability ratio test of head-to-head matches.

>>> rounds = round_robin_rounds([f"b{i}" for i in range(9)], 4, random.Random(1))
>>> counts = pair_counts(table for tables in rounds for table in tables)
>>> len(counts), max(counts.values()) - min(counts.values()) <= 2
(36, True)
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

Pair = frozenset[str]


def pair_counts(tables: Iterable[Sequence[str]]) -> Counter[Pair]:
    """How often each pair of players shared a table."""
    counts: Counter[Pair] = Counter()
    for table in tables:
        for a, b in itertools.combinations(table, 2):
            counts[frozenset((a, b))] += 1
    return counts


def _improve(
    tables: list[list[str]], cost: Callable[[Sequence[str]], float], sweeps: int = 100
) -> None:
    """Swap players between tables while the total cost drops (in place)."""
    for _ in range(sweeps):
        improved = False
        for i, j in itertools.combinations(range(len(tables)), 2):
            for a in range(len(tables[i])):
                for b in range(len(tables[j])):
                    first, second = tables[i][:], tables[j][:]
                    first[a], second[b] = second[b], first[a]
                    if cost(first) + cost(second) < cost(tables[i]) + cost(tables[j]) - 1e-9:
                        tables[i], tables[j] = first, second
                        improved = True
        if not improved:
            return


def _round(
    players: list[str], size: int, met: Counter[Pair], byes: Counter[str], rng: random.Random
) -> list[list[str]]:
    """One round: who sits out (those with the fewest byes so far), then tables whose pairs have met
    least (the sum of squared meetings, minimised by swaps from a random start)."""
    sitting = len(players) % size
    order = sorted(players, key=lambda p: (byes[p], rng.random()))
    out = set(order[:sitting])  # those who sat out least sit out now
    playing = [p for p in players if p not in out]
    for player in out:
        byes[player] += 1
    rng.shuffle(playing)
    tables = [playing[i : i + size] for i in range(0, len(playing), size)]

    def cost(table: Sequence[str]) -> float:
        return sum((met[frozenset((a, b))] + 1) ** 2 for a, b in itertools.combinations(table, 2))

    _improve(tables, cost)
    for table in tables:
        for a, b in itertools.combinations(table, 2):
            met[frozenset((a, b))] += 1
    return tables


def round_robin_rounds(
    players: Sequence[str],
    table_size: int,
    rng: random.Random,
    meetings: int = 1,
    attempts: int = 40,
) -> list[list[list[str]]]:
    """Rounds of tables in which every player plays the same number of tables and every pair
    of players meets at least ``meetings`` times, as evenly as can be found: no pair more
    than once more than another where the greedy search finds such a schedule (most fields),
    else the smallest spread it found. Whoever sits out a round is among those who sat out
    least, so after every ``period`` rounds all have sat out equally; schedules end on such a
    round. Several greedy schedules are tried; the most even, then the shortest, wins.

    >>> rounds = round_robin_rounds("abcde", 4, random.Random(1))
    >>> sorted(Counter(p for r in rounds for t in r for p in t).values())  # 5 at tables of 4
    [4, 4, 4, 4, 4]
    """
    players = list(players)
    if len(players) < table_size:
        raise ValueError(f"{len(players)} players cannot fill a table of {table_size}")
    all_pairs = [frozenset(p) for p in itertools.combinations(players, 2)]
    sitting = len(players) % table_size
    period = len(players) // math.gcd(len(players), sitting) if sitting else 1
    best: tuple[int, int, list[list[list[str]]]] | None = None
    for _ in range(attempts):
        met: Counter[Pair] = Counter()
        byes: Counter[str] = Counter()
        rounds: list[list[list[str]]] = []
        covered_at = None
        while len(rounds) < 10 * len(all_pairs):
            rounds.append(_round(players, table_size, met, byes, rng))
            if len(rounds) % period or min(met[p] for p in all_pairs) < meetings:
                continue
            covered_at = covered_at or len(rounds)
            spread = max(met[p] for p in all_pairs) - min(met[p] for p in all_pairs)
            if best is None or (spread, len(rounds)) < best[:2]:
                best = (spread, len(rounds), list(rounds))
            if spread <= 1 or len(rounds) >= covered_at + 2 * period:
                break
    if best is None:
        raise RuntimeError("no schedule found in which every pair meets")
    return best[2]


def default_swiss_rounds(players: int, table_size: int) -> int:
    """Enough rounds for the standings to separate: log2 of the field, at least three.

    >>> default_swiss_rounds(16, 4)
    4
    """
    return max(3, math.ceil(math.log2(max(players, 2))))


def swiss_round(
    standing: Sequence[str],
    table_size: int,
    history: Iterable[Sequence[str]],
    rng: random.Random,
    sweeps: int = 200,
) -> list[list[str]]:
    """Tables for the next Swiss round: players grouped by current standing (best first),
    then swaps between tables that reduce repeat meetings — and never leave a table that
    has been played before when another grouping avoids it."""
    players = list(standing)
    sitting = len(players) % table_size
    playing = players[: len(players) - sitting] if sitting else players
    tables = [playing[i : i + table_size] for i in range(0, len(playing), table_size)]
    met = pair_counts(history)
    seen = {frozenset(t) for t in history}
    rank = {p: i for i, p in enumerate(players)}

    def cost(table: Sequence[str]) -> float:
        repeats = sum(met[frozenset((a, b))] for a, b in itertools.combinations(table, 2))
        spread = max(rank[p] for p in table) - min(rank[p] for p in table)
        return 1000 * (frozenset(table) in seen) + 10 * repeats + spread / len(players)

    _improve(tables, cost, sweeps)
    return tables


@dataclass(frozen=True)
class SprtResult:
    """Where a sequential test stands: its log-likelihood ratio against the bounds."""

    llr: float
    lower: float
    upper: float
    games: int
    verdict: str | None  # "H1" (B is stronger by elo1), "H0" (by elo0 at most), or None


def elo_to_score(elo: float) -> float:
    """Expected score of the stronger side at an Elo difference.

    >>> round(elo_to_score(0), 3), round(elo_to_score(100), 3)
    (0.5, 0.64)
    """
    return 1.0 / (1.0 + 10 ** (-elo / 400))


def sprt(
    scores: Sequence[float], elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05
) -> SprtResult:
    """The GSPRT of chess-engine testers on per-comparison scores (1 win, 0.5 tie, 0 loss):
    H0 "B is at most elo0 stronger" against H1 "B is elo1 stronger", with a normal
    approximation of the scores' mean. Decided when the LLR leaves [ln(β/(1−α)),
    ln((1−β)/α)].

    >>> sprt([1.0] * 40, 0, 50).verdict
    'H1'
    >>> sprt([0.0, 1.0] * 200, 0, 50).verdict
    'H0'
    """
    lower = math.log(beta / (1 - alpha))
    upper = math.log((1 - beta) / alpha)
    n = len(scores)
    if n < 2:
        return SprtResult(0.0, lower, upper, n, None)
    mean = sum(scores) / n
    variance = sum((s - mean) ** 2 for s in scores) / (n - 1)
    variance = max(variance, 1e-3)  # all-equal scores still carry evidence
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    llr = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    verdict = "H1" if llr >= upper else "H0" if llr <= lower else None
    return SprtResult(round(llr, 6), round(lower, 6), round(upper, 6), n, verdict)


def standings_order(
    points: Mapping[str, float], wins: Mapping[str, int], hands: Mapping[str, int]
) -> list[str]:
    """The documented tie-break: fewer mean points per hand, then more wins, then name.

    >>> hands = {"a": 5, "b": 5, "c": 5}
    >>> standings_order({"a": 10, "b": 10, "c": 4}, {"a": 1, "b": 2, "c": 0}, hands)
    ['c', 'b', 'a']
    """
    return sorted(points, key=lambda p: (points[p] / max(hands[p], 1), -wins[p], p))


def head_to_head(
    tables: Iterable[Sequence[tuple[int, int]]],
) -> dict[tuple[int, int], tuple[int, int]]:
    """The crosstable of finished tables given as (entry, place) pairs: for each ordered pair
    of entries that shared a table, (times the first finished above the second, times met).

    >>> head_to_head([[(1, 0), (2, 1), (3, 2)], [(1, 2), (2, 0)]])[(1, 2)]
    (1, 2)
    """
    found: dict[tuple[int, int], tuple[int, int]] = {}
    for table in tables:
        for a, place_a in table:
            for b, place_b in table:
                if a != b:
                    above, met = found.get((a, b), (0, 0))
                    found[(a, b)] = (above + (place_a < place_b), met + 1)
    return found
