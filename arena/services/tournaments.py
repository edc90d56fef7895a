"""Tournaments: creating, starting, advancing round by round, cancelling, repeating. Workflows
in the style of :mod:`arena.services` (atomic, guarded by status, harmless to run twice).
What differs between formats lives in :mod:`arena.domain.formats`, the reads (standings, progress)
in :mod:`arena.selectors`, repeat schedules in :mod:`arena.domain.cron`."""

from __future__ import annotations

import logging
import random
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from arena import selectors
from arena.domain import formats
from arena.domain.cron import next_run, parse_cron
from arena.models import Bot, Ladder, LadderEntry, Match, Tournament, TournamentEntry
from arena.selectors import active_version
from arena.services import policy
from arena.services.matches import (
    TOURNAMENT_MAX_HANDS,
    SeatSpec,
    match_create,
    new_seed,
    rules_within_bounds,
)
from arena.text import clean_text
from bots_sdk.builtin import BUILTIN
from bots_sdk.ids import parse_id
from bots_sdk.referee.runner import match_games, seated

log = logging.getLogger(__name__)
OPEN = [Match.Status.QUEUED, Match.Status.RUNNING]


@transaction.atomic
def tournament_create(
    *,
    name: str,
    format: str,
    bots: list[Any],
    rules: Any = "standard",
    table_size: int = 4,
    games_per_table: int = 1,
    hands_per_table: int | None = None,
    duplicate: bool = False,
    ladder: Ladder | None = None,
    starts_at: datetime | None = None,
    repeat: str = "",
    rounds: int | None = None,
    params: dict[str, Any] | None = None,
    created_by: Any = None,
) -> Tournament:
    """A scheduled tournament of a registered format (:mod:`arena.domain.formats`); ``bots`` are bot
    ids or built-in names."""
    kind = formats.get(format)
    ruleset = rules_within_bounds(rules, hands=hands_per_table, max_hands=TOURNAMENT_MAX_HANDS)
    if ruleset.players != table_size:  # (keeping every other setting chosen)
        ruleset = ruleset.with_players(table_size)
    params = kind.check(entries=len(bots), table_size=table_size, params=params or {})
    duplicate = duplicate or kind.always_duplicate
    if len({str(b) for b in bots}) != len(bots):
        raise ValidationError({"bots": "each bot may be entered once"})
    if repeat:
        repeat = parse_cron(repeat)
        next_run(repeat, starts_at or timezone.now())  # (one that never fires: refused now)
    tournament = Tournament.objects.create(
        name=clean_text(name),
        rules=ruleset.to_spec(),
        format=format,
        table_size=table_size,
        games_per_table=games_per_table,
        hands_per_table=hands_per_table,
        duplicate=duplicate,
        ladder=ladder,
        starts_at=starts_at,
        repeat=repeat,
        rounds=rounds,
        params=params,
        created_by=created_by,
    )
    for value in bots:
        if isinstance(value, str) and value in BUILTIN:
            TournamentEntry.objects.create(tournament=tournament, builtin=value)
            continue
        found = parse_id(str(value))
        bot = Bot.objects.filter(pk=found).first() if found is not None else None
        if bot is None:
            raise ValidationError({"bots": f"{value!r} is neither a bot id nor a built-in"})
        policy.require_active(bot, "bots")
        if active_version(bot.pk) is None:
            raise ValidationError({"bots": f"bot {bot.name} has no active version"})
        TournamentEntry.objects.create(tournament=tournament, bot=bot)
    return tournament


def _copy_for_next_edition(tournament: Tournament) -> Tournament | None:
    if not tournament.repeat or tournament.editions.exists():
        return None
    base = tournament.starts_at or timezone.now()
    edition = Tournament.objects.create(
        name=tournament.name,
        rules=tournament.rules,
        format=tournament.format,
        table_size=tournament.table_size,
        games_per_table=tournament.games_per_table,
        hands_per_table=tournament.hands_per_table,
        duplicate=tournament.duplicate,
        ladder=tournament.ladder,
        starts_at=next_run(tournament.repeat, base),
        repeat=tournament.repeat,
        params=tournament.params,
        edition_of=tournament,
        created_by=tournament.created_by,
    )
    for entry in tournament.entries.all():
        TournamentEntry.objects.create(tournament=edition, bot=entry.bot, builtin=entry.builtin)
    return edition


def tournament_start(*, tournament_id: int) -> Tournament | None:
    """scheduled → running (once): freeze every bot's version, plan, play round 1."""
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.status != Tournament.Status.SCHEDULED:
            return None
        entries = list(tournament.entries.select_related("bot"))
        for entry in entries:
            if entry.bot is not None:
                entry.version = active_version(entry.bot.pk)
                if entry.version is None or entry.bot.disabled:
                    tournament.status = Tournament.Status.CANCELLED
                    tournament.outcome = (
                        f"cancelled: {entry.bot.name} has no active version"
                        if not entry.bot.disabled
                        else f"cancelled: {entry.bot.name} is disabled"
                    )
                    tournament.save(update_fields=["status", "outcome"])
                    return tournament
                entry.save(update_fields=["version"])
        try:
            formats.get(tournament.format).start(
                tournament, [str(e.pk) for e in entries], random.Random(tournament.pk)
            )
        except ValueError as exc:  # no balanced schedule of this field
            tournament.status = Tournament.Status.FAILED
            tournament.outcome = f"failed: its rounds could not be planned: {exc}"
            tournament.finished_at = timezone.now()
            tournament.save(update_fields=["status", "outcome", "finished_at"])
            return tournament
        tournament.status = Tournament.Status.RUNNING
        tournament.started_at = timezone.now()
        tournament.save()
        _copy_for_next_edition(tournament)
        _create_round(tournament, 1)
    return tournament


