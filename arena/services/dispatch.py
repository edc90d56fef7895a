"""Dispatch: the platform's side of the runner tier. Claim work, send it to the runners as a
self-contained job (:mod:`bots_sdk.referee.jobs`), and store what comes back — once, and only under
the claim that sent it.

A platform worker (database, no bots) claims a match or a new version's validation with a
fresh claim token, and sends ``runner.play`` with the job after the claim commits. A runner
(no database, no secrets) plays it and sends ``arena.job_finished`` with the result and the
token. :func:`job_store` stores it only if the claim still holds: a result from a runner that
was presumed lost, a duplicate, or a forged one (wrong token, another match's game) changes
nothing.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from arena import selectors
from arena.models import Analysis, BotVersion, Match
from arena.services import matches
from arena.services.bots import VALIDATION_HANDS, VALIDATORS, version_settle
from arena.services.matches import (
    HUMAN_LEASE_SECONDS,
    lease_seconds,
    match_attempt_failed,
    match_claim,
    match_fail,
    match_finish,
    new_seed,
)
from arena.services.messages import send
from arena.text import clean_text
from bots_sdk.analysis import MAX_SAMPLES, METHOD, AnalysisJob, run_analysis, with_luck
from bots_sdk.referee.jobs import Job, JobResult, run_job
from bots_sdk.referee.participants import Participant
from bots_sdk.referee.players import Fault, PersonLimits
from bots_sdk.referee.runner import TimeControl, without_target
from engine.rules import RuleSet
from hearts_runner import live
from hearts_runner.config import PEOPLE_QUEUE

logger = logging.getLogger(__name__)

#: The clock of every platform match and validation: the runner's default.
CLOCK = TimeControl()
#: A validation no runner has answered in this long ends rejected, saying so.
VALIDATION_TIMEOUT = settings.VALIDATION_TIMEOUT_SECONDS


def new_claim() -> str:
    return secrets.token_hex(16)


def _send_job(job: Job) -> None:
    if any(seat.human for seat in job.seats):
        # A person's game: as long as its lease, and acknowledged when a runner takes it (a
        # broker must not hand a game someone is playing to a second runner after its
        # visibility timeout; a lost runner's game is claimed again when its lease ends).
        limit = HUMAN_LEASE_SECONDS
        options = {"time_limit": limit, "soft_time_limit": limit - 60, "queue": PEOPLE_QUEUE}
        task = "runner.play_person"  # to runners of people's games: never a bot match's slot
    else:
        task, options = "runner.play", {}
    transaction.on_commit(lambda: send(task, [job.to_dict()], **options))


def _seat(version: BotVersion | None, builtin: str, human_token: str = "") -> Participant:
    if human_token:
        return Participant.of_person(human_token)
    if version is None:
        return Participant.of_builtin(builtin)
    return Participant.from_code(version.filename, bytes(version.code), version=version.pk)


# --- matches ------------------------------------------------------------------------------


def _match_job(match: Match) -> Job:
    seats = match.seats.select_related("version").order_by("seat")
    return Job(
        kind="match",
        ref=match.pk,
        claim=match.claim_token,
        rules=match.rules,
        seed=match.seed,
        hands=match.hands,
        move=CLOCK.move,
        bank=CLOCK.bank,
        seats=tuple(_seat(s.version, s.builtin, s.human_token) for s in seats),
        # Every running match can be watched: a bot match with every hand shown, a person's
        # game as a bystander sees it (until it ends).
        live="bystander" if match.kind == Match.Kind.HUMAN else "all",
        **_person_settings(),
    )


def _person_settings() -> dict[str, Any]:
    """A person's clock and limits as the settings give them (docs/operations.md, "Limits on
    work"): the job carries them, so a runner holds no setting of its own."""
    return {
        "person_clock": TimeControl(
            move=float(settings.HUMAN_MOVE_SECONDS),
            bank=float(settings.HUMAN_BANK_SECONDS),
            timeout_spends_bank=True,
        ),
        "person": PersonLimits(
            away=float(settings.HUMAN_AWAY_SECONDS), game=float(settings.HUMAN_GAME_SECONDS)
        ),
        "coach": bool(settings.HUMAN_COACH),
    }


@transaction.atomic
def match_dispatch(*, match_id: int) -> Match | None:
    """Claim a queued match and send it to the runners; None when it is claimed elsewhere
    or done (a redelivered message)."""
    match = match_claim(match_id=match_id, claim=new_claim())
    if match is None:
        return None
    _send_job(_match_job(match))
    return match


