"""Is the platform able to run matches? Database, broker and workers, each checked for real.

Plain functions returning plain dicts; the ``/api/health/`` view only renders them.
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any

from celery import Celery
from django.db import connections
from kombu.utils.url import maybe_sanitize_url

from bots_sdk.sandbox import SandboxUnavailable, default_launcher, per_bot_limits


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
    """Open a connection to the broker (one attempt, bounded by ``timeout``)."""
    started = time.perf_counter()
    url = maybe_sanitize_url(app.conf.broker_url)
    try:
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=timeout)
            transport = connection.transport_cls
    except Exception as exc:  # kombu raises the transport's own errors; report any
        return {"ok": False, "url": url, "error": str(exc).strip() or type(exc).__name__}
    return {"ok": True, "url": url, "transport": transport, "latency_ms": _elapsed_ms(started)}


def check_workers(app: Celery, *, timeout: float) -> dict[str, Any]:
    """Broadcast a ping and collect the workers that answer within ``timeout`` seconds."""
    started = time.perf_counter()
    try:
        replies = app.control.ping(timeout=timeout) or []
    except Exception as exc:  # broker down: no worker can be asked
        return {"ok": False, "count": 0, "workers": [], "error": str(exc).strip()}
    names = sorted(name for reply in replies for name in reply)
    result: dict[str, Any] = {
        "ok": bool(names),
        "count": len(names),
        "workers": names,
        "latency_ms": _elapsed_ms(started),
    }
    if not names:
        result["error"] = f"no worker answered a ping within {timeout:g} s"
    return result


@functools.lru_cache(maxsize=1)
def check_sandbox() -> dict[str, Any]:
    """Can this process sandbox a bot, with which backend, and which limits cover a bot's
    whole process tree (cgroups) rather than each of its processes? Probed once per process
    (a probe starts a sandbox). Informational here: the workers run the matches."""
    backend = os.environ.get("BIDEL_SANDBOX", "bubblewrap")
    report: dict[str, Any] = {"backend": backend, "limits": per_bot_limits()}
    try:
        default_launcher(backend=backend)
    except SandboxUnavailable as exc:
        return {"ok": False, **report, "detail": str(exc)}
    return {"ok": True, **report, "detail": "a bot can be sandboxed here"}


def health_report(app: Celery, *, timeout: float) -> dict[str, Any]:
    """The three checks and an overall ``status`` of ``ok`` or ``error``; the sandbox as this
    process sees it, for information."""
    database = check_database()
    broker = check_broker(app, timeout=timeout)
    workers = (
        check_workers(app, timeout=timeout)
        if broker["ok"]
        else {"ok": False, "count": 0, "workers": [], "error": "broker unreachable"}
    )
    healthy = database["ok"] and broker["ok"] and workers["ok"]
    return {
        "status": "ok" if healthy else "error",
        "database": database,
        "broker": broker,
        "workers": workers,
        "sandbox": check_sandbox(),
    }
