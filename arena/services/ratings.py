"""Ratings: the live Elo after each ladder match, and the debounced refit of a ladder's
whole history (the model itself is :mod:`arena.domain.ratings`, pure)."""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import cache
from django.db import transaction

from arena.domain.ratings import (
    Table,
    fit_ratings,
    live_elo,
    rated_as,
    shown_ratings,
)
from arena.models import (
    BotVersion,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
    Rating,
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


def ladder_log(ladder: Ladder) -> tuple[list[Table], dict[str, tuple[int, int | None]]]:
    """The ladder's rated history — every finished ladder match (and match of a tournament
    that feeds it), in order, its seats as :func:`rated_as` names them — and, for each name,
    its (entry id, version id)."""
    tables = []
    owners: dict[str, tuple[int, int | None]] = {}
    matches = Match.objects.filter(
        ladder=ladder,
        kind__in=[Match.Kind.LADDER, Match.Kind.TOURNAMENT],
        status=Match.Status.FINISHED,
    )
    seats = (
        MatchSeat.objects.filter(match__in=matches)
        .order_by("match_id", "seat")
        .values_list("match_id", "entry_id", "version_id", "rank")
    )
    current: int | None = None
    players: list[str] = []
    places: list[int] = []
    for match_id, entry_id, version_id, rank in seats:
        if match_id != current and current is not None:
            tables.append(Table(tuple(players), tuple(places)))
            players, places = [], []
        current = match_id
        name = rated_as(entry_id, version_id)
        owners.setdefault(name, (entry_id, version_id))
        players.append(name)
        places.append(rank)
    if current is not None:
        tables.append(Table(tuple(players), tuple(places)))
    return tables, owners


@transaction.atomic
def ratings_recompute(*, ladder: Ladder) -> list[Rating]:
    """Refit the ladder's ratings from its whole match log (a pure function of it): every
    bot version that played is rated on its own matches alone (:class:`VersionRating`); each
    entry's :class:`Rating`, what the rankings show, is its active version's once fitted,
    else its newest fitted version's (a built-in's, its own)."""
    try:
        cache.delete(f"bidel:ratings:{ladder.pk}")  # results from now on schedule the next refit
    except Exception:  # the key expires by itself: a refit is not worth failing for it
        logger.exception(
            "the cache failed: ladder %s's debounce key stays until it expires", ladder.pk
        )
    tables, owners = ladder_log(ladder)
    builtins = ladder.entries.exclude(builtin="").values_list("pk", flat=True)
    for pk in builtins:  # (the anchors are fitted whether they have played or not)
        owners.setdefault(rated_as(pk, None), (pk, None))
    fitted = fit_ratings(tables, [rated_as(pk, None) for pk in builtins])
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
        VersionRating(**fit_of(name), fitted_on=len(tables))
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
    ratings = [Rating(**fit_of(name), fitted_on=len(tables)) for name in shown.values()]
    return Rating.objects.bulk_create(ratings)
