"""GET /api/health/: the database asked for real, the workers and runners read from their
heartbeats (real worker processes beat into the real store: Redis, or the embedded broker's
folder); anyone reads the status, staff the details."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

from arena.models import Ladder, Match
from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from hearts_platform import views
from hearts_platform.health import health_report
from hearts_runner import heartbeat
from tests.arena.browser import web_server
from tests.arena.every_kind import standard_ladder
from tests.arena.live import health_listing, slow_ladder_match, staff_client, worker_env
from tests.support import (
    DEADLINE,
    celery_worker,
    child_env,
    purge_queues,
    requires_postgres,
    wait_until,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_beats(monkeypatch: pytest.MonkeyPatch) -> Iterator[heartbeat.Store]:
    """No worker's beat from an earlier test (a worker killed there is still named), and a
    report made at every request."""
    store = views._store()
    _clear(store)
    monkeypatch.setattr(views.REPORTS, "max_age", 0.0)
    yield store
    _clear(store)


def _clear(store: heartbeat.Store) -> None:
    if isinstance(store, heartbeat.RedisStore):
        for key in store.client.scan_iter(match=store.PREFIX + "*"):
            store.client.delete(key)
    else:
        shutil.rmtree(store.folder, ignore_errors=True)  # type: ignore[attr-defined]


def _sandbox_env() -> dict[str, str]:
    """This process's environment for a worker that runs bots: sandboxed where this host can,
    else in the explicit development mode (which health names)."""
    try:
        default_launcher()
    except SandboxUnavailable:
        return child_env({"BIDEL_UNSAFE_NO_SANDBOX": "1"})
    return child_env()


def _name() -> str:
    return f"health-{uuid.uuid4().hex[:8]}@test"


def test_without_a_worker_health_is_503_and_says_none_was_heard() -> None:
    response = staff_client().get("/api/health/")
    body = response.json()
    assert response.status_code == 503 and body["status"] == "error"
    assert body["database"]["ok"] is True and body["broker"]["ok"] is True
    assert "no worker has been heard from" in body["workers"]["error"]


def test_anyone_reads_the_status_and_staff_the_details(no_beats: heartbeat.Store) -> None:
    hostname = _name()
    no_beats.write({"name": hostname, "at": time.time(), "queues": ["celery"]})
    anonymous = APIClient().get("/api/health/")
    assert anonymous.status_code == 503
    assert anonymous.json() == {
        "status": "error",
        "database": {"ok": True},
        "broker": {"ok": True},
        "workers": {"ok": True},
        "runners": {"ok": False},
        "sandbox": {"ok": False},
    }
    assert hostname not in anonymous.content.decode()
    detailed = staff_client().get("/api/health/").json()
    assert detailed["workers"]["workers"] == [hostname]


def test_a_worker_that_is_no_runner_leaves_health_red() -> None:
    hostname = _name()
    with celery_worker(env=child_env(), hostname=hostname, queues=[f"test-{uuid.uuid4().hex}"]):
        response, body = health_listing(hostname, "workers")
    assert response.status_code == 503, body
    assert hostname in body["workers"]["workers"] and body["workers"]["ok"]
    assert "no worker serves the 'runner' queue" in body["runners"]["error"]
    assert body["sandbox"]["ok"] is False


def test_with_a_runner_health_is_200_and_says_how_bots_are_confined() -> None:
    hostname = _name()
    env = _sandbox_env()
    with celery_worker(env=env, hostname=hostname, queues=[f"test-{uuid.uuid4().hex}", "runner"]):
        response, body = health_listing(hostname, "runners")
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert hostname in body["workers"]["workers"] and hostname in body["runners"]["runners"]
    assert body["database"]["vendor"] == connection.vendor
    sandbox = body["sandbox"]
    assert sandbox["ok"] is True and sandbox["limits"].startswith(("per bot:", "per process"))
    assert sandbox["packages"].startswith("numpy 2.")  # what an uploaded bot may import
    if env.get("BIDEL_UNSAFE_NO_SANDBOX"):
        assert sandbox["detail"].startswith("UNSANDBOXED")
    else:
        assert sandbox["backend"] == "bubblewrap" and sandbox["detail"] == "bots are sandboxed"


def test_runners_that_cannot_sandbox_make_health_red_with_the_reason() -> None:
    hostname = _name()
    env = child_env({"BIDEL_SANDBOX": "jail", "BIDEL_UNSAFE_NO_SANDBOX": None})
    with celery_worker(env=env, hostname=hostname, queues=[f"test-{uuid.uuid4().hex}", "runner"]):
        response, body = health_listing(hostname, "runners")
    assert response.status_code == 503, body
    assert hostname in body["runners"]["runners"]
    assert body["sandbox"]["ok"] is False
    assert "no runner can sandbox bots: unknown sandbox backend 'jail'" in body["sandbox"]["detail"]


def test_a_killed_runner_reads_503_naming_it_and_one_stopped_is_not_missed() -> None:
    killed, stopped = _name(), _name()
    env = _sandbox_env()
    queues = [f"test-{uuid.uuid4().hex}", "runner"]
    with celery_worker(env=env, hostname=stopped, queues=queues):
        health_listing(stopped, "runners")
    with celery_worker(env=env, hostname=killed, queues=queues) as worker:
        health_listing(killed, "runners")
        os.killpg(worker.process.pid, signal.SIGKILL)  # no word: its beat just stops

        def named() -> dict | None:
            response = staff_client().get("/api/health/")
            body = response.json()
            return body if response.status_code == 503 and body["runners"]["missing"] else None

        body = wait_until(named, "health to name the killed runner", interval=0.5)
    (missing,) = body["runners"]["missing"]
    assert missing.startswith(f"{killed} (last heard ")
    assert int(missing.split("last heard ")[1].split(" s")[0]) >= heartbeat.STALE_SECONDS
    assert killed in body["runners"]["error"] and "gone without a word" in body["runners"]["error"]
    assert stopped not in str(body)  # it said goodbye: its beat went with it


def test_a_store_that_cannot_be_read_is_reported_not_raised() -> None:
    class Broken:
        where = "redis://127.0.0.1:1/0"

        def read(self) -> list:
            raise ConnectionError("Connection refused")

    report = health_report(Broken())  # type: ignore[arg-type]
    assert report["status"] == "error" and report["database"]["ok"] is True
    assert report["broker"] == {
        "ok": False,
        "url": "redis://127.0.0.1:1/0",
        "error": "Connection refused",
    }
    assert "could not be read" in report["runners"]["error"]


def test_the_store_never_shows_the_brokers_password() -> None:
    store = heartbeat.RedisStore("redis://:hunter2@127.0.0.1:1/0")
    assert "hunter2" not in store.where
    assert "hunter2" not in str(health_report(store))


@requires_postgres
def test_health_reports_postgresql_when_configured() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        (version,) = cursor.fetchone()
    assert version.startswith("PostgreSQL")
    assert health_report(views._store())["database"]["vendor"] == "postgresql"


def test_the_web_reads_the_store_the_workers_beat_in() -> None:
    """The web's store and a worker's (hearts_runner.heartbeat.store_from_environment, from
    the same variables) are one."""
    ours, theirs = views._store(), heartbeat.store_from_environment()
    assert type(ours) is type(theirs) and ours.where == theirs.where
    assert bool(settings.REDIS_URL) == isinstance(ours, heartbeat.RedisStore)


def _get(url: str, headers: dict[str, str] | None = None, data: bytes | None = None) -> Any:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"null")


@pytest.mark.django_db(transaction=True)
def test_a_storm_of_anonymous_health_checks_is_answered_and_work_goes_on() -> None:
    """Two hundred anonymous GET /api/health/ at once on uvicorn, as production runs it: each
    is answered, none holds what the next request needs (they once took every pooled broker
    connection and waited for a second one: the web process hung for good), and a challenge
    made right after is played. (bench/health_storm.py measures how fast they are answered.)"""
    purge_queues("celery", "runner")
    get_user_model().objects.create_user("storm", password="a long pass phrase")
    env = worker_env()
    with ExitStack() as stack:
        server = stack.enter_context(web_server(env))
        stack.enter_context(celery_worker(env=env, hostname=_name(), queues=["celery", "runner"]))
        health = f"{server.url}/api/health/"
        wait_until(lambda: _get(health)[0] == 200, "the worker's first heartbeat", interval=0.2)
        with ThreadPoolExecutor(200) as crowd:
            answers = list(crowd.map(lambda _: _get(health), range(200)))
        assert [status for status, _ in answers] == [200] * 200
        assert all(body == answers[0][1] for _, body in answers)  # the status, no details
        status, login = _get(
            f"{server.url}/api/token/",
            {"Content-Type": "application/json"},
            json.dumps({"username": "storm", "password": "a long pass phrase"}).encode(),
        )
        assert status == 200, login
        auth = {"Authorization": f"Token {login['token']}", "Content-Type": "application/json"}
        challenge = json.dumps({"seats": ["random", "low", "heuristic", "low"], "hands": 1})
        status, match = _get(f"{server.url}/api/matches/", auth, challenge.encode())
        assert status == 201, match
        played = wait_until(
            lambda: _get(f"{server.url}/api/matches/{match['id']}/")[1]["status"] == "finished",
            "the challenge to be played",
            interval=0.2,
        )
        assert played


#: Seconds the soak test polls (``BIDEL_HEALTH_SOAK_SECONDS``): a minute in the suite (its
#: CPU hogs slow every test beside it); 600 for the ten minutes an operator would ask.
SOAK_SECONDS = float(os.environ.get("BIDEL_HEALTH_SOAK_SECONDS", "60"))


@pytest.mark.timeout(SOAK_SECONDS + 300)  # (the suite's per-test bound, past the polling)
@pytest.mark.django_db(transaction=True)
def test_health_stays_green_while_every_runner_plays_long_matches_on_a_loaded_machine() -> None:
    """The one runner is busy with slow bots' matches for the whole time, both cores are kept
    busy by two other processes, and /api/health/ is asked once a second: every answer is
    200 (a worker's heartbeat comes from its main process, which plays nothing)."""
    purge_queues("celery", "runner")
    Ladder.objects.update(active=False)  # (no ladder match but the test's own)
    ladder = standard_ladder()  # (an earlier transactional test may have flushed it)
    hands = 40  # ~170 s of the slow bot each, well within a match's budget
    matches = [slow_ladder_match(ladder, hands=hands) for _ in range(int(SOAK_SECONDS // 160) + 2)]
    hostname = _name()
    with ExitStack() as stack:
        stack.enter_context(
            celery_worker(env=worker_env(), hostname=hostname, queues=["celery", "runner"])
        )
        health_listing(hostname, "runners")
        wait_until(
            lambda: Match.objects.filter(pk=matches[0].pk, status="running").exists(),
            "the first long match to be played",
        )
        for _ in range(2):  # both cores busy, as a shared machine often is
            hog = subprocess.Popen(["sha256sum", "/dev/zero"], stdout=subprocess.DEVNULL)
            stack.callback(hog.wait)
            stack.callback(hog.kill)
        client = staff_client()
        answers = []
        started = time.monotonic()
        while time.monotonic() - started < SOAK_SECONDS:
            response = client.get("/api/health/")
            answers.append((round(time.monotonic() - started), response.status_code))
            if response.status_code != 200:
                answers[-1] += (response.json(),)
            time.sleep(1)  # once a second: the cadence of the scenario, not a wait on it
        assert Match.objects.filter(status="running").exists()  # busy all the while
    assert [a for a in answers if a[1] != 200] == [], answers
    assert len(answers) >= SOAK_SECONDS / 2
