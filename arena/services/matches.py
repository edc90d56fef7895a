"""Matches: created (ladder, challenge, tournament, a person's game), claimed under a token,
finished once, failed or queued again; the reaper of lost ones."""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext

import engine
from arena.domain.ratings import (
    places_from_scores,
)
from arena.models import (
    BotVersion,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
)
from arena.services import policy
from arena.services.messages import enqueue
from arena.services.ratings import (
    live_elo_apply,
    ratings_schedule,
)
from arena.text import clean_json, clean_text
from bots_sdk.referee.players import public_fault
from bots_sdk.referee.runner import hand_scores
from engine.record import replay
from engine.rules import RuleSet

#: A claimed match is given to another worker once its lease has passed (MATCH_LEASE_SECONDS).
LEASE_SECONDS = settings.MATCH_LEASE_SECONDS


#: A person's game outlasts a bot match: its lease (and its runner's time limit) is this
#: long, more than its person may take (HUMAN_GAME_SECONDS and HUMAN_AWAY_SECONDS) and its
#: bots (a bot match's lease) together.
HUMAN_LEASE_SECONDS = settings.HUMAN_GAME_LEASE_SECONDS


def lease_seconds(kind: str) -> int:
    """How long a claim on a match of ``kind`` holds once its runner began."""
    return HUMAN_LEASE_SECONDS if kind == Match.Kind.HUMAN else LEASE_SECONDS


#: Claims of a match before it is marked failed (platform failures only).
MAX_ATTEMPTS = 3


#: The highest target score of a match a user asks for (a challenge, a tournament): a game to
#: the target ends after at most a few dozen hands of ordinary play.
MAX_TARGET = 500


#: Hands a challenge may ask for.
CHALLENGE_MAX_HANDS = 50


#: Hands a tournament table may ask for.
TOURNAMENT_MAX_HANDS = 200


#: The largest points any one card (or the JD bonus, or the moon) may be worth in a rules
#: spec a user sends: keeps every total far inside the database's integers.
MAX_CARD_POINTS = 100


def new_seed() -> int:
    """A deal seed nobody can guess or reproduce: drawn from the operating system's
    cryptographic source, stored with the match, revealed once it is finished."""
    return secrets.randbits(62)


@dataclass(frozen=True)
class SeatSpec:
    """Who sits in a seat: a bot version, or a built-in by name (and its ladder or
    tournament entry)."""

    version: BotVersion | None = None
    builtin: str = ""
    entry: LadderEntry | None = None
    tournament_entry: Any = None
    #: A person's seat: the secret of the page that plays it, and the signed-in user if any.
    human_token: str = ""
    person: Any = None


@transaction.atomic
def match_create(
    *,
    kind: str,
    seats: list[SeatSpec],
    rules: Any = "standard",
    hands: int | None = None,
    seed: int | None = None,
    ladder: Ladder | None = None,
    requested_by: Any = None,
    tournament: Any = None,
    round: int | None = None,
    table: int | None = None,
    rotation: int = 0,
    comparison: Any = None,
) -> Match:
    policy.require_seats_active(seats)  # (every match of every kind is made here)
    ruleset = RuleSet.from_spec(rules)
    if len(seats) != ruleset.players:
        raise ValidationError(
            {
                "seats": gettext("these rules seat %(players)s players, not %(seats)s")
                % {"players": ruleset.players, "seats": len(seats)}
            }
        )
    match = Match.objects.create(
        kind=kind,
        rules=ruleset.to_spec(),
        hands=hands,
        ladder=ladder,
        requested_by=requested_by,
        tournament=tournament,
        comparison=comparison,
        round=round,
        table=table,
        rotation=rotation,
        seed=seed if seed is not None else new_seed(),
        engine_version=engine.__version__,
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(
            match=match,
            seat=i,
            version=s.version,
            builtin=s.builtin,
            entry=s.entry,
            tournament_entry=s.tournament_entry,
            human_token=s.human_token,
            person=s.person,
        )
        for i, s in enumerate(seats)
    )
    enqueue("arena.match_dispatch", match.pk)
    return match


