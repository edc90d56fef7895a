"""Reads of the arena: the queries behind the API and the pages (query counts independent of
how many matches are stored)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Lower

from arena.models import Bot, BotVersion, Ladder, LadderEntry, Match, MatchSeat, Rating, Tournament


def active_version(bot_id: int) -> BotVersion | None:
    return (
        BotVersion.objects.filter(bot_id=bot_id, status=BotVersion.Status.ACTIVE)
        .order_by("-number")
        .first()
    )


#: A rating is provisional below this many matches or with a 95% interval wider than this.
PROVISIONAL_MATCHES = 10
PROVISIONAL_WIDTH = 400.0


def ladder_rankings(ladder: Ladder) -> list[dict[str, Any]]:
    """Every entry: those with a fitted rating first, best first (ties by live Elo, then
    name), ranked from 1; then those not rated yet (just entered: no refit since), with no
    rank, rating or interval. ``provisional`` marks a rating on few matches or with a wide
    interval (:data:`PROVISIONAL_MATCHES`, :data:`PROVISIONAL_WIDTH`)."""
    entries = (
        LadderEntry.objects.filter(ladder=ladder)
        .select_related("bot", "rating")
        .prefetch_related(
            Prefetch(
                "bot__versions",
                queryset=BotVersion.objects.filter(status=BotVersion.Status.ACTIVE).only(
                    "pk", "bot_id", "number"
                ),  # not the code: up to a MiB a bot
                to_attr="active_versions",
            )
        )
    )
    rated, unrated = [], []
    for entry in entries:
        rating = getattr(entry, "rating", None)
        versions = getattr(entry.bot, "active_versions", []) if entry.bot else []
        row: dict[str, Any] = {
            "bot": {"id": entry.bot_id, "name": entry.label},
            "builtin": bool(entry.builtin),
            "version": versions[0].number if versions else None,
            "rating": None, "ci95": None, "live_elo": round(entry.live_elo, 1), "matches": 0,
            "provisional": True, "rank": None,
        }  # fmt: skip
        if rating is None:
            unrated.append(row)
            continue
        row.update(
            rating=round(rating.rating, 1), ci95=[round(rating.low, 1), round(rating.high, 1)],
            matches=rating.matches,
            provisional=rating.matches < PROVISIONAL_MATCHES
            or rating.high - rating.low > PROVISIONAL_WIDTH,
        )  # fmt: skip
        rated.append(row)
    rated.sort(key=lambda r: (-r["rating"], -r["live_elo"], r["bot"]["name"]))
    for rank, row in enumerate(rated, 1):
        row["rank"] = rank
    unrated.sort(key=lambda r: (-r["live_elo"], r["bot"]["name"]))
    return rated + unrated


def matches(*, ladder: int | None = None, bot: int | None = None, status: str | None = None,
            kind: str | None = None, tournament: int | None = None,
            opponent: int | str | None = None) -> QuerySet[Match]:  # fmt: skip
    seats = MatchSeat.objects.select_related("version__bot").defer("stderr", "version__code")
    query = Match.objects.defer(
        "record"
    ).prefetch_related(  # lists show neither records nor logs: the bulk of a row
        Prefetch("seats", queryset=seats.order_by("seat"))
    )
    if ladder is not None:
        query = query.filter(ladder_id=ladder)
    if bot is not None:
        query = query.filter(seats__version__bot_id=bot).distinct()
    if tournament is not None:
        query = query.filter(tournament_id=tournament)
    if opponent is not None:  # another seat of the same match: a bot by id, a built-in by name
        if isinstance(opponent, int):
            query = query.filter(seats__version__bot_id=opponent).distinct()
        else:
            query = query.filter(seats__builtin=opponent).distinct()
    if status:
        query = query.filter(status=status)
    if kind:
        query = query.filter(kind=kind)
    return query.order_by("-id")


def rating_history(entry_ids: list[int], points: int = 200) -> list[tuple[Any, ...]]:
    """Each entry's rating history, oldest first, evenly thinned in the database to about
    ``points`` points (the newest and the oldest kept): (entry id, at, rating, low, high,
    matches) tuples, however long the history has grown."""
    from django.db.models import Count, F, FloatField, Q, Window
    from django.db.models.functions import Cast, Ceil, Mod, RowNumber

    from arena.models import RatingPoint

    newest_first = [F("at").desc(), F("pk").desc()]
    ranked = RatingPoint.objects.filter(entry__in=entry_ids).annotate(
        n=Window(RowNumber(), partition_by=[F("entry_id")], order_by=newest_first),
        total=Window(Count("pk"), partition_by=[F("entry_id")]),
    )
    stride = Ceil(Cast(F("total"), FloatField()) / float(points))
    rows = (
        ranked.annotate(offset=Mod(F("n") - 1, stride))
        .filter(Q(offset=0) | Q(n=F("total")))
        .order_by("entry_id", "at", "pk")
        .values_list("entry_id", "at", "rating", "low", "high", "matches")
    )
    return list(rows)


def tournaments_index(*, status: str | None = None) -> QuerySet[Tournament]:
    """Every tournament, newest first, with its field size (``entry_count``)."""
    query = Tournament.objects.annotate(entry_count=Count("entries", distinct=True))
    if status:
        query = query.filter(status=status)
    return query.order_by("-id")


def bots_index(*, search: str = "", ladder: Ladder | None = None) -> QuerySet[Bot]:
    """Bots by name (``search``: a part of the name, any case), with their owner, active
    version number and their rating, interval and matches on ``ladder`` (None where unrated)."""
    query = Bot.objects.select_related("owner").filter(disabled=False)
    if search:
        query = query.filter(name__icontains=search)
    active = BotVersion.objects.filter(bot=OuterRef("pk"), status=BotVersion.Status.ACTIVE)
    query = query.annotate(active_number=Subquery(active.values("number")[:1]))
    if ladder is not None:
        rated = Rating.objects.filter(entry__bot=OuterRef("pk"), entry__ladder=ladder)
        query = query.annotate(
            rating=Subquery(rated.values("rating")[:1]),
            rating_low=Subquery(rated.values("low")[:1]),
            rating_high=Subquery(rated.values("high")[:1]),
            rated_matches=Subquery(rated.values("matches")[:1]),
        )
    return query.order_by(Lower("name"))


def running_now() -> dict[str, int]:
    """What the platform is doing: matches running and queued, tournaments running, bots
    with an active version (three queries, whatever is stored)."""
    from django.db.models import Q

    counts = Match.objects.aggregate(
        running=Count("pk", filter=Q(status=Match.Status.RUNNING)),
        queued=Count("pk", filter=Q(status=Match.Status.QUEUED)),
    )
    return {
        **counts,
        "tournaments": Tournament.objects.filter(status=Tournament.Status.RUNNING).count(),
        "bots": Bot.objects.filter(
            disabled=False, versions__status=BotVersion.Status.ACTIVE
        ).count(),
    }
