"""Celery tasks of the arena: thin shells that take ids (JSON) and call one service.

Every task has an explicit ``name`` so queued messages survive a refactoring, and every one is
idempotent: a redelivered message finds the work done (or claimed) and stops.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from celery import shared_task
from django.utils import translation

from arena import services
from arena.models import BotVersion, Ladder
from arena.services import comparisons, dispatch, people, policy, tournaments
from hearts_runner import live


@shared_task(name="arena.ping", bind=True)
def ping(self: Any, payload: Any = None) -> dict[str, Any]:
    """Echo ``payload`` with who ran it: proves a task made the round trip through a worker."""
    return {
        "payload": payload,
        "worker": self.request.hostname or socket.gethostname(),
        "pid": os.getpid(),
    }


@shared_task(name="arena.match_dispatch", max_retries=services.MAX_ATTEMPTS)
def match_dispatch(match_id: int) -> str | None:
    """Claim a queued match and send it to the runners (a no-op when it is claimed
    elsewhere or done). :func:`arena.services.match_run` plays one in-process instead."""
    match = dispatch.match_dispatch(match_id=match_id)
    return None if match is None else match.status


@shared_task(name="arena.version_dispatch")
def version_dispatch(version_id: int) -> str:
    """Send a new bot version's validation match to the runners.
    :func:`arena.services.version_validate` plays it in-process instead."""
    return dispatch.version_dispatch(version_id=version_id).status


@shared_task(name="arena.job_started")
def job_started(kind: str, ref: int, claim: str) -> bool:
    """A runner began a job: its match's lease counts from now."""
    return dispatch.job_started(kind=kind, ref=ref, claim=claim)


@shared_task(name="arena.job_finished")
def job_finished(result: dict[str, Any]) -> bool:
    """A runner's result: stored if its claim still holds, else refused (and logged)."""
    return dispatch.job_store(result=result)


@shared_task(name="arena.ratings_recompute")
def ratings_recompute(ladder_id: int) -> int:
    """Refit a ladder's ratings from its whole history."""
    return len(services.ratings_recompute(ladder=Ladder.objects.get(pk=ladder_id)))


@shared_task(name="arena.password_reset_mail")
def password_reset_mail(email: str, domain: str, use_https: bool, language: str = "en") -> None:
    """Mail the reset links of ``email`` (asked at ``/password-reset/`` or the API), in the
    language it was asked in: here, not in the request, so the answer's time says nothing of
    whether an account has it."""
    with translation.override(language):
        services.password_reset_send(email=email, domain=domain, use_https=use_https)


@shared_task(name="arena.ladders_fill")
def ladders_fill() -> int:
    """Periodic: queue matches for every active ladder, within its concurrency."""
    return sum(
        len(services.ladder_fill(ladder=ladder)) for ladder in Ladder.objects.filter(active=True)
    )


@shared_task(name="arena.matches_reap")
def matches_reap() -> int:
    """Periodic: re-queue matches whose worker or runner was lost; end validations and
    analyses no runner answered, and people's games no runner of theirs began."""
    expired = people.human_games_expire()  # first: such a game is not worth sending again
    return (
        expired
        + services.matches_reap()
        + dispatch.matches_resend()
        + dispatch.versions_expire()
        + dispatch.analyses_expire()
    )


@shared_task(name="arena.live_feeds_sweep")
def live_feeds_sweep() -> int:
    """Periodic: remove the live feeds of matches over for good once their spectators had
    their time, and hold the feeds' folder to its size (files; Redis expires its own)."""
    return live.shared_feed().sweep()


@shared_task(name="arena.tournament_advance")
def tournament_advance(tournament_id: int) -> str:
    """After a tournament match: the next round, a decision, or the end."""
    return tournaments.tournament_advance(tournament_id=tournament_id).status


@shared_task(name="arena.comparison_start")
def comparison_start(older_id: int, newer_id: int, trial: bool = False) -> int:
    """A version just became active: compare it with the one it replaced; or (``trial``) a
    candidate plays its trial against the active one. None when its bot may make no work
    now (``arena.services.policy``): a candidate then stays inactive, saying why."""
    older, newer = BotVersion.objects.get(pk=older_id), BotVersion.objects.get(pk=newer_id)
    idle = policy.why_idle(newer.bot)
    if idle:
        if trial:
            services.version_trial_end(version_id=newer.pk, promote=False, why=idle)
        return 0
    return comparisons.comparison_start(older=older, newer=newer, trial=trial).pk


@shared_task(name="arena.version_bench_check")
def version_bench_check(version_id: int) -> bool:
    """After a ladder match where the version's seat faulted: benched if it faults too often."""
    return services.version_bench_check(version_id=version_id)


@shared_task(name="arena.comparison_advance")
def comparison_advance(comparison_id: int) -> str:
    """After a comparison's match: the next round, or its verdict."""
    return comparisons.comparison_advance(comparison_id=comparison_id).status


@shared_task(name="arena.tournaments_tick")
def tournaments_tick() -> dict[str, int]:
    """Periodic: start due tournaments (and their next editions), advance running ones."""
    return tournaments.tournaments_tick()