def rules_within_bounds(rules: Any, *, hands: int | None, max_hands: int) -> Any:
    """The :class:`~engine.rules.RuleSet` of a match a user asks for, if it stays within the
    platform's bounds (a hand count, a target, card points); a ValidationError naming the
    limit otherwise. Operators' ladders are not held to them."""
    ruleset = RuleSet.from_spec(rules)
    if hands is not None and not 1 <= hands <= max_hands:
        raise ValidationError(
            {
                "hands": gettext("from 1 to %(most)s hands; not %(hands)s")
                % {"most": max_hands, "hands": hands}
            }
        )
    if ruleset.target > MAX_TARGET:
        raise ValidationError(
            {
                "rules": gettext("a target of %(target)s points is over the limit of %(limit)s")
                % {"target": ruleset.target, "limit": MAX_TARGET}
            }
        )
    points = [*ruleset.heart_points, ruleset.queen_points, ruleset.jd_bonus, ruleset.moon_amount]
    if any(abs(p) > MAX_CARD_POINTS for p in points):
        raise ValidationError(
            {
                "rules": gettext(
                    "card points, the JD bonus and the moon are limited to -%(limit)s to %(limit)s"
                )
                % {"limit": MAX_CARD_POINTS}
            }
        )
    if hands is None and not ruleset.can_score:
        # the game would play to the engine's hand cap (engine.state.MAX_HANDS) for nothing
        raise ValidationError(
            {
                "rules": gettext(
                    "no hand can add points under these rules, so a game to %(target)s never "
                    "ends: give a number of hands"
                )
                % {"target": ruleset.target}
            }
        )
    return ruleset


@transaction.atomic
def challenge_create(
    *, user: Any, seats: list[SeatSpec], rules: Any = "standard", hands: int | None = None
) -> Match:
    """A user's challenge, within the bounds (:func:`rules_within_bounds`) and within the
    user's allowance of open challenges (``CHALLENGE_MAX_OPEN`` queued or running at once)."""
    ruleset = rules_within_bounds(rules, hands=hands, max_hands=CHALLENGE_MAX_HANDS)
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one at a time
    limit = settings.CHALLENGE_MAX_OPEN
    open_now = Match.objects.filter(
        kind=Match.Kind.CHALLENGE,
        requested_by=user,
        status__in=[Match.Status.QUEUED, Match.Status.RUNNING],
    ).count()
    if open_now >= limit:
        raise ValidationError(
            gettext(
                "you have %(open)s challenges queued or running; the limit is %(limit)s: "
                "ask again when one has finished"
            )
            % {"open": open_now, "limit": limit}
        )
    return match_create(
        kind=Match.Kind.CHALLENGE, seats=seats, rules=ruleset, hands=hands, requested_by=user
    )


def human_game_create(
    *,
    user: Any,
    opponents: list[SeatSpec],
    rules: Any = "standard",
    hands: int | None = 1,
    seat: int = 0,
    seed: int | None = None,
) -> tuple[Match, str]:
    """A person's game against ``opponents`` (kind ``human``, never rated), the person in
    ``seat``; returns the match and the secret of the page that plays the seat. ``user`` is
    the signed-in user, or None for an anonymous visitor (the web's throttle limits those).
    ``seed`` is for tests only: a person who knew it could compute every hand."""
    ruleset = rules_within_bounds(rules, hands=hands, max_hands=CHALLENGE_MAX_HANDS)
    if len(opponents) + 1 != ruleset.players:
        raise ValidationError(
            {
                "opponents": gettext("these rules seat %(players)s players: choose %(count)s")
                % {"players": ruleset.players, "count": ruleset.players - 1}
            }
        )
    if not 0 <= seat < ruleset.players:
        raise ValidationError({"seat": gettext("no such seat")})
    token = secrets.token_urlsafe(24)
    person = SeatSpec(human_token=token, person=user)
    seats = [*opponents[:seat], person, *opponents[seat:]]
    match = match_create(
        kind=Match.Kind.HUMAN, seats=seats, rules=ruleset, hands=hands, requested_by=user, seed=seed
    )
    return match, token


