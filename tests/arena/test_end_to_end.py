"""The platform end to end on real Celery worker processes: users, uploads validated by a
worker, ladder matches played by workers, rankings with intervals, a record that verifies —
and a worker killed mid-match whose match finishes elsewhere, stored and rated once."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from arena import services
from arena.models import Ladder, LadderEntry, Match
from arena.services import dispatch as jobs
from engine.record import verify
from tests.arena.live import sandbox_env, slow_ladder_match, worker_env
from tests.support import DEADLINE, celery_worker, purge_queues, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

BOT = (
    b"from bots_sdk import Bot, lowest, highest\n\n\nclass Player(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n        return lowest(view.legal)\n"
)


@pytest.fixture
def workers(settings: Any) -> Iterator[Callable[..., Any]]:
    settings.BIDEL_UNSAFE_NO_SANDBOX = sandbox_env()["BIDEL_UNSAFE_NO_SANDBOX"] == "1"
    purge_queues("celery", "runner")
    with ExitStack() as stack:

        def start(**extra: str) -> Any:
            name = f"e2e-{uuid.uuid4().hex[:6]}@test"
            return stack.enter_context(
                celery_worker(env=worker_env(**extra), hostname=name, queues=["celery", "runner"])
            )

        yield start


def _client(username: str) -> APIClient:
    client = APIClient()
    assert (
        client.post(
            "/api/users/", {"username": username, "password": "a long passphrase"}
        ).status_code
        == 201
    )
    token = client.post(
        "/api/token/", {"username": username, "password": "a long passphrase"}
    ).json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_users_upload_bots_workers_play_ladder_rankings_and_records(workers: Any) -> None:
    workers()
    ladder = Ladder.objects.get(name="standard")
    ladder.hands, ladder.concurrency = 2, 4
    ladder.save()
    bots = []
    for user in ("ada", "grace"):
        client = _client(user)
        bot = client.post("/api/bots/", {"name": f"{user}-bot"}).json()
        upload = client.post(
            f"/api/bots/{bot['id']}/versions/",
            {"file": SimpleUploadedFile("bot.py", BOT)},
            format="multipart",
        )
        assert upload.status_code == 201
        assert (
            client.post(f"/api/ladders/{ladder.pk}/entries/", {"bot": bot["id"]}).status_code == 201
        )
        bots.append((client, bot))
    for client, bot in bots:
        url = f"/api/bots/{bot['id']}/versions/1/"

        def validated(client: APIClient = client, url: str = url) -> Any:
            version = client.get(url).json()
            return version if version["status"] in ("active", "rejected") else None

        version = wait_until(validated, "validation by a worker", deadline=2 * DEADLINE)
        assert version["status"] == "active", version["validation_log"]
    for _ in range(3):
        services.ladder_fill(ladder=ladder)
        wait_until(
            lambda: (
                not Match.objects.filter(ladder=ladder, status__in=["queued", "running"]).exists()
            ),
            "ladder matches",
            deadline=5 * DEADLINE,
        )
    finished = Match.objects.filter(ladder=ladder, status="finished")
    assert finished.count() >= 8
    played = {seat.version.bot.name for m in finished for seat in m.seats.all() if seat.version}
    assert played == {"ada-bot", "grace-bot"}
    services.ratings_recompute(ladder=ladder)
    rankings = APIClient().get(f"/api/ladders/{ladder.pk}/rankings/").json()
    names = {row["bot"]["name"] for row in rankings}
    assert {"ada-bot", "grace-bot", "random", "heuristic"} <= names
    for row in rankings:
        assert row["ci95"][0] < row["rating"] < row["ci95"][1] and row["matches"] > 0
    record = APIClient().get(f"/api/matches/{finished.first().pk}/record/").json()
    assert verify(record)["valid"]


def test_a_worker_killed_mid_match_loses_nothing_and_counts_once(
    workers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ladder = Ladder.objects.get(name="standard")
    first = workers(MATCH_LEASE_SECONDS="3")
    match = slow_ladder_match(ladder, seed=77)  # (8 s at least: the kill lands mid-match)
    wait_until(
        lambda: Match.objects.get(pk=match.pk).status == "running", "the first worker to start"
    )
    os.killpg(first.process.pid, signal.SIGKILL)  # the worker and its pool, mid-match
    first.process.wait(timeout=30)
    assert Match.objects.get(pk=match.pk).status == "running"
    workers(MATCH_LEASE_SECONDS="3")
    # The reaper gives the match to the surviving worker: its job again if no runner had
    # begun it (this one worker was both), else a new claim once the lease runs out.
    monkeypatch.setattr(services.matches, "RESEND_SECONDS", 3)
    wait_until(
        lambda: (
            services.matches_reap()
            or jobs.matches_resend()
            or Match.objects.get(pk=match.pk).status != "running"
        ),
        "the lease to expire",
    )
    done = wait_until(
        lambda: Match.objects.filter(pk=match.pk, status="finished").first(),
        "the match to finish",
        deadline=5 * DEADLINE,
    )
    assert verify(done.record)["valid"]
    assert done.seats.exclude(rank=None).count() == 4  # exactly one result
    assert done.live_elo_applied
    total = sum(LadderEntry.objects.filter(ladder=ladder).values_list("live_elo", flat=True))
    entries = LadderEntry.objects.filter(ladder=ladder).count()
    assert abs(total - entries * 1500) < 1e-6  # applied once: live Elo is zero-sum per match
    moved = [e for e in LadderEntry.objects.filter(ladder=ladder) if abs(e.live_elo - 1500) > 1e-9]
    assert moved
