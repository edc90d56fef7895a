"""Ratings: the live Elo after each ladder match, and the debounced refit of a ladder's
whole history (the model itself is :mod:`arena.domain.ratings`, pure)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db import connection, transaction

from arena.domain.ratings import Fit, History, Table, fit, live_elo, rated_as, shown_ratings
from arena.domain.ratings import Rating as FittedRating
from arena.models import (
    BotVersion,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
    Rating,
    RatingFit,
    RatingPoint,
    VersionRating,
)
from arena.services.messages import enqueue

logger = logging.getLogger(__name__)


#: Finished matches within this many seconds share one ratings refit.
RATINGS_DEBOUNCE_SECONDS = 5


def ratings_schedule(*, ladder_id: int) -> bool:
    """Debounced: one refit of the ladder's ratings shortly after a burst of results. A cache
    that fails neither raises nor rolls back the result being stored: the refit is sent
    without the debounce (and the next result schedules another)."""
    try:
        first = cache.add(f"bidel:ratings:{ladder_id}", True, timeout=RATINGS_DEBOUNCE_SECONDS * 4)
    except Exception:
        logger.exception("the cache failed: ladder %s's refit is scheduled undebounced", ladder_id)
        first = True
    if not first:
        return False
    enqueue("arena.ratings_recompute", ladder_id, countdown=RATINGS_DEBOUNCE_SECONDS)
    return True


@transaction.atomic
def live_elo_apply(*, match: Match) -> bool:
    """Apply a finished ladder match to the entries' live Elo, exactly once."""
    if not Match.objects.filter(pk=match.pk, live_elo_applied=False).update(live_elo_applied=True):
        return False
    seats = list(match.seats.select_related("entry").order_by("seat"))
    entries = [s.entry for s in seats]
    if any(e is None for e in entries):
        return True
    locked = {
        e.pk: e
        for e in LadderEntry.objects.select_for_update().filter(pk__in=[e.pk for e in entries])
    }  # type: ignore[union-attr]
    names = [str(e.pk) for e in entries]  # type: ignore[union-attr]
    table = Table(tuple(names), tuple(s.rank for s in seats))  # type: ignore[misc]
    after = live_elo({str(pk): e.live_elo for pk, e in locked.items()}, table)
    for pk, entry in locked.items():
        entry.live_elo = after[str(pk)]
        entry.save(update_fields=["live_elo"])
    return True


#: Ladders of up to this many participants keep their fit's Hessian (8 MB of float64 at
#: 1,000) and fold new results into it; larger ones refit from the whole history each time,
#: started from the kept strengths.
FOLD_MOST_ENTRIES = 1000
#: A refit folds the new results in while they are at most this share of those already in
#: the fit (beyond, the approximation would show in the printed ratings: a full refit)...
FOLD_SHARE = 0.001
#: ... and refits from the whole history after this many folds (the folds' small errors
#: never add up to what the ratings print).
FOLDS_BETWEEN_FULL = 100
_RATED_KINDS = (Match.Kind.LADDER, Match.Kind.TOURNAMENT)


def _rated(ladder: Ladder) -> Any:
    return Match.objects.filter(ladder=ladder, kind__in=_RATED_KINDS, status=Match.Status.FINISHED)


def _seats(matches: Any) -> np.ndarray:
    """The seats of ``matches`` as an array of (match id, entry id, version id or 0, place),
    ordered by match then seat (the order of the seats' unique index): one query, read as a
    binary COPY where the database is PostgreSQL (a million matches' seats in seconds, not as
    four million Python tuples)."""
    query = (
        MatchSeat.objects.filter(match__in=matches)
        .order_by("match_id", "seat")
        .values_list("match_id", "entry_id", "version_id", "rank")
    )
    if connection.vendor == "postgresql":
        return _copy_rows(*query.query.sql_with_params(), columns=4)
    rows = [(m, e or 0, v or 0, r or 0) for m, e, v, r in query]
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


