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
from scipy import linalg

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


#: A step this small in θ (1e-10: under a millionth of an Elo point) ends the fit.
TOLERANCE = 1e-10


@dataclass(frozen=True)
class History:
    """A rated history as arrays, one row per table: ``players`` indexes ``names`` (-1 where a
    smaller table leaves a seat empty), ``places`` the finishing places (0 = first; equal
    places tie). Built once from the tables, or straight from the database's rows.

    >>> history = History.of([Table(("a", "b"), (0, 1)), Table(("b", "c", "a"), (1, 0, 1))])
    >>> history.names, history.players.tolist(), history.places.tolist()
    (('a', 'b', 'c'), [[0, 1, -1], [1, 2, 0]], [[0, 1, 0], [1, 0, 1]])
    """

    names: tuple[str, ...]
    players: np.ndarray
    places: np.ndarray

    @classmethod
    def of(cls, tables: Iterable[Table], names: Iterable[str] = ()) -> History:
        tables = list(tables)
        known = sorted({p for t in tables for p in t.players} | set(names))
        index = {name: i for i, name in enumerate(known)}
        width = max((len(t.players) for t in tables), default=1)
        players = np.full((len(tables), width), -1, dtype=np.int64)
        places = np.zeros((len(tables), width), dtype=np.int64)
        for row, table in enumerate(tables):
            players[row, : len(table.players)] = [index[p] for p in table.players]
            places[row, : len(table.places)] = table.places
        return cls(tuple(known), players, places)

    def counts(self) -> np.ndarray:
        """Rated matches per name (a seat each)."""
        seated = self.players[self.players >= 0]
        return np.bincount(seated, minlength=len(self.names))


@dataclass(frozen=True)
class _Events:
    """Every choice of the model (Breslow's form of ties: each tied group chosen together
    from all who finished no higher), as padded rows: the field still in the running
    (``members`` where ``field``: 1.0, else 0.0), and how many of it were chosen together
    (``sizes``)."""

    members: np.ndarray
    field: np.ndarray
    sizes: np.ndarray
    wins: np.ndarray  # per name: the choices it was among the chosen of


def _events(history: History) -> _Events:
    players, places = history.players, history.places
    seated = players >= 0
    width = players.shape[1]
    # A choice per distinct place of a table but its last (all that is left of the field
    # then is chosen: it tells nothing): at the first seat holding that place.
    first = seated.copy()
    for j in range(width):
        for i in range(j):
            first[:, j] &= ~(seated[:, i] & (places[:, i] == places[:, j]))
    worst = np.where(seated, places, -1).max(axis=1)
    table, seat = np.nonzero(first & (places < worst[:, None]))
    place = places[table, seat][:, None]
    field = seated[table] & (places[table] >= place)
    chosen = seated[table] & (places[table] == place)
    members = np.where(field, players[table], 0)
    wins = np.bincount(members[chosen], minlength=len(history.names)).astype(float)
    return _Events(members, field.astype(float), chosen.sum(axis=1).astype(float), wins)