def match_run(*, match_id: int) -> Match | None:
    """Claim a match and play it in this process, through the same job and the same store
    as a runner's (a development machine's, a test's, a benchmark's shortcut)."""
    match = match_claim(match_id=match_id, claim=new_claim())
    if match is None:
        return None
    job_started(kind="match", ref=match.pk, claim=match.claim_token)
    job = _match_job(match)
    publish = live.publisher_for(job.kind, job.ref, job.claim, wanted=bool(job.live))
    people = live.people_for(job.claim, job.person, coach=job.coach)
    result = run_job(job, unsafe=settings.BIDEL_UNSAFE_NO_SANDBOX, publish=publish, people=people)
    job_store(result=with_luck(result).to_dict())
    return Match.objects.get(pk=match_id)


def job_started(*, kind: str, ref: int, claim: str) -> bool:
    """A runner began a match's job: the claim's lease counts from now (before, the job was
    waiting for a runner, which is not the runner's time to lose)."""
    if kind != "match":
        return False
    now = timezone.now()
    kind = Match.objects.filter(pk=ref).values_list("kind", flat=True).first() or ""
    lease = timedelta(seconds=lease_seconds(kind))
    return bool(
        Match.objects.filter(
            pk=ref, status=Match.Status.RUNNING, claim_token=claim, playing_since__isnull=True
        ).update(playing_since=now, lease_until=now + lease)
    )


def matches_resend() -> int:
    """Send again the jobs of claimed matches no runner has begun for a while (the broker
    lost them, or every runner is busy): same claim, so whichever copy a runner plays first
    is stored and the other is refused."""
    cutoff = timezone.now() - timedelta(seconds=matches.RESEND_SECONDS)
    waiting = Match.objects.filter(
        status=Match.Status.RUNNING, playing_since__isnull=True, started_at__lt=cutoff
    )
    count = 0
    for match in waiting:
        Match.objects.filter(pk=match.pk, claim_token=match.claim_token).update(
            started_at=timezone.now()
        )
        _send_job(_match_job(match))
        count += 1
    return count


def _same_game(match: Match, game: Any) -> str:
    """Why ``game`` is not a game of ``match`` ('' if it is)."""
    if not isinstance(game, dict):
        return "no game in the result"
    try:
        played, expected = RuleSet.from_spec(game.get("rules")), RuleSet.from_spec(match.rules)
        if match.hands is not None:  # a hand count ends the game: the runner lifts the target
            played, expected = without_target(played), without_target(expected)
        same_rules = played == expected
    except Exception:  # noqa: BLE001 — anything unreadable is simply not this match's game
        return "the result's rules are unreadable"
    if not same_rules or game.get("seed") != match.seed:
        return "the result is not this match's game (rules or seed differ)"
    if len(game.get("seats") or []) != match.seats.count():
        return "the result's seats differ from the match's"
    return ""


def _holds(token: str, claim: str) -> bool:
    """Whether a result's ``claim`` is the current claim ``token`` (in constant time)."""
    return bool(claim) and secrets.compare_digest(token, claim)


def _store_match(result: JobResult) -> bool:
    match = Match.objects.filter(pk=result.ref).first()
    if (
        match is None
        or match.status != Match.Status.RUNNING
        or not _holds(match.claim_token, result.claim)
    ):
        logger.warning("match %s: result refused (stale, duplicate or forged claim)", result.ref)
        return False
    where = f"runner {result.runner}: " if result.runner else ""
    if result.ok:
        problem = _same_game(match, result.game)
        if problem:
            logger.warning("match %s: result refused: %s", result.ref, problem)
            return False
        try:
            return match_finish(
                match_id=match.pk,
                attempt=match.attempts,
                result=result.game or {},
                claim=result.claim,
                luck=result.luck,
            )
        except Exception as exc:  # noqa: BLE001 — a record that does not replay is no result
            logger.exception("match %s: the result does not replay", result.ref)
            match_attempt_failed(
                match_id=match.pk,
                attempt=match.attempts,
                error=f"{where}the result did not replay: {exc!r}",
            )
            return False
    error = clean_text(f"{where}{result.cause}: {result.error}")
    if result.cause in ("code", "job"):
        match_fail(match_id=match.pk, attempt=match.attempts, error=error)
    else:  # the sandbox or the runner failed: another runner may do better
        match_attempt_failed(match_id=match.pk, attempt=match.attempts, error=error)
    return True


# --- validation ---------------------------------------------------------------------------


