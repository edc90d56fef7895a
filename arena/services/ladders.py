"""Ladders: entries, the built-ins as reference points, and the tables queued to keep a
ladder playing (the pairing itself is :mod:`arena.domain.pairing`: pure)."""

from __future__ import annotations

import random
import secrets
from typing import Any

from django.db import transaction
from django.db.models import Count

from arena.domain.pairing import Candidate, pair
from arena.models import (
    Bot,
    BotVersion,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
)
from arena.services import policy
from arena.services.matches import (
    SeatSpec,
    match_create,
)
from bots_sdk.builtin import BUILTIN


def ladder_join(*, ladder: Ladder, bot: Bot) -> tuple[LadderEntry, bool]:
    """Enter ``bot`` in ``ladder`` (once: entering again changes nothing); the entry and
    whether it is new."""
    policy.require_active(bot)
    return LadderEntry.objects.get_or_create(ladder=ladder, bot=bot)


@transaction.atomic
def ladder_enter(*, ladder: Ladder, bot: Bot, user: Any) -> tuple[LadderEntry, bool]:
    """The owner enters a bot in a ladder (:func:`ladder_join`: entering again changes
    nothing); the entry and whether it is new."""
    if bot.owner_id != user.pk:
        raise PermissionError("only the bot's owner enters it in a ladder")
    return ladder_join(ladder=ladder, bot=bot)


def ladder_add_builtins(*, ladder: Ladder) -> int:
    """Enter every built-in bot in the ladder (the fixed reference points); returns how many
    were missing."""
    added = 0
    for name in sorted(BUILTIN):
        _, created = LadderEntry.objects.get_or_create(ladder=ladder, builtin=name)
        added += created
    return added


def ladder_fill(*, ladder: Ladder, rng: random.Random | None = None) -> list[Match]:
    """Queue tables up to the ladder's concurrency (:func:`arena.domain.pairing.pair`: entries with
    few matches first, tables of close ratings). What sits for a bot is its active version; a
    retired bot, or one without an active version, sits out."""
    rng = rng or random.Random(secrets.randbits(64))
    in_flight = ladder.matches.filter(
        status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
    ).count()
    room = ladder.concurrency - in_flight
    if room <= 0:
        return []
    listed = list(ladder.entries.select_related("bot", "rating").order_by("pk"))
    bots = [entry.bot_id for entry in listed if entry.bot_id]
    sitting: dict[int, BotVersion] = {}
    for version in BotVersion.objects.filter(
        bot_id__in=bots, status=BotVersion.Status.ACTIVE
    ).order_by("bot_id", "number"):
        sitting[version.bot_id] = version  # (the highest number last)
    entries = {
        entry.pk: entry
        for entry in listed
        if not entry.bot_id or (not entry.bot.disabled and entry.bot_id in sitting)  # type: ignore[union-attr]
    }

    def version(entry: LadderEntry) -> BotVersion | None:
        return sitting[entry.bot_id] if entry.bot_id else None

    # Matches played by what sits now: a bot's active version (a new version is the
    # least-played, so it gets its first matches, and its own rating, at once), a built-in.
    counts = (
        MatchSeat.objects.filter(entry_id__in=entries, match__status=Match.Status.FINISHED)
        .values_list("entry_id", "version_id")
        .annotate(n=Count("id"))
    )
    played = dict.fromkeys(entries, 0)
    for entry_id, version_id, n in counts:
        sits = version(entries[entry_id])
        if version_id == (sits.pk if sits is not None else None):
            played[entry_id] = n
    candidates = [
        Candidate(key, played[key], getattr(getattr(e, "rating", None), "rating", e.live_elo))
        for key, e in entries.items()
    ]
    created = []
    for table in pair(candidates, table_size=ladder.table_size, count=room, rng=rng):
        seats = [
            SeatSpec(
                version=version(entries[key]), builtin=entries[key].builtin, entry=entries[key]
            )
            for key in table
        ]
        created.append(
            match_create(
                kind=Match.Kind.LADDER,
                seats=seats,
                rules=ladder.rules,
                hands=ladder.hands,
                ladder=ladder,
            )
        )
    return created
