"""Is the platform able to run matches? Database, broker, workers, runners and the runners'
sandbox: the database asked for real, the rest read from the workers' heartbeats
(:mod:`hearts_runner.heartbeat`), never asked per request.

Plain functions returning plain dicts; the ``/api/health/`` view only renders them.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from celery import Celery
from django.db import connections
from kombu.utils.url import maybe_sanitize_url

from hearts_runner import heartbeat
from hearts_runner.config import RUNNER_QUEUE


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def check_database(alias: str = "default") -> dict[str, Any]:
    """Run ``SELECT 1`` on the database."""
    started = time.perf_counter()
    connection = connections[alias]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "not reachable"; report, don't raise
        return {"ok": False, "vendor": connection.vendor, "error": str(exc).strip()}
    return {"ok": True, "vendor": connection.vendor, "latency_ms": _elapsed_ms(started)}


def check_broker(app: Celery, *, timeout: float) -> dict[str, Any]:
    """Open a connection to the broker (one attempt, bounded by ``timeout``): for an
    operator's command, not for the health check (which reads the heartbeats instead)."""
    started = time.perf_counter()
    url = maybe_sanitize_url(app.conf.broker_url)
    try:
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=timeout)
            transport = connection.transport.driver_type  # "filesystem" or "redis"
    except Exception as exc:  # kombu raises the transport's own errors; report any
        return {"ok": False, "url": url, "error": str(exc).strip() or type(exc).__name__}
    return {"ok": True, "url": url, "transport": transport, "latency_ms": _elapsed_ms(started)}


def check_tiers(store: heartbeat.Store) -> dict[str, Any]:
    """The workers, the runners and their sandbox as their heartbeats say
    (:mod:`hearts_runner.heartbeat`), and the store they beat in: Redis, the broker's
    server (or the embedded broker's folder). One read, asking no worker anything."""
    started = time.perf_counter()
    where = getattr(store, "where", "")
    try:
        beats = store.read()
    except Exception as exc:  # the store's own errors (a timeout, a refused connection)
        error = str(exc).strip() or type(exc).__name__
        unread = f"the heartbeats could not be read: {error}"
        return {
            "broker": {"ok": False, "url": where, "error": error},
            "workers": {"ok": False, "count": 0, "workers": [], "error": unread},
            "runners": {"ok": False, "count": 0, "runners": [], "error": unread},
            "sandbox": {"ok": False, "detail": unread},
        }
    broker = {"ok": True, "url": where, "latency_ms": _elapsed_ms(started)}
    return {"broker": broker, **heartbeat.summary(beats, time.time(), RUNNER_QUEUE)}


def health_report(store: heartbeat.Store) -> dict[str, Any]:
    """Database, broker, workers, runners and the runners' sandbox, and an overall ``status``
    of ``ok`` (every part ok) or ``error``."""
    parts = {"database": check_database(), **check_tiers(store)}
    healthy = all(part["ok"] for part in parts.values())
    return {"status": "ok" if healthy else "error", **parts}


def public(report: dict[str, Any]) -> dict[str, Any]:
    """What anyone may read of ``report``: the status and whether each part is ok (the
    details — hosts, errors, the sandbox's set-up — are the staff's).

    >>> public({"status": "error", "database": {"ok": True, "vendor": "sqlite"}})
    {'status': 'error', 'database': {'ok': True}}
    >>> public({"status": "error", "detail": "the health check is busy"})
    {'status': 'error'}
    """
    parts = {name: part for name, part in report.items() if isinstance(part, dict)}
    return {"status": report["status"], **{n: {"ok": bool(p.get("ok"))} for n, p in parts.items()}}


class Reports:
    """The health report of this process, made at most once per ``max_age`` seconds however
    many ask at once: one caller makes it while the others wait for it (up to ``wait``
    seconds, then they get the last one made). A storm of requests costs one read."""

    def __init__(self, store: Any, max_age: float = 1.0, wait: float = 5.0) -> None:
        self._store = store  # () -> the store (made once, when first needed)
        self.max_age = max_age
        self.wait = wait
        self._lock = threading.Lock()
        self._made = -float("inf")
        self._last: dict[str, Any] | None = None

    def current(self) -> dict[str, Any]:
        if time.monotonic() - self._made < self.max_age and self._last is not None:
            return self._last
        if not self._lock.acquire(timeout=self.wait):
            return self._last or {"status": "error", "detail": "the health check is busy"}
        try:
            if time.monotonic() - self._made >= self.max_age or self._last is None:
                self._last = health_report(self._store())
                self._made = time.monotonic()
            return self._last
        finally:
            self._lock.release()
