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
from collections.abc import Callable, Iterable, Mapping, Sequence
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

    @classmethod
    def from_seats(cls, seats: np.ndarray) -> tuple[History, dict[str, tuple[int, int | None]]]:
        """The history of seats as the database holds them, one row per seat ordered by
        match then seat: (match id, entry id, version id or 0, place). Each seat is named by
        :func:`rated_as`; also returned, each name's (entry id, version id).

        >>> seats = np.array([[7, 1, 30, 1], [7, 2, 0, 0], [9, 2, 0, 0], [9, 1, 31, 1]])
        >>> history, owners = History.from_seats(seats)
        >>> history.names, history.players.tolist(), owners["v31"]
        (('e2', 'v30', 'v31'), [[1, 0], [0, 2]], (1, 31))
        """
        seats = np.asarray(seats, dtype=np.int64).reshape(-1, 4)
        if len(seats) == 0:
            return cls((), np.zeros((0, 1), dtype=np.int64), np.zeros((0, 1), dtype=np.int64)), {}
        match, entry, version, place = seats.T
        # Who sat: a version by its id, a built-in's entry by its id's negative.
        key = np.where(version > 0, version, -entry)
        _, first, which = np.unique(key, return_index=True, return_inverse=True)
        owned = [(int(entry[i]), int(version[i]) if version[i] > 0 else None) for i in first]
        labels = [rated_as(e, v) for e, v in owned]
        order = sorted(range(len(labels)), key=labels.__getitem__)  # (as History.of names them)
        position = np.empty(len(labels), dtype=np.int64)
        position[order] = np.arange(len(labels))
        starts = np.flatnonzero(np.r_[True, match[1:] != match[:-1]])
        sizes = np.diff(np.r_[starts, len(match)])
        row = np.repeat(np.arange(len(starts)), sizes)
        column = np.arange(len(match)) - np.repeat(starts, sizes)
        players = np.full((len(starts), int(sizes.max())), -1, dtype=np.int64)
        places = np.zeros_like(players)
        players[row, column] = position[which]
        places[row, column] = place
        names = tuple(labels[k] for k in order)
        return cls(names, players, places), dict(zip(labels, owned, strict=True))

    def including(self, names: Iterable[str]) -> History:
        """The same history, rating ``names`` too (those yet to play).

        >>> History.of([Table(("b", "c"), (0, 1))]).including(["a"]).players.tolist()
        [[1, 2]]
        """
        known = tuple(sorted({*self.names, *names}))
        if known == self.names:
            return self
        moved = np.array([known.index(name) for name in self.names] + [-1], dtype=np.int64)
        return History(known, moved[self.players], self.places)

    def tables(self) -> list[Table]:
        """The history as tables again."""
        return [
            Table(
                tuple(self.names[i] for i in row if i >= 0),
                tuple(place for i, place in zip(row, places, strict=True) if i >= 0),
            )
            for row, places in zip(self.players.tolist(), self.places.tolist(), strict=True)
        ]

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


@dataclass
class _Point:
    """The objective at one ``theta``: its value and gradient, and each choice's
    probabilities ``p`` (zero off the field) with ``sizes · p`` (what the Hessian needs)."""

    theta: np.ndarray
    value: float
    gradient: np.ndarray
    p: np.ndarray
    weighted: np.ndarray


def _likelihood(theta: np.ndarray, events: _Events) -> _Point:
    """The log likelihood of the choices at ``theta`` (no prior)."""
    top = float(theta.max())
    strength = np.exp(theta - top)  # (a common factor: the probabilities keep)
    weights = strength[events.members] * events.field
    total = weights.sum(axis=1, keepdims=True)
    p = weights / total
    weighted = events.sizes[:, None] * p
    taken = np.bincount(events.members.ravel(), weighted.ravel(), minlength=len(theta))
    # Σ over choices of (the chosen's strengths − m · log Σ_field e^θ)
    value = float(events.wins @ theta) - float(events.sizes @ (np.log(total[:, 0]) + top))
    return _Point(theta, value, events.wins - taken, p, weighted)