def _version_claim(version_id: int) -> tuple[BotVersion, Job | None]:
    """Claim a pending version (pending → validating, a new token) and its validation job;
    no job when it was claimed already (a redelivery)."""
    claim = new_claim()
    claimed = BotVersion.objects.filter(pk=version_id, status=BotVersion.Status.PENDING).update(
        status=BotVersion.Status.VALIDATING, claim_token=claim, claimed_at=timezone.now()
    )
    version = BotVersion.objects.get(pk=version_id)
    if not claimed:
        return version, None
    return version, Job(
        kind="validation",
        ref=version.pk,
        claim=claim,
        rules="standard",
        seed=new_seed(),
        hands=VALIDATION_HANDS,
        move=CLOCK.move,
        bank=CLOCK.bank,
        seats=(_seat(version, ""), *(Participant.of_builtin(b) for b in VALIDATORS)),
    )


@transaction.atomic
def version_dispatch(*, version_id: int) -> BotVersion:
    """Claim a pending version and send its validation match to the runners."""
    version, job = _version_claim(version_id)
    if job is not None:
        _send_job(job)
    return version


def version_validate(*, version_id: int) -> BotVersion:
    """Validate a version in this process, through the same job and store as a runner's."""
    version, job = _version_claim(version_id)
    if job is not None:
        job_store(result=run_job(job, unsafe=settings.BIDEL_UNSAFE_NO_SANDBOX).to_dict())
    return BotVersion.objects.get(pk=version_id)


def _store_validation(result: JobResult) -> bool:
    version = BotVersion.objects.filter(pk=result.ref).first()
    if (
        version is None
        or version.status != BotVersion.Status.VALIDATING
        or not _holds(version.claim_token, result.claim)
    ):
        logger.warning("version %s: result refused (stale, duplicate or forged)", result.ref)
        return False
    opponents = ", ".join(VALIDATORS)
    if result.ok and result.game:
        seat = result.game["seats"][0]
        log = [
            f"validation match: {VALIDATION_HANDS} hands against {opponents} "
            f"(seed {result.game.get('seed')})"
        ]
        faults = seat.get("faults") or []
        # A fault's ``hand`` is the record's index, from 0; its owner counts hands from 1.
        log += [
            f"{f['class']}: {Fault.from_dict(f).owner_text()} "
            f"(hand {int(f['hand']) + 1}, {f['decision']})"
            for f in faults
        ]
        if seat.get("stderr"):
            log.append("stderr:\n" + str(seat["stderr"]))
    else:
        faults = [{"class": result.cause}]
        why = {
            "sandbox": "no runner could sandbox it",
            "code": "its code did not reach the runner intact",
        }.get(result.cause, "the platform failed")
        log = [
            f"not validated: {why}: {result.error}",
            "this is the platform's doing, not your bot's: upload it again later",
        ]
    return version_settle(
        version_id=version.pk,
        claim=result.claim,
        log=log,
        accepted=not faults,
        blame="bot" if result.ok else "platform",
    )


def versions_expire() -> int:
    """Validations no runner answered within :data:`VALIDATION_TIMEOUT`: rejected, saying so
    (never left ``validating``)."""
    cutoff = timezone.now() - timedelta(seconds=VALIDATION_TIMEOUT)
    expired = 0
    for version in BotVersion.objects.filter(
        status=BotVersion.Status.VALIDATING, claimed_at__lt=cutoff
    ):
        expired += version_settle(
            version_id=version.pk,
            claim=version.claim_token,
            accepted=False,
            blame="platform",
            log=[
                f"not validated: no runner played its validation within {VALIDATION_TIMEOUT} s",
                "this is the platform's doing, not your bot's: upload it again later",
            ],
        )
    return expired


# --- analyses -----------------------------------------------------------------------------

#: The most samples times hands one analysis may take (a runner's minute or so, compiled):
#: the default samples fit any game (200 × the engine's 200 hands at most).
ANALYSIS_MAX_WORK = 40_000
#: An analysis no runner has answered in this long ends failed, saying so (asking again
#: sends it again).
ANALYSIS_TIMEOUT = settings.ANALYSIS_TIMEOUT_SECONDS


