"""GET /api/health/ asks the database, the broker and the workers, for real."""

from __future__ import annotations

import uuid

import pytest
from celery import Celery
from django.db import connection
from rest_framework.test import APIClient

from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from hearts_platform.celery import app
from hearts_platform.health import check_broker, health_report
from tests.arena.live import health_listing
from tests.support import celery_worker, child_env, requires_postgres

pytestmark = pytest.mark.django_db


def test_without_a_worker_health_is_503_and_names_the_workers() -> None:
    # Ask only for workers this test could have started: none answer on a fresh name.
    response = APIClient().get("/api/health/")
    body = response.json()
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True
    if body["workers"]["ok"]:
        pytest.skip("another worker is serving this broker (e.g. a running demo)")
    assert response.status_code == 503
    assert body["status"] == "error"
    assert "no worker answered" in body["workers"]["error"]


def _sandbox_env() -> dict[str, str]:
    """This process's environment for a worker that runs bots: sandboxed where this host can,
    else in the explicit development mode (which health names)."""
    try:
        default_launcher()
    except SandboxUnavailable:
        return child_env({"BIDEL_UNSAFE_NO_SANDBOX": "1"})
    return child_env()


def test_a_worker_that_is_no_runner_leaves_health_red() -> None:
    hostname = f"health-{uuid.uuid4().hex[:8]}@test"
    # Same environment as this test process, so the worker listens on the same broker.
    with celery_worker(env=child_env(), hostname=hostname, queues=[f"test-{uuid.uuid4().hex}"]):
        response, body = health_listing(hostname, "workers")
    if body["runners"]["ok"]:
        pytest.skip("another runner is serving this broker (e.g. a running demo)")
    assert response.status_code == 503, body
    assert hostname in body["workers"]["workers"] and body["workers"]["ok"]
    assert "no worker serves the 'runner' queue" in body["runners"]["error"]
    assert body["sandbox"]["ok"] is False


def test_with_a_runner_health_is_200_and_says_how_bots_are_confined() -> None:
    hostname = f"health-{uuid.uuid4().hex[:8]}@test"
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
    hostname = f"health-{uuid.uuid4().hex[:8]}@test"
    env = child_env({"BIDEL_SANDBOX": "jail", "BIDEL_UNSAFE_NO_SANDBOX": None})
    with celery_worker(env=env, hostname=hostname, queues=[f"test-{uuid.uuid4().hex}", "runner"]):
        response, body = health_listing(hostname, "runners")
    assert response.status_code == 503, body
    assert body["runners"]["ok"] and hostname in body["runners"]["runners"]
    assert body["sandbox"]["ok"] is False
    assert "no runner can sandbox bots: unknown sandbox backend 'jail'" in body["sandbox"]["detail"]


def test_unreachable_broker_is_reported_not_raised() -> None:
    dead = Celery("dead-broker", set_as_current=False)
    dead.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    assert check_broker(dead, timeout=1)["ok"] is False
    report = health_report(dead, timeout=1)
    assert report["status"] == "error"
    assert report["broker"]["ok"] is False
    assert report["broker"]["error"]
    assert report["workers"] == {
        "ok": False,
        "count": 0,
        "workers": [],
        "error": "broker unreachable",
    }
    assert report["database"]["ok"] is True


def test_broker_password_is_not_shown() -> None:
    secret = Celery("secret-broker", set_as_current=False)
    secret.conf.broker_url = "redis://:hunter2@127.0.0.1:1/0"
    assert "hunter2" not in check_broker(secret, timeout=1)["url"]


@requires_postgres
def test_health_reports_postgresql_when_configured() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        (version,) = cursor.fetchone()
    assert version.startswith("PostgreSQL")
    assert health_report(app, timeout=1)["database"]["vendor"] == "postgresql"
