"""Ratings: pure functions of the match log (no Django).

``fit_ratings`` fits a Plackett–Luce model to every table's finishing order by maximum
likelihood (Newton's method) and reports it on the Elo scale: a strength θ becomes
``anchor + 400/ln 10 · θ``, so that for any two entries P(A finishes above B) =
1 / (1 + 10^(−Δ/400)) at any table size. Ties share their places (the Breslow form: each tied
player is chosen from the same remaining field). The scale is anchored by the reference
entries (the built-in bots): their mean rating is ``anchor``. Every rating has a 95% interval
from the curvature of the likelihood. A very weak Gaussian prior (σ = 10 in θ, i.e. ±1700 Elo)
keeps an entry that always won or always lost finite; it moves nothing measurable otherwise.

``live_elo`` is the classic incremental multiplayer Elo (every pair at the table, K/(n−1)),
applied once per match in match order.

>>> tables = [Table(("a", "b", "c"), (0, 1, 2))] * 30 + [Table(("a", "b", "c"), (1, 0, 2))] * 10
>>> ratings = fit_ratings(tables, anchors=["c"])
>>> [name for name in sorted(ratings, key=lambda n: -ratings[n].rating)]
['a', 'b', 'c']
>>> round(ratings["c"].rating)
1500
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

ELO_PER_THETA = 400 / math.log(10)
PRIOR_VARIANCE = 100.0  # θ ~ N(0, 10²): only keeps undefeated entries finite
Z95 = 1.959964


@dataclass(frozen=True)
class Table:
    """One rated match: the entries seated and their finishing places (0 = first; equal
    places are ties)."""

    players: tuple[str, ...]
    places: tuple[int, ...]


@dataclass(frozen=True)
class Rating:
    """A fitted rating with its 95% interval and the number of rated matches behind it."""

    rating: float
    low: float
    high: float
    matches: int


def places_from_scores(scores: Sequence[int]) -> tuple[int, ...]:
    """Finishing places from game totals (lower total finishes higher; equal totals tie).

    >>> places_from_scores([30, 12, 30, 5])
    (2, 1, 2, 0)
    """
    ordered = sorted(set(scores))
    return tuple(ordered.index(s) for s in scores)


def _groups(table: Table, index: Mapping[str, int]) -> list[list[int]]:
    by_place: dict[int, list[int]] = {}
    for player, place in zip(table.players, table.places, strict=True):
        by_place.setdefault(place, []).append(index[player])
    return [by_place[p] for p in sorted(by_place)]


def _events(
    structure: list[list[list[int]]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every "choice" of the model as padded arrays: the field still in the running
    (members, mask), how many of them were chosen together (a tied group), and who."""
    fields: list[list[int]] = []
    sizes: list[int] = []
    chosen: list[int] = []
    for groups in structure:
        remaining = [i for g in groups for i in g]
        for group in groups:
            if len(remaining) == len(group):
                break  # all that is left ties for last: contributes nothing
            fields.append(remaining)
            sizes.append(len(group))
            chosen.extend(group)
            remaining = [i for i in remaining if i not in group]
    width = max((len(f) for f in fields), default=1)
    members = np.zeros((len(fields), width), dtype=np.int64)
    mask = np.zeros((len(fields), width), dtype=bool)
    for row, field in enumerate(fields):
        members[row, : len(field)] = field
        mask[row, : len(field)] = True
    return members, mask, np.array(sizes, dtype=float), np.array(chosen, dtype=np.int64)