@transaction.atomic
def analysis_request(*, user: Any, match_id: int, seat: int, samples: int) -> Analysis:
    """Ask for a finished match's seat to be analysed with ``samples`` per decision: the
    analysis kept for it (whoever asked first), else a new one sent to the runners; one that
    failed is sent again. ValidationError for a match not finished, a seat it does not have,
    or samples out of bounds."""
    match = Match.objects.select_for_update().get(pk=match_id)
    if match.status != Match.Status.FINISHED or match.record is None:
        raise ValidationError("only a finished match can be analysed: this one has not finished")
    players = match.seats.count()
    if not 0 <= seat < players:
        raise ValidationError({"seat": f"this match seats {players}: a seat is 0 to {players - 1}"})
    if not 2 <= samples <= MAX_SAMPLES:
        raise ValidationError({"samples": f"samples must be from 2 to {MAX_SAMPLES}"})
    hands = max(1, len(match.record.get("hands") or []))
    if samples * hands > ANALYSIS_MAX_WORK:
        most = ANALYSIS_MAX_WORK // hands
        raise ValidationError(
            {"samples": f"a game of {hands} hands is analysed on at most {most} samples"}
        )
    analysis, created = Analysis.objects.select_for_update().get_or_create(
        match=match,
        seat=seat,
        samples=samples,
        method=METHOD,
        defaults={"requested_by": user if user is not None and user.is_authenticated else None},
    )
    if not created and analysis.status != Analysis.Status.FAILED:
        return analysis  # kept, or on its way
    job = _analysis_claim(analysis)
    transaction.on_commit(lambda: send("runner.analyse", [job.to_dict()]))
    return analysis


def _analysis_claim(analysis: Analysis) -> AnalysisJob:
    """A fresh claim on ``analysis`` (queued again, no report) and its job."""
    analysis.status, analysis.error, analysis.report = Analysis.Status.QUEUED, "", None
    analysis.claim_token, analysis.sent_at = new_claim(), timezone.now()
    analysis.save(update_fields=["status", "error", "report", "claim_token", "sent_at"])
    return AnalysisJob(
        ref=analysis.pk,
        claim=analysis.claim_token,
        record=selectors.match_public_record(analysis.match),
        seat=analysis.seat,
        samples=analysis.samples,
    )


def analysis_run(*, analysis_id: int) -> Analysis:
    """Make an analysis in this process, through the same job and store as a runner's, under a
    claim of its own (a copy sent earlier is refused when it comes back)."""
    with transaction.atomic():
        job = _analysis_claim(Analysis.objects.select_for_update().get(pk=analysis_id))
    job_store(result=run_analysis(job.to_dict()).to_dict())
    return Analysis.objects.get(pk=analysis_id)


def _store_analysis(result: JobResult) -> bool:
    analysis = Analysis.objects.select_for_update().filter(pk=result.ref).first()
    if (
        analysis is None
        or analysis.status != Analysis.Status.QUEUED
        or not _holds(analysis.claim_token, result.claim)
    ):
        logger.warning("analysis %s: result refused (stale, duplicate or forged)", result.ref)
        return False
    if result.ok and isinstance(result.report, dict):
        analysis.status, analysis.report = Analysis.Status.DONE, result.report
    else:
        analysis.status = Analysis.Status.FAILED
        analysis.error = clean_text(f"{result.cause}: {result.error}", 2000)
    analysis.finished_at = timezone.now()
    analysis.save(update_fields=["status", "report", "error", "finished_at"])
    return True


def analyses_expire() -> int:
    """Analyses no runner answered within :data:`ANALYSIS_TIMEOUT`: failed, saying so."""
    cutoff = timezone.now() - timedelta(seconds=ANALYSIS_TIMEOUT)
    return Analysis.objects.filter(status=Analysis.Status.QUEUED, sent_at__lt=cutoff).update(
        status=Analysis.Status.FAILED,
        error=f"no runner analysed it within {ANALYSIS_TIMEOUT} s: ask again later",
        finished_at=timezone.now(),
    )


def job_store(*, result: dict[str, Any]) -> bool:
    """Store a runner's result (``arena.job_finished``); False when it was refused."""
    try:
        parsed = JobResult.from_dict(result)
    except (KeyError, TypeError, ValueError):
        logger.warning("a malformed job result was refused")
        return False
    if parsed.kind == "validation":
        return _store_validation(parsed)
    if parsed.kind == "analysis":
        with transaction.atomic():
            return _store_analysis(parsed)
    stored = _store_match(parsed)
    if stored:  # its spectators may load the replay now (or wait for the next attempt)
        key = live.key_for("match", parsed.ref)
        status = Match.objects.filter(pk=parsed.ref).values_list("status", flat=True).first()
        final = status in (Match.Status.FINISHED, Match.Status.FAILED)
        transaction.on_commit(
            lambda: live.announce(key, {"type": "stored", "status": status}, final=final)
        )
    return stored