def _copy_rows(sql: str, params: Any, *, columns: int) -> np.ndarray:
    """The rows of a query of ``columns`` whole numbers (null read as 0; each within 32 bits
    but the first, a row id) through PostgreSQL's binary COPY, as an int64 array."""
    names = ", ".join(f"c{i}" for i in range(columns))
    values = ", ".join(
        f"COALESCE(s.c{i}, 0)::{'int8' if i == 0 else 'int4'}" for i in range(columns)
    )
    copy_sql = f"COPY (SELECT {values} FROM ({sql}) AS s ({names})) TO STDOUT (FORMAT BINARY)"
    with connection.cursor() as cursor:
        literal = cursor.mogrify(copy_sql, params)  # (COPY takes no parameters)
        with cursor.copy(literal) as copy:
            data = b"".join(bytes(block) for block in copy)
    # Binary COPY: a 19-byte header, then per row a field count (int16) and per field its
    # length (int32) and value (big-endian), then a trailer (int16 -1).
    fields = [("f0", [("size", ">i4"), ("value", ">i8")])]
    fields += [(f"f{i}", [("size", ">i4"), ("value", ">i4")]) for i in range(1, columns)]
    row = np.dtype([("n", ">i2"), *fields])
    rows = np.frombuffer(data, dtype=row, offset=19, count=(len(data) - 21) // row.itemsize)
    return np.stack([rows[f"f{i}"]["value"] for i in range(columns)], axis=1).astype(np.int64)


def ladder_log(ladder: Ladder) -> tuple[list[Table], dict[str, tuple[int, int | None]]]:
    """The ladder's rated history — every finished ladder match (and match of a tournament
    that feeds it), in order, its seats as :func:`rated_as` names them — and, for each name,
    its (entry id, version id)."""
    history, owners = History.from_seats(_seats(_rated(ladder)))
    return history.tables(), owners


def _kept(row: RatingFit) -> Fit | None:
    """The kept fit, where it can be folded into (its Hessian kept)."""
    if not row.hessian:
        return None
    n = len(row.names)
    return Fit(
        tuple(name for name, _, _ in row.names),
        np.frombuffer(bytes(row.theta), dtype="<f8").copy(),
        np.frombuffer(bytes(row.hessian), dtype="<f8").reshape(n, n).copy(),
        np.frombuffer(bytes(row.counts), dtype="<i8").copy(),
    )


def _keep(
    ladder: Ladder,
    fitted: Fit,
    owners: dict[str, tuple[int, int | None]],
    tables: int,
    folds: int,
) -> None:
    small = len(fitted.names) <= FOLD_MOST_ENTRIES
    RatingFit.objects.update_or_create(
        ladder=ladder,
        defaults={
            "names": [[name, *owners[name]] for name in fitted.names],
            "theta": fitted.theta.astype("<f8").tobytes(),
            "hessian": fitted.hessian.astype("<f8").tobytes() if small else b"",
            "counts": fitted.counts.astype("<i8").tobytes(),
            "tables": tables,
            "folds": folds,
        },
    )


@transaction.atomic
def ratings_recompute(*, ladder: Ladder, full: bool = False, fresh: bool = False) -> list[Rating]:
    """Refit the ladder's ratings: every bot version that played is rated on its own
    matches alone (:class:`VersionRating`); each entry's :class:`Rating`, what the rankings
    show, is its active version's once fitted, else its newest fitted version's (a
    built-in's, its own).

    The results not yet in the kept fit (:class:`RatingFit`) are taken in: folded into it
    while they are few beside it (:data:`FOLD_SHARE`, :data:`FOLDS_BETWEEN_FULL`), else (or
    with ``full``) the whole history is fitted again, started from the kept strengths. Either
    way the ratings are a full fit's from zero to far under the printed precision
    (``recompute_ratings --check`` refits from zero, ``fresh``, and compares)."""
    try:
        cache.delete(f"bidel:ratings:{ladder.pk}")  # results from now on schedule the next refit
    except Exception:  # the key expires by itself: a refit is not worth failing for it
        logger.exception(
            "the cache failed: ladder %s's debounce key stays until it expires", ladder.pk
        )
    Ladder.objects.select_for_update().filter(pk=ladder.pk).first()  # one refit at a time
    row = RatingFit.objects.filter(ladder=ladder).first()
    kept = _kept(row) if row is not None else None
    # The results finished by now and not in the kept fit (one finishing from here on waits
    # for the next refit): folded in when few, by their ids; else all marked, and the whole
    # history read after.
    pending = _rated(ladder).filter(rated=False).order_by()
    most = 0  # the most a fold takes in (none: no fit kept, or too many folds since a full one)
    if not (full or fresh) and kept is not None and row is not None:  # (a kept fit has a row)
        most = int(FOLD_SHARE * row.tables) if row.folds < FOLDS_BETWEEN_FULL else 0
    new = list(pending.values_list("pk", flat=True)[: most + 1]) if most else []
    builtins = list(ladder.entries.exclude(builtin="").values_list("pk", flat=True))
    anchors = [rated_as(pk, None) for pk in builtins]
    owners = {rated_as(pk, None): (pk, None) for pk in builtins}
    if row is not None:
        owners.update({name: (entry, version) for name, entry, version in row.names})
    if most and len(new) <= most and kept is not None and row is not None:
        Match.objects.filter(pk__in=new).update(rated=True)
        recent, seated = History.from_seats(_seats(Match.objects.filter(pk__in=new)))
        fitted = kept.fold(recent, names=anchors)
        owners.update(seated)
        tables, folds = row.tables + len(new), row.folds + 1
    else:
        pending.update(rated=True)
        history, seated = History.from_seats(_seats(_rated(ladder).filter(rated=True)))
        owners.update(seated)
        start = None
        if row is not None and row.theta and not fresh:
            theta = np.frombuffer(bytes(row.theta), dtype="<f8").tolist()
            start = {name: value for (name, _, _), value in zip(row.names, theta, strict=True)}
        fitted = fit(history.including(anchors), start=start)
        tables, folds = len(history.players), 0
    _keep(ladder, fitted, owners, tables, folds)
    return _store(ladder, fitted.ratings(anchors), owners, tables)


def _store(
    ladder: Ladder,
    fitted: dict[str, FittedRating],
    owners: dict[str, tuple[int, int | None]],
    tables: int,
) -> list[Rating]:
    before = {
        rated_as(entry, version): matches
        for entry, version, matches in [
            *VersionRating.objects.filter(entry__ladder=ladder).values_list(
                "entry_id", "version_id", "matches"
            ),
            *Rating.objects.filter(entry__ladder=ladder, version=None).values_list(
                "entry_id", "version_id", "matches"
            ),
        ]
    }
    VersionRating.objects.filter(entry__ladder=ladder).delete()
    Rating.objects.filter(entry__ladder=ladder).delete()

    def fit_of(name: str) -> dict[str, Any]:
        entry, version = owners[name]
        r = fitted[name]
        return {
            "entry_id": entry,
            "version_id": version,
            "rating": r.rating,
            "low": r.low,
            "high": r.high,
            "matches": r.matches,
        }

    # The history gains a point for each one that has played since the last refit.
    RatingPoint.objects.bulk_create(
        RatingPoint(**fit_of(name)) for name, r in fitted.items() if before.get(name) != r.matches
    )
    VersionRating.objects.bulk_create(
        VersionRating(**fit_of(name), fitted_on=tables)
        for name in fitted
        if owners[name][1] is not None
    )
    # What each entry shows: a built-in's own fit; a bot's active version's, else its newest.
    active = set(
        BotVersion.objects.filter(
            status=BotVersion.Status.ACTIVE, bot__entries__ladder=ladder
        ).values_list("pk", flat=True)
    )
    numbers = dict(
        BotVersion.objects.filter(
            pk__in=[v for _, v in owners.values() if v is not None]
        ).values_list("pk", "number")
    )
    shown = shown_ratings(list(fitted), owners, active, numbers)
    ratings = [Rating(**fit_of(name), fitted_on=tables) for name in shown.values()]
    return Rating.objects.bulk_create(ratings)
