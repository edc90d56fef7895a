"""Tournaments: creating, starting, advancing round by round, cancelling, repeating — and
their standings. Workflows in the style of :mod:`arena.services` (atomic, guarded by status,
harmless to run twice); the scheduling and the statistics are pure (:mod:`arena.scheduling`,
:mod:`bots_sdk.stats`)."""

from __future__ import annotations

import logging
import math
import random
import statistics
from collections import defaultdict
from datetime import datetime
from typing import Any

from croniter import CroniterBadDateError, CroniterError, croniter
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from arena import services
from arena.models import Bot, Ladder, LadderEntry, Match, MatchSeat, Tournament, TournamentEntry
from arena.scheduling import (
    default_swiss_rounds,
    head_to_head,
    round_robin_rounds,
    sprt,
    standings_order,
    swiss_round,
)
from arena.selectors import active_version
from arena.text import clean_text
from bots_sdk.builtin import BUILTIN
from bots_sdk.stats import mean_ci, points_floor

log = logging.getLogger(__name__)
MATCH_TEST_DEFAULTS = {"elo0": 0.0, "elo1": 50.0, "alpha": 0.05, "beta": 0.05, "max_deals": 400}
OPEN = [Match.Status.QUEUED, Match.Status.RUNNING]


def parse_cron(expression: str) -> str:
    """A five-field cron expression (minute hour day-of-month month day-of-week), in UTC,
    checked by croniter (standard cron: when both days are restricted, either one fires);
    returns it with its fields single-spaced."""
    fields = expression.split()
    if len(fields) != 5:
        raise ValidationError({"repeat": "a cron expression has five fields: m h dom mon dow"})
    text = " ".join(fields)
    try:
        croniter(text)
    except (CroniterError, ValueError, TypeError) as exc:
        raise ValidationError({"repeat": f"not a valid cron expression: {exc}"}) from None
    return text


def next_run(expression: str, after: datetime) -> datetime:
    """The first time the cron expression fires after ``after`` (leap days included: ``0 0 29
    2 *`` from 2030 gives 2032-02-29).

    >>> from datetime import timezone
    >>> next_run("0 0 29 2 *", datetime(2030, 1, 1, tzinfo=timezone.utc)).isoformat()
    '2032-02-29T00:00:00+00:00'
    """
    text = parse_cron(expression)
    try:
        moment: datetime = croniter(text, after).get_next(datetime)
    except CroniterBadDateError:
        raise ValidationError({"repeat": "the cron expression never fires"}) from None
    return moment


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
    """A scheduled tournament; ``bots`` are bot ids or built-in names."""
    if format not in Tournament.Format.values:
        raise ValidationError({"format": f"one of {', '.join(Tournament.Format.values)}"})
    ruleset = services.rules_within_bounds(
        rules, hands=hands_per_table, max_hands=services.TOURNAMENT_MAX_HANDS
    )
    if ruleset.players != table_size:  # (keeping every other setting chosen)
        ruleset = ruleset.with_players(table_size)
    if format == Tournament.Format.MATCH_TEST:
        if len(bots) != 2:
            raise ValidationError({"bots": "a match test is between exactly two bots"})
        duplicate = True  # a paired test needs the same deals on both sides
        params = {**MATCH_TEST_DEFAULTS, **_match_test_params(params or {})}
    elif len(bots) < table_size:
        raise ValidationError({"bots": f"{len(bots)} bots cannot fill a table of {table_size}"})
    elif params:
        raise ValidationError({"params": "only a match_test takes params (its SPRT settings)"})
    if len({str(b) for b in bots}) != len(bots):
        raise ValidationError({"bots": "each bot may be entered once"})
    if repeat:
        repeat = parse_cron(repeat)
        next_run(repeat, starts_at or timezone.now())  # (one that never fires: refused now)
    tournament = Tournament.objects.create(
        name=clean_text(name), rules=ruleset.to_spec(), format=format, table_size=table_size,
        games_per_table=games_per_table, hands_per_table=hands_per_table, duplicate=duplicate,
        ladder=ladder, starts_at=starts_at, repeat=repeat, rounds=rounds, params=params or {},
        created_by=created_by,
    )  # fmt: skip
    for value in bots:
        if isinstance(value, str) and value in BUILTIN:
            TournamentEntry.objects.create(tournament=tournament, builtin=value)
            continue
        bot = Bot.objects.filter(pk=value).first() if str(value).isdigit() else None
        if bot is None:
            raise ValidationError({"bots": f"{value!r} is neither a bot id nor a built-in"})
        if active_version(bot.pk) is None:
            raise ValidationError({"bots": f"bot {bot.name} has no active version"})
        TournamentEntry.objects.create(tournament=tournament, bot=bot)
    return tournament


