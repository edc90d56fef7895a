"""Work without a bound on the platform, with real worker processes: a challenge to a target no
hand can reach is refused, one that crawls towards its target a point a hand stops at the
engine's hand cap with a defined result, and a normal match queued meanwhile is played within
the suite's deadline (a minute by default; the limits: docs/operations.md, "Limits on work")."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from arena.models import Match
from engine.record import verify
from engine.state import MAX_HANDS
from tests.arena.live import worker_env
from tests.support import DEADLINE, WorkerProcess, celery_worker, purge_queues, wait_until

ZERO = {"preset": "standard", "heart_points": [0] * 13, "queen_points": 0}
#: One heart worth a point, to 500: it can score, so it is allowed, and it crawls to the cap.
CRAWL = {"preset": "standard", "heart_points": [1] + [0] * 12, "queen_points": 0, "target": 500}
SEATS = ["random", "low", "random", "low"]


@pytest.fixture
def worker(settings: Any) -> Iterator[WorkerProcess]:
    purge_queues("celery", "runner")
    name = f"bounds-{uuid.uuid4().hex[:6]}@test"
    # two slots, as a runner of the documented deployment has
    queues = ["celery", "runner"]
    with celery_worker(env=worker_env(), hostname=name, queues=queues, concurrency=2) as process:
        yield process


@pytest.mark.django_db(transaction=True)
def test_endless_challenges_end_at_their_limits_and_a_normal_match_is_played_meanwhile(
    worker: WorkerProcess,
) -> None:
    client = APIClient()
    assert client.post("/api/users/", {"username": "eve", "password": "a long pass"}).status_code
    token = client.post("/api/token/", {"username": "eve", "password": "a long pass"}).json()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token['token']}")

    refused = client.post("/api/matches/", {"seats": SEATS, "rules": ZERO}, format="json")
    assert refused.status_code == 400, refused.content
    assert "give a number of hands" in str(refused.json())

    crawl = client.post("/api/matches/", {"seats": SEATS, "rules": CRAWL}, format="json")
    assert crawl.status_code == 201, crawl.content
    normal = client.post("/api/matches/", {"seats": SEATS, "hands": 1}, format="json")
    assert normal.status_code == 201, normal.content

    def finished(pk: int) -> Match | None:
        match = Match.objects.get(pk=pk)
        return match if match.status in ("finished", "failed") else None

    try:  # (played beside the endless one, not behind it: within the suite's one deadline)
        done = wait_until(
            lambda: finished(normal.json()["id"]), "the normal match queued after the endless one"
        )
    except AssertionError as timeout:
        raise AssertionError(f"{timeout}; the worker's log ends:\n{worker.log()[-4000:]}") from None
    assert done.status == "finished", done.error

    long = wait_until(
        lambda: finished(crawl.json()["id"]), "the crawling match", deadline=10 * DEADLINE
    )
    assert long.status == "finished", long.error
    assert long.attempts == 1
    checked = verify(long.record)
    assert len(long.record["hands"]) == MAX_HANDS and checked["ended_at_hand_cap"]
    assert max(checked["totals"]) < 500