def _tables_for(tournament: Tournament, number: int) -> list[list[TournamentEntry]]:
    entries = {str(e.pk): e for e in list(selectors.tournament_field(tournament))}
    standing = [str(row.entry) for row in selectors.tournament_standings(tournament)]
    plan = formats.Round(
        tournament=tournament,
        number=number,
        entries=list(entries),
        standing=standing,
        history=selectors.tournament_history(tournament),
    )
    return [[entries[i] for i in table] for table in formats.get(tournament.format).tables(plan)]


def _ladder_entry(tournament: Tournament, entry: TournamentEntry) -> LadderEntry | None:
    if tournament.ladder is None:
        return None
    found, _ = LadderEntry.objects.get_or_create(
        ladder=tournament.ladder, bot=entry.bot, builtin=entry.builtin
    )
    return found


def _create_round(tournament: Tournament, number: int) -> list[Match]:
    tournament.current_round = number
    tournament.save(update_fields=["current_round"])
    created = []
    slots = match_games(tournament.table_size, tournament.games_per_table, tournament.duplicate)
    for index, table in enumerate(_tables_for(tournament, number)):
        # Drawn (never derived from public numbers), stored with each match: the rotations
        # of a duplicate table replay this one deal, and standings pair by it.
        seeds = {slot.game: new_seed() for slot in slots}
        for slot in slots:
            seats = [
                SeatSpec(
                    version=e.version,
                    builtin=e.builtin,
                    tournament_entry=e,
                    entry=_ladder_entry(tournament, e),
                )
                for e in seated(table, slot.rotation)
            ]
            created.append(
                match_create(
                    kind=Match.Kind.TOURNAMENT,
                    seats=seats,
                    rules=tournament.rules,
                    hands=tournament.hands_per_table,
                    seed=seeds[slot.game],
                    ladder=tournament.ladder,
                    tournament=tournament,
                    round=number,
                    table=index,
                    rotation=slot.rotation,
                )
            )
    return created


def tournament_advance(*, tournament_id: int) -> Tournament:
    """After matches finish: next round, a decided test, or the end. Harmless to repeat."""
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.status != Tournament.Status.RUNNING:
            return tournament
        if tournament.matches.filter(round=tournament.current_round, status__in=OPEN).exists():
            return tournament
        ending = formats.get(tournament.format).decide(
            tournament,
            list(selectors.tournament_field(tournament)),
            selectors.tournament_finished_seats(tournament),
        )
        if ending is not None:
            tournament.verdict, tournament.outcome = ending.verdict, ending.outcome
            return _finish(tournament)
        if tournament.current_round >= (tournament.rounds or 0):
            return _finish(tournament)
        _create_round(tournament, tournament.current_round + 1)
        return tournament


def _finish(tournament: Tournament) -> Tournament:
    tournament.status = Tournament.Status.FINISHED
    tournament.finished_at = timezone.now()
    tournament.save(update_fields=["status", "finished_at", "verdict", "outcome"])
    return tournament


@transaction.atomic
def tournament_cancel(*, tournament_id: int) -> Tournament:
    """Stop scheduling: the tournament is cancelled and its queued matches never run."""
    tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
    if tournament.status in (Tournament.Status.SCHEDULED, Tournament.Status.RUNNING):
        tournament.status = Tournament.Status.CANCELLED
        tournament.save(update_fields=["status"])
        tournament.matches.filter(status=Match.Status.QUEUED).update(
            status=Match.Status.FAILED, error="the tournament was cancelled"
        )
    return tournament


def tournament_fail(*, tournament_id: int, reason: str) -> Tournament:
    """A round could not be planned or advanced: the tournament ends ``failed`` with the
    reason (shown on its page), and its queued matches never run. A finished or cancelled
    tournament is left as it is."""
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.status in (Tournament.Status.SCHEDULED, Tournament.Status.RUNNING):
            tournament.status = Tournament.Status.FAILED
            tournament.outcome = clean_text(f"failed: {reason}")[:2000]
            tournament.finished_at = timezone.now()
            tournament.save(update_fields=["status", "outcome", "finished_at"])
            tournament.matches.filter(status=Match.Status.QUEUED).update(
                status=Match.Status.FAILED, error="the tournament failed"
            )
    return tournament


def _or_fail(step: Any, tournament_id: int, what: str) -> Any:
    """Run one tournament's step; a step that raises fails that tournament (said why, logged)
    instead of raising again at every tick."""
    try:
        return step(tournament_id=tournament_id)
    except Exception as exc:  # noqa: BLE001 — any error of one tournament's round ends it
        log.exception("tournament %s could not %s", tournament_id, what)
        tournament_fail(
            tournament_id=tournament_id, reason=f"could not {what}: {type(exc).__name__}: {exc}"
        )
        return None


def tournaments_tick() -> dict[str, int]:
    """Periodic: start the tournaments that are due, advance the running ones. One that
    cannot start or advance ends ``failed`` (:func:`tournament_fail`); the others go on."""
    started = advanced = 0
    due = Tournament.objects.filter(
        status=Tournament.Status.SCHEDULED, starts_at__lte=timezone.now()
    )
    for tournament_id in due.values_list("pk", flat=True):
        started += _or_fail(tournament_start, tournament_id, "start") is not None
    for tournament_id in Tournament.objects.filter(status=Tournament.Status.RUNNING).values_list(
        "pk", flat=True
    ):
        advanced += _or_fail(tournament_advance, tournament_id, "plan its next round") is not None
    return {"started": started, "advanced": advanced}