def match_claim(*, match_id: int, claim: str = "") -> Match | None:
    """Compare-and-set: queued (or running with an expired lease) → running, attempt + 1,
    under a new claim token (a result is stored only under it)."""
    now = timezone.now()
    kind = Match.objects.filter(pk=match_id).values_list("kind", flat=True).first() or ""
    claimed = Match.objects.filter(
        Q(status=Match.Status.QUEUED) | Q(status=Match.Status.RUNNING, lease_until__lt=now),
        pk=match_id,
        attempts__lt=MAX_ATTEMPTS,
    ).update(
        status=Match.Status.RUNNING,
        attempts=F("attempts") + 1,
        lease_until=now + timedelta(seconds=lease_seconds(kind)),
        started_at=now,
        claim_token=claim,
        playing_since=None,
    )
    return Match.objects.get(pk=match_id) if claimed else None


@transaction.atomic
def match_finish(
    *,
    match_id: int,
    attempt: int,
    result: dict[str, Any],
    claim: str | None = None,
    luck: Any = None,
) -> bool:
    """Store a match's result once: only the holder of this attempt's claim (and token,
    when given) may. What the bots wrote (stderr, fault details, names) is cleaned first
    (:mod:`arena.text`). ``luck``, the runner's luck of each deal
    (:func:`bots_sdk.analysis.match_luck`), is kept per seat where it has the record's shape."""
    now = timezone.now()
    result = clean_json(result)
    holder = Q(claim_token=claim) if claim is not None else Q()
    stored = Match.objects.filter(
        holder, pk=match_id, status=Match.Status.RUNNING, attempts=attempt
    ).update(status=Match.Status.FINISHED, record=result, finished_at=now, lease_until=None)
    if not stored:
        return False  # a duplicate or stale worker: the first result stands
    totals, per_hand = result_scores(result)  # (raising, it rolls the update back)
    places = places_from_scores(totals)
    expected = luck_by_seat(luck, hands=len(result.get("hands") or []), players=len(totals))
    faulted = []
    for seat in MatchSeat.objects.filter(match_id=match_id).order_by("seat"):
        extra = result["seats"][seat.seat]
        seat.score = totals[seat.seat]
        seat.rank = places[seat.seat]
        seat.faults = [public_fault(f) for f in extra["faults"]]  # (what it said: the record's)
        seat.stderr = extra["stderr"]
        seat.hand_scores = per_hand[seat.seat]
        seat.hand_expected = expected[seat.seat] if expected else []
        valued = [value for value in seat.hand_expected if value is not None]
        seat.expected = round(sum(valued), 3) if valued else None
        seat.save(
            update_fields=[
                "score",
                "rank",
                "faults",
                "stderr",
                "hand_scores",
                "hand_expected",
                "expected",
            ]
        )
        if seat.faults:
            faulted.append(seat)
    match = Match.objects.get(pk=match_id)
    if match.kind == Match.Kind.LADDER:  # a version that faults too often is benched
        for version_id in {seat.version_id for seat in faulted if seat.version_id}:
            enqueue("arena.version_bench_check", version_id)
    if match.ladder_id and match.kind in (Match.Kind.LADDER, Match.Kind.TOURNAMENT):
        live_elo_apply(match=match)
        ratings_schedule(ladder_id=match.ladder_id)
    if match.tournament_id:
        enqueue("arena.tournament_advance", match.tournament_id)
    if match.comparison_id:
        enqueue("arena.comparison_advance", match.comparison_id)
    return True


def luck_by_seat(luck: Any, *, hands: int, players: int) -> list[list[float | None]] | None:
    """A runner's luck of each deal (a list per hand of each seat's expected points, or None
    for a hand not valued) turned to a list per seat; None unless it has exactly that shape
    with finite numbers (a reading the platform cannot trust is not kept).

    >>> luck_by_seat([[6.5, 6.5, 6.5, 6.5], None], hands=2, players=4)
    [[6.5, None], [6.5, None], [6.5, None], [6.5, None]]
    >>> luck_by_seat([[1, 2]], hands=1, players=4) is None
    True
    """
    if not isinstance(luck, list) or len(luck) != hands:
        return None
    seats: list[list[float | None]] = [[] for _ in range(players)]
    for hand in luck:
        if hand is None:
            for values in seats:
                values.append(None)
            continue
        if not isinstance(hand, list) or len(hand) != players:
            return None
        for seat, value in enumerate(hand):
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            if not math.isfinite(value) or abs(value) > 10**6:
                return None
            seats[seat].append(round(float(value), 3))
    return seats


