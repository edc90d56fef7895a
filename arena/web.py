"""Server-rendered pages for people: thin views over the selectors (the API's twins)."""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from arena import selectors
from arena.models import Bot, BotVersion, Ladder, Match, MatchSeat, Tournament
from arena.replays import replay_frames


def _recent_matches(limit: int = 20, **filters: Any) -> list[Match]:
    return list(
        Match.objects.filter(**filters)
        .prefetch_related(
            Prefetch(
                "seats", queryset=MatchSeat.objects.select_related("version__bot").order_by("seat")
            )
        )
        .order_by("-id")[:limit]
    )


def _with_bars(rows: list[dict[str, Any]], value: str) -> list[dict[str, Any]]:
    """Each row's 95% interval and value as percentages of the whole table's range (the
    interval bars)."""
    low = min((r["ci95"][0] for r in rows), default=0.0)
    high = max((r["ci95"][1] for r in rows), default=1.0)
    span = max(high - low, 1e-9)
    for row in rows:
        row["bar_left"] = round(100 * (row["ci95"][0] - low) / span, 2)
        row["bar_width"] = round(100 * (row["ci95"][1] - row["ci95"][0]) / span, 2)
        row["dot"] = round(100 * (row[value] - low) / span, 2)
    return rows


def home(request: HttpRequest) -> HttpResponse:
    ladders = [
        {"ladder": ladder, "top": selectors.ladder_rankings(ladder)[:10]}
        for ladder in Ladder.objects.filter(active=True).order_by("id")
    ]
    tournaments = Tournament.objects.filter(status__in=["running", "scheduled"]).order_by(
        "starts_at"
    )[:10]
    return render(request, "arena/home.html", {"ladders": ladders, "tournaments": tournaments,
                                               "matches": _recent_matches(10)})  # fmt: skip


def ladder_page(request: HttpRequest, ladder_id: int) -> HttpResponse:
    ladder = get_object_or_404(Ladder, pk=ladder_id)
    rows = _with_bars(selectors.ladder_rankings(ladder), "rating")
    return render(request, "arena/ladder.html", {"ladder": ladder, "rows": rows})


def bot_page(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    versions = BotVersion.objects.filter(bot=bot).order_by("-number")
    owner = request.user.is_authenticated and request.user.pk == bot.owner_id
    matches = _recent_matches(20, seats__version__bot=bot)
    return render(
        request,
        "arena/bot.html",
        {"bot": bot, "versions": versions, "owner": owner, "matches": matches},
    )


def match_page(request: HttpRequest, match_id: int) -> HttpResponse:
    match = get_object_or_404(Match, pk=match_id)
    seats = list(match.seats.select_related("version__bot").order_by("seat"))
    names = [s.version.bot.name if s.version else s.builtin for s in seats]  # type: ignore[union-attr]
    frames = None
    if match.record is not None:
        frames = replay_frames(match.record)
        frames["faults"] = [seat.get("faults", []) for seat in match.record.get("seats", [])]
    context = {"match": match, "seats": seats, "frames_json": json.dumps(frames) if frames else "",
               "names_json": json.dumps(names)}  # fmt: skip
    return render(request, "arena/match.html", context)


def tournament_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    from arena.tournaments import tournament_progress, tournament_standings

    tournament = get_object_or_404(Tournament, pk=tournament_id)
    rows = _with_bars(tournament_standings(tournament), "mean_points_per_hand")
    # Crosstable: how often the row's entry finished above the column's at the same table.
    above: dict[tuple[int, int], int] = {}
    met: dict[tuple[int, int], int] = {}
    seats = MatchSeat.objects.filter(
        match__tournament=tournament, match__status="finished"
    ).values_list("match_id", "tournament_entry_id", "rank")
    by_match: dict[int, list[tuple[int, int]]] = {}
    for match_id, entry_id, rank in seats:
        by_match.setdefault(match_id, []).append((entry_id, rank))
    for table in by_match.values():
        for a, rank_a in table:
            for b, rank_b in table:
                if a != b:
                    met[(a, b)] = met.get((a, b), 0) + 1
                    above[(a, b)] = above.get((a, b), 0) + (rank_a < rank_b)
    order = [r["entry"] for r in rows]
    crosstable = [
        {
            "row": r,
            "cells": [
                f"{above.get((r['entry'], c), 0)}/{met.get((r['entry'], c), 0)}"
                if c != r["entry"]
                else "—"
                for c in order
            ],
        }
        for r in rows
    ]
    matches = tournament.matches.order_by("round", "table", "rotation").values(
        "pk", "round", "table", "rotation", "status"
    )
    context = {
        "tournament": tournament, "rows": rows, "crosstable": crosstable, "matches": list(matches),
        "progress": tournament_progress(tournament),
        "refresh": tournament.status in ("running", "scheduled"),
    }  # fmt: skip
    return render(request, "arena/tournament.html", context)