def fit_ratings(
    tables: Iterable[Table],
    anchors: Iterable[str],
    *,
    anchor: float = 1500.0,
    iterations: int = 50,
) -> dict[str, Rating]:
    """Elo-scale Plackett–Luce ratings of every entry in ``tables`` (see the module doc)."""
    tables = list(tables)
    anchors = list(anchors)
    names = sorted({p for t in tables for p in t.players} | set(anchors))
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    if n == 0:
        return {}
    counts = np.zeros(n, dtype=int)
    for table in tables:
        for player in table.players:
            counts[index[player]] += 1
    members, mask, sizes, chosen = _events([_groups(t, index) for t in tables])
    wins = np.bincount(chosen, minlength=n).astype(float)
    width = members.shape[1]
    rows = np.repeat(members[:, :, None], width, axis=2)[mask[:, :, None] & mask[:, None, :]]
    cols = np.repeat(members[:, None, :], width, axis=1)[mask[:, :, None] & mask[:, None, :]]
    theta = np.zeros(n)
    hessian = np.eye(n) / PRIOR_VARIANCE
    for _ in range(iterations):
        scores = np.where(mask, theta[members], -np.inf)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        p = weights / weights.sum(axis=1, keepdims=True)  # zero off the mask
        weighted = sizes[:, None] * p
        gradient = wins - theta / PRIOR_VARIANCE
        np.subtract.at(gradient, members[mask], weighted[mask])
        # Negative log posterior's Hessian: m (diag(p) - p p^T) per choice, plus the prior.
        hessian = np.eye(n) / PRIOR_VARIANCE
        np.add.at(hessian, (members[mask], members[mask]), weighted[mask])
        outer = (weighted[:, :, None] * p[:, None, :])[mask[:, :, None] & mask[:, None, :]]
        np.subtract.at(hessian, (rows, cols), outer)
        step = np.linalg.solve(hessian, gradient)
        theta += step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    covariance = np.linalg.inv(hessian)
    anchor_ids = [index[a] for a in anchors if a in index]
    weights_of_anchors = np.zeros(n)
    if anchor_ids:
        weights_of_anchors[anchor_ids] = 1.0 / len(anchor_ids)
    else:
        weights_of_anchors[:] = 1.0 / n
    centre = float(weights_of_anchors @ theta)
    result = {}
    for name, i in index.items():
        contrast = -weights_of_anchors.copy()
        contrast[i] += 1.0
        variance = float(contrast @ covariance @ contrast)
        rating = anchor + ELO_PER_THETA * (theta[i] - centre)
        half = Z95 * ELO_PER_THETA * math.sqrt(max(variance, 0.0))
        result[name] = Rating(
            rating=round(rating, 6),
            low=round(rating - half, 6),
            high=round(rating + half, 6),
            matches=int(counts[i]),
        )
    return result


def win_probability(rating_a: float, rating_b: float) -> float:
    """P(A finishes above B) on the Elo scale.

    >>> round(win_probability(1900, 1500), 3)
    0.909
    """
    return 1.0 / (1.0 + 10 ** ((rating_b - rating_a) / 400))


def live_elo(
    ratings: Mapping[str, float], table: Table, *, k: float = 32.0, start: float = 1500.0
) -> dict[str, float]:
    """The incremental multiplayer Elo after one match: every pair at the table, K/(n−1).

    >>> after = live_elo({}, Table(("a", "b"), (0, 1)))
    >>> after["a"], after["b"]
    (1516.0, 1484.0)
    """
    current = {p: ratings.get(p, start) for p in table.players}
    n = len(table.players)
    updated = dict(ratings)
    for i, player in enumerate(table.players):
        change = 0.0
        for j, other in enumerate(table.players):
            if i == j:
                continue
            mine, theirs = table.places[i], table.places[j]
            actual = 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
            change += actual - win_probability(current[player], current[other])
        updated[player] = current[player] + k / (n - 1) * change
    return updated


# --- who is rated: a bot version apiece ------------------------------------------------------


def rated_as(entry_id: int, version_id: int | None) -> str:
    """Who a seat of a rated match is in the fit: the bot version that played (each version
    its own participant, rated on its own matches alone), or a built-in's ladder entry.

    >>> rated_as(7, 31), rated_as(2, None)
    ('v31', 'e2')
    """
    return f"v{version_id}" if version_id is not None else f"e{entry_id}"


def shown_ratings(
    fitted: Iterable[str],
    owners: Mapping[str, tuple[int, int | None]],
    active: set[int],
    numbers: Mapping[int, int],
) -> dict[int, str]:
    """Which fit each ladder entry shows in the rankings, by entry id: a built-in's own; a
    bot's active version's once fitted, else its newest fitted version's. ``owners`` gives
    each fitted name's (entry id, version id), ``active`` the active versions' ids,
    ``numbers`` each version's number.

    >>> owners = {"v1": (5, 1), "v2": (5, 2), "v3": (5, 3), "e9": (9, None)}
    >>> shown_ratings(["v1", "v2", "e9"], owners, active={3}, numbers={1: 1, 2: 2, 3: 3})
    {5: 'v2', 9: 'e9'}
    >>> shown_ratings(["v1", "v2", "v3"], owners, active={1}, numbers={1: 1, 2: 2, 3: 3})
    {5: 'v1'}
    """

    def rank(name: str) -> tuple[bool, int]:
        version = owners[name][1]
        if version is None:
            return (True, 0)
        return (version in active, numbers.get(version, 0))

    shown: dict[int, str] = {}
    for name in fitted:
        entry = owners[name][0]
        if entry not in shown or rank(name) > rank(shown[entry]):
            shown[entry] = name
    return shown