#: The most deals a match test may play before it stops undecided.
MAX_DEALS = 10_000


def _match_test_params(params: dict[str, Any]) -> dict[str, Any]:
    """The SPRT's settings, checked: known names, finite numbers in range."""
    unknown = sorted(set(params) - set(MATCH_TEST_DEFAULTS))
    if unknown:
        known = ", ".join(MATCH_TEST_DEFAULTS)
        raise ValidationError({"params": f"unknown setting {unknown[0]!r}; settings: {known}"})
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValidationError({"params": f"{name} must be a number"})
        if not math.isfinite(value) or abs(value) > 10_000:
            raise ValidationError({"params": f"{name} must be a finite number within ±10000"})
    for name in ("alpha", "beta"):
        if name in params and not 0 < params[name] < 0.5:
            raise ValidationError({"params": f"{name} must lie between 0 and 0.5"})
    if "max_deals" in params:
        if (
            params["max_deals"] != int(params["max_deals"])
            or not 1 <= params["max_deals"] <= MAX_DEALS
        ):
            raise ValidationError(
                {"params": f"max_deals must be a whole number from 1 to {MAX_DEALS}"}
            )
        params = {**params, "max_deals": int(params["max_deals"])}
    return params


def _copy_for_next_edition(tournament: Tournament) -> Tournament | None:
    if not tournament.repeat or tournament.editions.exists():
        return None
    base = tournament.starts_at or timezone.now()
    edition = Tournament.objects.create(
        name=tournament.name, rules=tournament.rules, format=tournament.format,
        table_size=tournament.table_size, games_per_table=tournament.games_per_table,
        hands_per_table=tournament.hands_per_table, duplicate=tournament.duplicate,
        ladder=tournament.ladder, starts_at=next_run(tournament.repeat, base),
        repeat=tournament.repeat, params=tournament.params, edition_of=tournament,
        created_by=tournament.created_by,
    )  # fmt: skip
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
        rng = random.Random(tournament.pk)
        ids = [str(e.pk) for e in entries]
        if tournament.format == Tournament.Format.ROUND_ROBIN:
            try:
                tournament.plan = round_robin_rounds(ids, tournament.table_size, rng)
            except (ValueError, RuntimeError) as exc:  # no balanced schedule of this field
                tournament.status = Tournament.Status.FAILED
                tournament.outcome = f"failed: its rounds could not be planned: {exc}"
                tournament.finished_at = timezone.now()
                tournament.save(update_fields=["status", "outcome", "finished_at"])
                return tournament
            tournament.rounds = len(tournament.plan)
        elif tournament.format == Tournament.Format.SWISS:
            tournament.rounds = tournament.rounds or default_swiss_rounds(
                len(ids), tournament.table_size
            )
        else:
            per_round = max(1, tournament.games_per_table)
            tournament.rounds = math.ceil(tournament.params["max_deals"] / per_round)
        tournament.status = Tournament.Status.RUNNING
        tournament.started_at = timezone.now()
        tournament.save()
        _copy_for_next_edition(tournament)
        _create_round(tournament, 1)
    return tournament


