"""GET /api/health/ asks the database, the broker and the workers, for real."""

from __future__ import annotations

import uuid

import pytest
from celery import Celery
from django.db import connection
from rest_framework.test import APIClient

from bots_sdk import cgroups
from hearts_platform.celery import app
from hearts_platform.health import check_broker, check_sandbox, health_report
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


def test_with_a_worker_health_is_200_and_lists_it() -> None:
    hostname = f"health-{uuid.uuid4().hex[:8]}@test"
    # Same environment as this test process, so the worker listens on the same broker.
    with celery_worker(env=child_env(), hostname=hostname, queues=[f"test-{uuid.uuid4().hex}"]):
        response = APIClient().get("/api/health/")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert hostname in body["workers"]["workers"]
    assert body["database"]["vendor"] == connection.vendor


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


def test_health_says_whether_bots_can_be_sandboxed_and_which_limits_are_per_bot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check_sandbox.cache_clear()
    body = APIClient().get("/api/health/").json()
    assert set(body["sandbox"]) >= {"ok", "backend", "limits", "detail"}
    assert body["sandbox"]["limits"].startswith(("per bot:", "per process only:"))
    # A host with no cgroups says that its limits hold per process only.
    monkeypatch.setenv("BIDEL_CGROUPS", "off")
    cgroups.support.cache_clear()
    check_sandbox.cache_clear()
    try:
        body = APIClient().get("/api/health/").json()
        assert body["sandbox"]["limits"].startswith("per process only:")
        # An unknown backend: refused, with the reason.
        monkeypatch.setenv("BIDEL_SANDBOX", "jail")
        check_sandbox.cache_clear()
        refused = APIClient().get("/api/health/").json()["sandbox"]
        assert refused["ok"] is False and "unknown sandbox backend 'jail'" in refused["detail"]
    finally:
        monkeypatch.delenv("BIDEL_CGROUPS")
        cgroups.support.cache_clear()
        check_sandbox.cache_clear()
