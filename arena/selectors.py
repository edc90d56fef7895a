"""Reads of the arena: the queries behind the API and the pages (query counts independent of
how many matches are stored)."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet

from arena.models import BotVersion, Ladder, LadderEntry, Match, MatchSeat


def active_version(bot_id: int) -> BotVersion | None:
    return (
        BotVersion.objects.filter(bot_id=bot_id, status=BotVersion.Status.ACTIVE)
        .order_by("-number")
        .first()
    )


def ladder_rankings(ladder: Ladder) -> list[dict[str, Any]]:
    """Entries with a fitted rating, best first (ties by live Elo, then name)."""
    entries = (
        LadderEntry.objects.filter(ladder=ladder, rating__isnull=False)
        .select_related("bot", "rating")
        .prefetch_related(
            Prefetch(
                "bot__versions",
                queryset=BotVersion.objects.filter(status=BotVersion.Status.ACTIVE),
                to_attr="active_versions",
            )
        )
    )
    rows = []
    for entry in entries:
        rating = entry.rating
        versions = getattr(entry.bot, "active_versions", []) if entry.bot else []
        rows.append(
            {
                "bot": {"id": entry.bot_id, "name": entry.label},
                "builtin": bool(entry.builtin),
                "version": versions[0].number if versions else None,
                "rating": round(rating.rating, 1),
                "ci95": [round(rating.low, 1), round(rating.high, 1)],
                "live_elo": round(entry.live_elo, 1),
                "matches": rating.matches,
            }
        )
    rows.sort(key=lambda r: (-r["rating"], -r["live_elo"], r["bot"]["name"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def matches(*, ladder: int | None = None, bot: int | None = None, status: str | None = None,
            kind: str | None = None, tournament: int | None = None) -> QuerySet[Match]:  # fmt: skip
    query = Match.objects.all().prefetch_related(
        Prefetch(
            "seats", queryset=MatchSeat.objects.select_related("version__bot").order_by("seat")
        )
    )
    if ladder is not None:
        query = query.filter(ladder_id=ladder)
    if bot is not None:
        query = query.filter(seats__version__bot_id=bot).distinct()
    if tournament is not None:
        query = query.filter(tournament_id=tournament)
    if status:
        query = query.filter(status=status)
    if kind:
        query = query.filter(kind=kind)
    return query.order_by("-id")
