"""Celery tasks of the arena: thin shells that take ids (JSON) and call one service.

Every task has an explicit ``name`` so queued messages survive a refactoring, and every one is
idempotent: a redelivered message finds the work done (or claimed) and stops.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from celery import shared_task

from arena import services, tournaments
from arena.models import Ladder


@shared_task(name="arena.ping", bind=True)
def ping(self: Any, payload: Any = None) -> dict[str, Any]:
    """Echo ``payload`` with who ran it: proves a task made the round trip through a worker."""
    return {
        "payload": payload,
        "worker": self.request.hostname or socket.gethostname(),
        "pid": os.getpid(),
    }


@shared_task(name="arena.match_run", max_retries=services.MAX_ATTEMPTS)
def match_run(match_id: int) -> str | None:
    """Play a queued match (a no-op when it is claimed elsewhere or done)."""
    match = services.match_run(match_id=match_id)
    return None if match is None else match.status


@shared_task(name="arena.version_validate")
def version_validate(version_id: int) -> str:
    """Validate a new bot version by a short sandboxed match."""
    return services.version_validate(version_id=version_id).status


@shared_task(name="arena.ratings_recompute")
def ratings_recompute(ladder_id: int) -> int:
    """Refit a ladder's ratings from its whole history."""
    return len(services.ratings_recompute(ladder=Ladder.objects.get(pk=ladder_id)))


@shared_task(name="arena.ladders_fill")
def ladders_fill() -> int:
    """Periodic: queue matches for every active ladder, within its concurrency."""
    return sum(
        len(services.ladder_fill(ladder=ladder)) for ladder in Ladder.objects.filter(active=True)
    )


@shared_task(name="arena.matches_reap")
def matches_reap() -> int:
    """Periodic: re-queue matches whose worker was lost."""
    return services.matches_reap()


@shared_task(name="arena.tournament_advance")
def tournament_advance(tournament_id: int) -> str:
    """After a tournament match: the next round, a decision, or the end."""
    return tournaments.tournament_advance(tournament_id=tournament_id).status


@shared_task(name="arena.tournaments_tick")
def tournaments_tick() -> dict[str, int]:
    """Periodic: start due tournaments (and their next editions), advance running ones."""
    return tournaments.tournaments_tick()