def _maximise(
    theta: np.ndarray,
    evaluate: Callable[[np.ndarray], _Point],
    hessian: Callable[[_Point], np.ndarray],
    iterations: int,
) -> _Point:
    """Newton's method on a concave objective, safeguarded: a step that lowers it is halved
    until it does not (far from the top, as from a warm start on changed results, a full step
    can overshoot and diverge). The Cholesky factor of the negative Hessian is kept while the
    steps it gives shrink fast (a chord step: a pass over the history costs a fraction of
    building the Hessian, and the factor is cubic in the entries)."""
    point = evaluate(theta)
    factor, keep, previous = None, False, math.inf
    for _ in range(iterations):
        if factor is None or not keep:
            factor = linalg.cho_factor(hessian(point), lower=True)
        step = linalg.cho_solve(factor, point.gradient)
        scale = 1.0
        while True:
            candidate = evaluate(point.theta + scale * step)
            if candidate.value >= point.value - 1e-12 * abs(point.value) or scale < 1e-8:
                break
            scale /= 2
        size = scale * float(np.max(np.abs(step), initial=0.0))
        point = candidate
        if size < TOLERANCE:
            break
        keep = scale == 1.0 and size < previous / 8
        previous = size
    return point


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
    else:  # few names, many choices: a count per pair of seats, each pair once (a ≤ b)
        flat = np.zeros(n * n)
        for a, b in pairs:
            if b < a:
                continue
            index = events.members[:, a] * n + events.members[:, b]
            counted = np.bincount(index, weighted[:, a] * p[:, b], minlength=n * n)
            flat -= counted
            if a != b:  # (m p_a p_b is the same product for the seats the other way round)
                flat -= counted.reshape(n, n).T.ravel()
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

    def fold(
        self, tables: Iterable[Table] | History, *, names: Iterable[str] = (), iterations: int = 50
    ) -> Fit:
        """The fit with ``tables`` added, from this fit and them alone: the history so far
        stands in by the Gaussian it leaves on the strengths (mean ``theta``, precision
        ``hessian``: Laplace's approximation), which a full fit of the whole history matches
        to far under the printed precision while the new results are few beside the old (the
        audit, a full refit, says by how much). ``names``: more to rate (yet to play)."""
        if isinstance(tables, History):
            tables = tables.tables()
        history = History.of(tables, (*self.names, *names))
        n = len(history.names)
        place = np.array([history.names.index(name) for name in self.names], dtype=np.int64)
        mean = np.zeros(n)
        mean[place] = self.theta
        before = np.zeros((n, n))
        before[np.ix_(place, place)] = self.hessian
        new = np.setdiff1d(np.arange(n), place)
        before[new, new] = 1.0 / PRIOR_VARIANCE  # (a newcomer: the prior alone so far)
        events = _events(history)

        def evaluate(theta: np.ndarray) -> _Point:
            point = _likelihood(theta, events)
            moved = theta - mean
            point.value -= 0.5 * float(moved @ before @ moved)
            point.gradient -= before @ moved
            return point

        def curvature(point: _Point) -> np.ndarray:
            return _hessian(point.p, point.weighted, events, before)

        top = _maximise(mean.copy(), evaluate, curvature, iterations)
        counts = history.counts()
        counts[place] += self.counts
        return Fit(history.names, top.theta, curvature(top), counts)


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

    def evaluate(theta: np.ndarray) -> _Point:
        point = _likelihood(theta, events)
        point.value -= float(theta @ theta) / (2 * PRIOR_VARIANCE)
        point.gradient -= theta / PRIOR_VARIANCE
        return point

    def curvature(point: _Point) -> np.ndarray:
        return _hessian(point.p, point.weighted, events, None)

    top = _maximise(theta, evaluate, curvature, iterations)
    return Fit(history.names, top.theta, curvature(top), history.counts())


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
