"""Match summaries: points per hand with 95% confidence intervals (paired by deal in the
duplicate format), wins, moons, faults by class, move times.

>>> mean_ci([1.0, 2.0, 3.0, 4.0])
(2.5, [0.446, 4.554])
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from bots_sdk.referee.players import FAULT_CLASSES

if TYPE_CHECKING:
    from bots_sdk.referee.runner import MatchResult

# Two-sided 95% quantiles of Student's t by degrees of freedom (1..30); 1.96 beyond.
_T975 = [
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
]


def mean_ci(values: list[float], floor: float | None = None) -> tuple[float, list[float]]:
    """The mean and its 95% confidence interval (Student's t), rounded to 3 places; the
    interval is cut at ``floor`` where the quantity cannot go lower (points taken: see
    :func:`points_floor`).

    >>> mean_ci([0, 0, 0, 26, 0, 1], floor=points_floor([0, 0, 0, 26, 0, 1]))
    (4.5, [0.0, 15.563])
    """
    if not values:
        return 0.0, [0.0, 0.0]
    mean = statistics.fmean(values)
    if len(values) < 2:
        return round(mean, 3), [round(mean, 3), round(mean, 3)]
    df = len(values) - 1
    t = _T975[df - 1] if df <= len(_T975) else 1.96
    half = t * statistics.stdev(values) / math.sqrt(len(values))
    low = mean - half if floor is None else max(floor, mean - half)
    return round(mean, 3), [round(low, 3), round(mean + half, 3)]


def points_floor(values: list[float]) -> float:
    """The least a mean of points per hand can be: 0, unless these rules give negative
    scores (a subtracted moon, the Omnibus jack) and some were seen.

    >>> points_floor([3, 0, 13]), points_floor([3, -10, 13])
    (0.0, -10.0)
    """
    return float(min(0.0, min(values, default=0.0)))


def reading(a: str, b: str, mean: float, ci: list[float], deals: int) -> str:
    """What a paired difference of points a hand (``a`` less ``b``, per deal) says, in words:
    points are bad in Hearts, so the bot that takes fewer is the better; an interval that holds
    0 tells neither, and the reading says how many deals might (the deals it would take for
    the interval, as wide per deal as this one, to clear the difference seen; 4 times as many
    when none is seen).

    >>> reading("v2", "v1", 3.9, [3.2, 4.6], 400)
    'v1 is better by 3.90 ± 0.70 points a hand (conclusive at 95%, over 400 deals)'
    >>> reading("me", "low", -1.5, [-2.0, -1.0], 200)
    'me is better by 1.50 ± 0.50 points a hand (conclusive at 95%, over 200 deals)'
    >>> reading("me", "low", 2.49, [-0.25, 5.23], 13)
    'inconclusive: not enough deals to tell me from low (over 13 deals): try --hands 100'
    """
    half = (ci[1] - ci[0]) / 2
    if deals > 1 and (ci[0] > 0 or ci[1] < 0):
        better = b if mean > 0 else a
        return (
            f"{better} is better by {abs(mean):.2f} ± {half:.2f} points a hand "
            f"(conclusive at 95%, over {deals} deals)"
        )
    needed = 4 * max(deals, 1)
    if abs(mean) > 1e-9 and half > 0:
        needed = max(needed // 2, math.ceil(deals * (half / abs(mean)) ** 2 * 1.2))
    return (
        f"inconclusive: not enough deals to tell {a} from {b} (over {deals} deals): "
        f"try --hands {_round_up(needed)}"
    )


def _round_up(count: int) -> int:
    """``count`` rounded up to 1, 2 or 5 times a power of ten, at least 100.

    >>> [_round_up(n) for n in (7, 101, 260, 1999, 5001)]
    [100, 200, 500, 2000, 10000]
    """
    scale = 100
    while True:
        for step in (1, 2, 5):
            if count <= step * scale:
                return step * scale
        scale *= 10


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarize(result: MatchResult) -> dict[str, Any]:
    """The summary printed by ``python -m bots_sdk play`` (and its ``--json``)."""
    names = list(dict.fromkeys(result.bots))
    # deal -> bot -> the bot's hand scores on that deal (one per seat it held there)
    by_deal: dict[tuple[int, int, int], dict[str, list[int]]] = defaultdict(
        lambda: defaultdict(list)
    )
    games: dict[str, int] = defaultdict(int)
    wins: dict[str, int] = defaultdict(int)
    moons: dict[str, int] = defaultdict(int)
    faults: dict[str, dict[str, int]] = {n: dict.fromkeys(FAULT_CLASSES, 0) for n in names}
    times: dict[str, list[float]] = defaultdict(list)
    hands: dict[str, int] = defaultdict(int)
    for game in result.games:
        state = game.state
        bots = [seat.bot for seat in game.seats]
        winners = state.winners or [s for s, t in enumerate(state.totals) if t == min(state.totals)]
        for seat, bot in enumerate(bots):
            games[bot] += 1
            wins[bot] += seat in winners
            for fault in game.seats[seat].faults:
                faults[bot][fault["class"]] += 1
            times[bot].extend(game.seats[seat].move_seconds)
        for hand in state.history:
            if hand.void:
                continue
            deal = (state.seed or 0, hand.hand_number, hand.attempt)
            for seat, bot in enumerate(bots):
                by_deal[deal][bot].append(hand.scores[seat])
                hands[bot] += 1
            if hand.shooter is not None:
                moons[bots[hand.shooter]] += 1

    def per_deal(bot: str) -> list[float]:
        return [statistics.fmean(d[bot]) for d in by_deal.values() if d.get(bot)]

    summary_bots = []
    for bot in names:
        deals = per_deal(bot)
        mean, ci = mean_ci(deals, floor=points_floor(deals))
        summary_bots.append(
            {
                "name": bot,
                "games": games[bot],
                "hands": hands[bot],
                "mean_points": mean,
                "ci95": ci,
                "wins": wins[bot],
                "win_rate": round(wins[bot] / games[bot], 3) if games[bot] else 0.0,
                "moons": moons[bot],
                "faults": faults[bot],
                "move_ms_mean": round(statistics.fmean(times[bot]) * 1000, 3)
                if times[bot]
                else 0.0,
                "move_ms_p99": round(_percentile(times[bot], 0.99) * 1000, 3),
            }
        )
    comparisons = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diffs = [
                statistics.fmean(d[a]) - statistics.fmean(d[b])
                for d in by_deal.values()
                if d.get(a) and d.get(b)
            ]
            mean, ci = mean_ci(diffs)
            conclusive = len(diffs) > 1 and (ci[0] > 0 or ci[1] < 0)
            comparisons.append(
                {
                    "a": a,
                    "b": b,
                    "mean_difference": mean,
                    "ci95": ci,
                    "deals": len(diffs),
                    "conclusive": conclusive,
                    "reading": reading(a, b, mean, ci, len(diffs)),
                }
            )
    return {
        "rules": result.rules.to_spec(),
        "seed": result.seed,
        "duplicate": result.duplicate,
        "games": len(result.games),
        "seatings": result.rules.players if result.duplicate else 1,
        "deals": len(by_deal),
        "bots": summary_bots,
        "comparisons": comparisons,
    }