def _gradient(theta: np.ndarray, events: _Events) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log posterior's gradient at ``theta``, and each choice's probabilities ``p``
    (zero off the field) with ``sizes · p``."""
    strength = np.exp(theta - theta.max())  # (a common factor: the probabilities keep)
    weights = strength[events.members] * events.field
    p = weights / weights.sum(axis=1, keepdims=True)
    weighted = events.sizes[:, None] * p
    taken = np.bincount(events.members.ravel(), weighted.ravel(), minlength=len(theta))
    return events.wins - taken - theta / PRIOR_VARIANCE, p, weighted


def _hessian(
    p: np.ndarray, weighted: np.ndarray, events: _Events, prior: np.ndarray | None
) -> np.ndarray:
    """The negative log posterior's Hessian where the choices' probabilities are ``p``:
    m (diag(p) − p pᵀ) per choice, plus ``prior`` (the prior's, 1/σ² on the diagonal, where
    None). Dense: n × n for n names; summed seat pair by seat pair (a pair's products are
    zero off the field)."""
    n = len(events.wins)
    width = events.members.shape[1]
    pairs = [(a, b) for a in range(width) for b in range(width)]
    if n * n > len(p):  # many names, few choices: one count over every pair at once
        index = np.concatenate([events.members[:, a] * n + events.members[:, b] for a, b in pairs])
        products = np.concatenate([weighted[:, a] * p[:, b] for a, b in pairs])
        flat = -np.bincount(index, products, minlength=n * n).astype(float)
    else:
        flat = np.zeros(n * n)
        for a, b in pairs:
            index = events.members[:, a] * n + events.members[:, b]
            flat -= np.bincount(index, weighted[:, a] * p[:, b], minlength=n * n)
    hessian = flat.reshape(n, n)
    hessian[np.diag_indices(n)] += np.bincount(
        events.members.ravel(), weighted.ravel(), minlength=n
    )
    if prior is None:
        hessian[np.diag_indices(n)] += 1.0 / PRIOR_VARIANCE
    else:
        hessian += prior
    return hessian


@dataclass(frozen=True)
class Fit:
    """The fitted model: each name's strength ``theta`` and the negative log posterior's
    Hessian there (its inverse is the strengths' covariance), with each name's rated
    matches. Kept, it folds new results in without the history (:meth:`fold`)."""

    names: tuple[str, ...]
    theta: np.ndarray
    hessian: np.ndarray
    counts: np.ndarray

    def ratings(self, anchors: Iterable[str], *, anchor: float = 1500.0) -> dict[str, Rating]:
        """On the Elo scale: the mean of the ``anchors`` (every name where none is fitted)
        at ``anchor``, each with its 95% interval."""
        n = len(self.names)
        if n == 0:
            return {}
        index = {name: i for i, name in enumerate(self.names)}
        ids = [index[a] for a in anchors if a in index]
        w = np.zeros(n)
        w[ids if ids else slice(None)] = 1.0 / (len(ids) if ids else n)
        factor = linalg.cho_factor(self.hessian, lower=True)
        inverse, info = linalg.lapack.dpotri(factor[0], lower=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"the Hessian's inverse failed (LAPACK info {info})")
        covariance_w = linalg.cho_solve(factor, w)
        # Var(θ_i − wᵀθ) = (H⁻¹)_ii − 2 (H⁻¹ w)_i + wᵀ H⁻¹ w
        variances = np.diag(inverse) - 2 * covariance_w + float(w @ covariance_w)
        variances[variances < 1e-12] = 0.0  # (a lone anchor's own: zero, less rounding)
        centre = float(w @ self.theta)
        result = {}
        for name, i in index.items():
            rating = anchor + ELO_PER_THETA * (float(self.theta[i]) - centre)
            half = Z95 * ELO_PER_THETA * math.sqrt(max(float(variances[i]), 0.0))
            result[name] = Rating(
                rating=round(rating, 6),
                low=round(rating - half, 6),
                high=round(rating + half, 6),
                matches=int(self.counts[i]),
            )
        return result

    def fold(self, tables: Iterable[Table], *, iterations: int = 50) -> Fit:
        """The fit with ``tables`` added, from this fit and them alone: the history so far
        stands in by the Gaussian it leaves on the strengths (mean ``theta``, precision
        ``hessian``: Laplace's approximation), which a full fit of the whole history matches
        to far under the printed precision while the new results are few beside the old (the
        audit, a full refit, says by how much)."""
        history = History.of(tables, self.names)
        n = len(history.names)
        place = np.array([history.names.index(name) for name in self.names], dtype=np.int64)
        mean = np.zeros(n)
        mean[place] = self.theta
        before = np.zeros((n, n))
        before[np.ix_(place, place)] = self.hessian
        new = np.setdiff1d(np.arange(n), place)
        before[new, new] = 1.0 / PRIOR_VARIANCE  # (a newcomer: the prior alone so far)
        events = _events(history)
        theta = mean.copy()
        for _ in range(iterations):
            gradient, p, weighted = _gradient(theta, events)
            gradient += theta / PRIOR_VARIANCE  # (the prior is in ``before`` already)
            gradient -= before @ (theta - mean)
            hessian = _hessian(p, weighted, events, before)
            step = linalg.cho_solve(linalg.cho_factor(hessian, lower=True), gradient)
            theta += step
            if float(np.max(np.abs(step), initial=0.0)) < TOLERANCE:
                break
        _, p, weighted = _gradient(theta, events)
        counts = history.counts()
        counts[place] += self.counts
        return Fit(history.names, theta, _hessian(p, weighted, events, before), counts)


def fit(history: History, *, start: Mapping[str, float] | None = None, iterations: int = 50) -> Fit:
    """The maximum a posteriori strengths of ``history`` (see the module's docstring), from
    ``start`` (θ by name: the last fit's, so a refit after a few new results takes a step or
    two; zero where not given)."""
    n = len(history.names)
    theta = np.zeros(n)
    if start:
        theta[:] = [start.get(name, 0.0) for name in history.names]
    if n == 0:
        return Fit((), theta, np.zeros((0, 0)), np.zeros(0, dtype=np.int64))
    events = _events(history)
    factor, keep, previous = None, False, math.inf
    for _ in range(iterations):
        gradient, p, weighted = _gradient(theta, events)
        if factor is None or not keep:
            factor = linalg.cho_factor(_hessian(p, weighted, events, None), lower=True)
        step = linalg.cho_solve(factor, gradient)
        theta += step
        size = float(np.max(np.abs(step)))
        if size < TOLERANCE:
            break
        # Keep the factor while the steps it gives shrink fast (a chord step: a pass over
        # the history costs a fraction of building the Hessian, and the factor is cubic).
        keep = size < previous / 8
        previous = size
    _, p, weighted = _gradient(theta, events)
    return Fit(history.names, theta, _hessian(p, weighted, events, None), history.counts())


def fit_ratings(
    tables: Iterable[Table],
    anchors: Iterable[str],
    *,
    anchor: float = 1500.0,
    iterations: int = 50,
) -> dict[str, Rating]:
    """Elo-scale Plackett–Luce ratings of every entry in ``tables`` (see the module doc)."""
    anchors = list(anchors)
    fitted = fit(History.of(tables, anchors), iterations=iterations)
    return fitted.ratings(anchors, anchor=anchor)


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