class ScoresDisagree(ValueError):
    """A result whose scores are not those its own record gives."""


def result_scores(result: dict[str, Any]) -> tuple[list[int], list[list[int]]]:
    """A game result's totals and per-seat hand scores, as the runner sent them, audited: the
    record is replayed by the engine and must give the same (a result from before runners
    sent them is read from the replay). Raises on a record that does not replay, and
    :class:`ScoresDisagree` on scores it does not give."""
    state = replay({k: result[k] for k in ("rules", "seed", "hands") if k in result})
    totals, per_hand = list(state.totals), hand_scores(state)
    sent = (result.get("totals"), result.get("hand_scores"))
    if sent != (None, None) and sent != (totals, per_hand):
        raise ScoresDisagree(
            f"the result's scores {sent[0]} are not its record's {totals} (hand by hand "
            "or in total)"
        )
    return totals, per_hand


@transaction.atomic
def match_attempt_failed(*, match_id: int, attempt: int, error: str) -> None:
    """A platform failure: back to the queue, or failed (never rated) after MAX_ATTEMPTS."""
    match = Match.objects.select_for_update().get(pk=match_id)
    if match.status != Match.Status.RUNNING or match.attempts != attempt:
        return
    match.error = clean_text(error)[:2000]
    if match.attempts >= MAX_ATTEMPTS:
        match.status = Match.Status.FAILED
    else:
        match.status = Match.Status.QUEUED
        enqueue("arena.match_dispatch", match.pk)
    match.lease_until = None
    match.save(update_fields=["status", "error", "lease_until"])


@transaction.atomic
def match_fail(*, match_id: int, attempt: int, error: str) -> bool:
    """A match that cannot be played as given (its job was refused): failed at once, with
    the reason, never rated."""
    return bool(
        Match.objects.filter(pk=match_id, status=Match.Status.RUNNING, attempts=attempt).update(
            status=Match.Status.FAILED, error=clean_text(error)[:2000], lease_until=None
        )
    )


@transaction.atomic
def match_requeue(*, match_id: int) -> bool:
    """Operators: give a failed or stuck match a fresh set of attempts (not a finished one)."""
    updated = Match.objects.filter(
        pk=match_id, status__in=[Match.Status.FAILED, Match.Status.RUNNING, Match.Status.QUEUED]
    ).update(status=Match.Status.QUEUED, attempts=0, lease_until=None)
    if updated:
        enqueue("arena.match_dispatch", match_id)
    return bool(updated)


#: A match queued this long without a claim has its message sent again (MATCH_RESEND_SECONDS):
#: a broker that lost its queue (a restarted Redis, the embedded broker's killed worker) loses
#: no match, and a duplicate message is harmless (the claim is a compare-and-set).
RESEND_SECONDS = settings.MATCH_RESEND_SECONDS


def matches_reap() -> int:
    """Re-queue matches whose worker was lost (expired lease; failed once out of attempts),
    and send again the messages of matches queued too long and of versions waiting too long
    for their validation (a broker that failed when they were stored)."""
    now = timezone.now()
    # Only a match a runner began to play loses its claim with its lease: one still waiting
    # for a runner is sent again instead (dispatch.matches_resend), costing no attempt.
    expired = list(
        Match.objects.filter(
            status=Match.Status.RUNNING, lease_until__lt=now, playing_since__isnull=False
        ).values_list("pk", "attempts")
    )
    for match_id, attempts in expired:
        match_attempt_failed(
            match_id=match_id, attempt=attempts, error="lease expired: the worker was lost"
        )
    stale = Match.objects.filter(
        status=Match.Status.QUEUED, created_at__lt=now - timedelta(seconds=RESEND_SECONDS)
    ).values_list("pk", flat=True)
    for match_id in stale:
        enqueue("arena.match_dispatch", match_id)
    waiting = BotVersion.objects.filter(
        status=BotVersion.Status.PENDING, created_at__lt=now - timedelta(seconds=RESEND_SECONDS)
    ).values_list("pk", flat=True)
    for version_id in waiting:
        enqueue("arena.version_dispatch", version_id)
    return len(expired)