def _tables_for(tournament: Tournament, number: int) -> list[list[TournamentEntry]]:
    entries = {str(e.pk): e for e in tournament.entries.all()}
    if tournament.format == Tournament.Format.ROUND_ROBIN:
        return [[entries[i] for i in table] for table in tournament.plan[number - 1]]
    if tournament.format == Tournament.Format.MATCH_TEST:
        first, second = sorted(entries.values(), key=lambda e: e.pk)
        return [[first if seat % 2 == 0 else second for seat in range(tournament.table_size)]]
    rows = tournament_standings(tournament)
    order = [str(row["entry"]) for row in rows] or list(entries)
    order += [i for i in entries if i not in order]
    history = _history(tournament)
    tables = swiss_round(
        order, tournament.table_size, history, random.Random(tournament.pk * 1000 + number)
    )
    return [[entries[i] for i in table] for table in tables]


def _history(tournament: Tournament) -> list[list[str]]:
    """The tables played so far (by entry id), one per (round, table)."""
    tables: dict[tuple[int, int], set[str]] = defaultdict(set)
    for round_number, table, entry in MatchSeat.objects.filter(
        match__tournament=tournament
    ).values_list("match__round", "match__table", "tournament_entry_id"):
        tables[(round_number, table)].add(str(entry))
    return [sorted(t) for t in tables.values()]


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
    for index, table in enumerate(_tables_for(tournament, number)):
        for _game in range(max(1, tournament.games_per_table)):
            # Drawn (never derived from public numbers), stored with each match: the
            # rotations of a duplicate table replay this one deal, and standings pair by it.
            seed = services.new_seed()
            rotations = range(tournament.table_size) if tournament.duplicate else range(1)
            for rotation in rotations:
                seated = [table[(s + rotation) % len(table)] for s in range(len(table))]
                seats = [
                    services.SeatSpec(
                        version=e.version,
                        builtin=e.builtin,
                        tournament_entry=e,
                        entry=_ladder_entry(tournament, e),
                    )  # fmt: skip
                    for e in seated
                ]
                created.append(
                    services.match_create(
                        kind=Match.Kind.TOURNAMENT,
                        seats=seats,
                        rules=tournament.rules,
                        hands=tournament.hands_per_table,
                        seed=seed,
                        ladder=tournament.ladder,
                        tournament=tournament,
                        round=number,
                        table=index,
                        rotation=rotation,
                    )  # fmt: skip
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
        if tournament.format == Tournament.Format.MATCH_TEST:
            result = match_test_result(tournament)
            if result.verdict or result.games >= tournament.params["max_deals"]:
                tournament.verdict = result.verdict or "undecided"
                tournament.outcome = match_test_outcome(tournament, result)
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
        tournament_fail(tournament_id=tournament_id,
                        reason=f"could not {what}: {type(exc).__name__}: {exc}")  # fmt: skip
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


# --- standings and the head-to-head test --------------------------------------------------------


def _finished_seats(tournament: Tournament) -> list[MatchSeat]:
    return list(
        MatchSeat.objects.filter(match__tournament=tournament, match__status=Match.Status.FINISHED)
        .select_related("match", "tournament_entry__bot", "version")
        .order_by("match_id", "seat")
    )


def tournament_crosstable(tournament: Tournament) -> dict[tuple[int, int], tuple[int, int]]:
    """:func:`arena.scheduling.head_to_head` over the tournament's finished matches, keyed by
    tournament entry id."""
    seats = MatchSeat.objects.filter(
        match__tournament=tournament, match__status=Match.Status.FINISHED
    ).values_list("match_id", "tournament_entry_id", "rank")
    tables: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for match_id, entry_id, rank in seats:
        tables[match_id].append((entry_id, rank))
    return head_to_head(tables.values())


def tournament_standings(tournament: Tournament) -> list[dict[str, Any]]:
    """Per entry: points, mean points per hand with a 95% interval (paired by deal in the
    duplicate format), matches, wins, faults; ranked by :func:`arena.scheduling.standings_order`."""
    per_deal: dict[str, dict[tuple[int, int], list[int]]] = defaultdict(lambda: defaultdict(list))
    points: dict[str, float] = defaultdict(float)
    hands: dict[str, int] = defaultdict(int)
    wins: dict[str, int] = defaultdict(int)
    matches: dict[str, set[int]] = defaultdict(set)
    faults: dict[str, int] = defaultdict(int)
    labels: dict[str, tuple[TournamentEntry, Any]] = {}
    for seat in _finished_seats(tournament):
        entry = seat.tournament_entry
        if entry is None:
            continue
        key = str(entry.pk)
        labels[key] = (entry, seat.version)
        for number, score in enumerate(seat.hand_scores):
            per_deal[key][(seat.match.seed, number)].append(score)
        points[key] += sum(seat.hand_scores)
        hands[key] += len(seat.hand_scores)
        wins[key] += seat.rank == 0
        matches[key].add(seat.match_id)  # (a bot in two seats of one match plays it once)
        faults[key] += len(seat.faults)
    rows = []
    for key in standings_order(points, wins, hands):
        values = (
            [statistics.fmean(v) for v in per_deal[key].values()]
            if tournament.duplicate
            else [score for deal in per_deal[key].values() for score in deal]
        )
        mean, ci = mean_ci(values, floor=points_floor(values))
        entry, version = labels[key]
        rows.append(
            {
                "entry": entry.pk,
                "bot": {"id": entry.bot_id, "name": entry.label},
                "version": version.number if version else None,
                "points": points[key],
                "mean_points_per_hand": round(points[key] / max(hands[key], 1), 3),
                "ci95": ci,
                "hands": hands[key],
                "matches": len(matches[key]),
                "wins": wins[key],
                "faults": faults[key],
            }
        )
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def match_test_result(tournament: Tournament) -> Any:
    """The SPRT over the deals played so far: per deal, 1 when the second entry scored fewer
    points per hand than the first across the rotations, 0.5 when equal, 0 otherwise."""
    first, second = sorted(tournament.entries.values_list("pk", flat=True))
    per_deal: dict[tuple[int, int], dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for seat in _finished_seats(tournament):
        for number, score in enumerate(seat.hand_scores):
            per_deal[(seat.match.seed, number)][seat.tournament_entry_id].append(score)  # type: ignore[index]
    scores = []
    for deal in per_deal.values():
        a, b = statistics.fmean(deal[first]), statistics.fmean(deal[second])
        scores.append(1.0 if b < a else 0.5 if a == b else 0.0)
    p = tournament.params
    return sprt(scores, p["elo0"], p["elo1"], p["alpha"], p["beta"])


def match_test_outcome(tournament: Tournament, result: Any) -> str:
    """The test's verdict in words: who is stronger, at what error rates, after how many
    deals, and the evidence (the log-likelihood ratio against its bounds)."""
    first, second = (e.label for e in tournament.entries.order_by("pk"))
    p = tournament.params
    rates = f"α={p['alpha']:g}, β={p['beta']:g}"
    evidence = (f"after {result.games} deals (log-likelihood ratio {result.llr:.2f}; "
                f"bounds {result.lower:.2f} and {result.upper:.2f})")  # fmt: skip
    if result.verdict == "H1":
        return (f"{second} is stronger than {first}: the SPRT accepted H1 (at least "
                f"{p['elo1']:g} Elo stronger) at {rates} {evidence}")  # fmt: skip
    if result.verdict == "H0":
        return (f"{second} is not stronger than {first} by more than {p['elo0']:g} Elo: the "
                f"SPRT accepted H0 at {rates} {evidence}")  # fmt: skip
    return (f"undecided between {first} and {second}: the SPRT reached neither bound within "
            f"the {p['max_deals']} deals allowed {evidence}")  # fmt: skip


def tournament_progress(tournament: Tournament) -> dict[str, int]:
    """Matches done and planned (the plan grows round by round for Swiss and match tests)."""
    done = tournament.matches.filter(
        status__in=[Match.Status.FINISHED, Match.Status.FAILED]
    ).count()
    per_round = max(1, tournament.games_per_table) * (
        tournament.table_size if tournament.duplicate else 1
    )
    if tournament.format == Tournament.Format.ROUND_ROBIN and tournament.plan:
        total = sum(len(r) for r in tournament.plan) * per_round
    elif tournament.format == Tournament.Format.SWISS:
        tables = tournament.entries.count() // tournament.table_size
        total = (tournament.rounds or 0) * tables * per_round
    else:
        total = max(tournament.matches.count(), done)
    return {"done": done, "total": max(total, done)}
