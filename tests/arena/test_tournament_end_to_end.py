"""Tournaments on real processes: a Celery beat starts a scheduled tournament and workers play
it to the end, unattended — also through a killed worker and a restarted Redis."""

from __future__ import annotations

import os
import shutil
import signal
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from arena import selectors
from arena.models import Ladder, Match, Tournament
from arena.services import tournaments
from engine.record import replay
from tests.arena.live import sandbox_env, worker_env
from tests.support import (
    DEADLINE,
    celery_beat,
    celery_worker,
    purge_queues,
    redis_server,
    wait_until,
)

pytestmark = pytest.mark.django_db(transaction=True)

BUILTINS = ["random", "low", "heuristic", "montecarlo"]
FAST = {
    "TOURNAMENT_TICK_SECONDS": "1",
    "REAP_SECONDS": "1",
    "MATCH_LEASE_SECONDS": "4",
    "MATCH_RESEND_SECONDS": "4",
}


@pytest.fixture
def processes(settings: Any, tmp_path: Path) -> Iterator[Any]:
    settings.BIDEL_UNSAFE_NO_SANDBOX = sandbox_env()["BIDEL_UNSAFE_NO_SANDBOX"] == "1"
    purge_queues("celery", "runner")
    # Tournaments only: the standard ladder's full games would take the workers' turns.
    Ladder.objects.update(active=False)
    with ExitStack() as stack:

        class Start:
            #: Variables of the processes started from here on (a broker of the test's own).
            extra: dict[str, str] = {}
            enter = stack.enter_context

            @staticmethod
            def worker() -> Any:
                name = f"t-{uuid.uuid4().hex[:6]}@test"
                env = worker_env(**FAST, **Start.extra)
                return stack.enter_context(
                    celery_worker(env=env, hostname=name, queues=["celery", "runner"])
                )

            @staticmethod
            def beat() -> Any:
                env = worker_env(**FAST, **Start.extra)
                return stack.enter_context(celery_beat(env=env, folder=tmp_path))

        yield Start


def _consistent(tournament: Tournament) -> None:
    """Standings equal what the stored records say, and every planned match counted once."""
    points: dict[str, float] = {}
    for match in tournament.matches.filter(status="finished"):
        state = replay(match.record)
        for seat in match.seats.select_related("tournament_entry__bot"):
            label = seat.tournament_entry.label  # type: ignore[union-attr]
            points[label] = points.get(label, 0) + sum(
                h.scores[seat.seat] for h in state.history if not h.void
            )
            assert seat.rank is not None
    rows = selectors.tournament_standings(tournament)
    assert {r["bot"]["name"]: r["points"] for r in rows} == points
    progress = selectors.tournament_progress(tournament)
    assert (
        progress["done"]
        == progress["total"]
        == tournament.matches.filter(status="finished").count()
    )
    keys = list(tournament.matches.values_list("round", "table", "seed", "rotation"))
    assert len(keys) == len(set(keys))  # no match created twice


def test_a_scheduled_tournament_starts_plays_and_finishes_by_itself(processes: Any) -> None:
    tournament = tournaments.tournament_create(
        name="unattended",
        format="round_robin",
        bots=BUILTINS,
        table_size=3,
        hands_per_table=1,
        duplicate=True,
        starts_at=timezone.now() + timedelta(seconds=3),
    )
    processes.worker()
    processes.beat()
    wait_until(lambda: Tournament.objects.get(pk=tournament.pk).status == "running", "the start")
    done = wait_until(
        lambda: Tournament.objects.filter(pk=tournament.pk, status="finished").first(),
        "the end",
        deadline=5 * DEADLINE,
    )
    assert done.current_round == done.rounds > 1  # rounds advanced with nobody's help
    _consistent(done)


@pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="redis-server is not installed here"
)
def test_a_killed_worker_and_a_restarted_redis_lose_nothing(tmp_path: Path, processes: Any) -> None:
    """The broker is a Redis server of the test's own, stopped and started again mid-run
    (the machine's serves the tests running beside this one)."""
    redis = processes.enter(redis_server(tmp_path))
    processes.extra["REDIS_URL"] = redis.url
    tournament = tournaments.tournament_create(
        name="storm",
        format="round_robin",
        bots=BUILTINS,
        table_size=4,
        hands_per_table=3,
        duplicate=True,
        games_per_table=3,
        starts_at=timezone.now(),
    )
    doomed = processes.worker()
    processes.worker()
    processes.beat()
    wait_until(
        lambda: Match.objects.filter(tournament=tournament, status="finished").exists(),
        "a first result",
        deadline=2 * DEADLINE,
    )
    wait_until(
        lambda: Match.objects.filter(tournament=tournament, status="running").exists(),
        "a match in play",
        deadline=2 * DEADLINE,
    )
    os.killpg(doomed.process.pid, signal.SIGKILL)
    redis.restart()  # queued messages are gone with it: the database is the truth
    done = wait_until(
        lambda: Tournament.objects.filter(pk=tournament.pk, status="finished").first(),
        "the end",
        deadline=10 * DEADLINE,
    )
    _consistent(done)
    assert done.matches.filter(status="finished").count() == 12  # 3 deals x 4 rotations
