"""Is the platform able to run matches? Database, broker, workers, runners and the runners'
sandbox, each checked for real.

Plain functions returning plain dicts; the ``/api/health/`` view only renders them.
"""

from __future__ import annotations

import time
from typing import Any

from celery import Celery
from django.db import connections
from kombu.utils.url import maybe_sanitize_url

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
    """Open a connection to the broker (one attempt, bounded by ``timeout``)."""
    started = time.perf_counter()
    url = maybe_sanitize_url(app.conf.broker_url)
    try:
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=timeout)
            transport = connection.transport.driver_type  # "filesystem" or "redis"
    except Exception as exc:  # kombu raises the transport's own errors; report any
        return {"ok": False, "url": url, "error": str(exc).strip() or type(exc).__name__}
    return {"ok": True, "url": url, "transport": transport, "latency_ms": _elapsed_ms(started)}


def check_workers(app: Celery, *, timeout: float) -> dict[str, Any]:
    """Broadcast one question to every worker — what can your sandbox do, which queues do
    you serve (``bidel_sandbox``, :mod:`hearts_runner.tasks`) — and collect the answers that
    come within ``timeout`` seconds: the workers, the runners among them (those serving the
    runner queue) and the sandbox as the runners see it."""
    started = time.perf_counter()
    try:
        replies = app.control.broadcast("bidel_sandbox", reply=True, timeout=timeout) or []
    except Exception as exc:  # broker down: no worker can be asked
        error = str(exc).strip()
        return {
            "workers": {"ok": False, "count": 0, "workers": [], "error": error},
            "runners": {"ok": False, "count": 0, "runners": [], "error": error},
            "sandbox": {"ok": False, "detail": "no runner could be asked: " + error},
        }
    answers = {name: status for reply in replies for name, status in reply.items()}
    names = sorted(answers)
    latency = _elapsed_ms(started)
    workers: dict[str, Any] = {
        "ok": bool(names),
        "count": len(names),
        "workers": names,
        "latency_ms": latency,
    }
    if not names:
        workers["error"] = f"no worker answered a ping within {timeout:g} s"
    runners = sorted(n for n, a in answers.items() if RUNNER_QUEUE in (a.get("queues") or []))
    sandboxed = [n for n in runners if answers[n].get("ok")]
    runner_report: dict[str, Any] = {"ok": bool(runners), "count": len(runners), "runners": runners}
    if not runners:
        runner_report["error"] = f"no worker serves the {RUNNER_QUEUE!r} queue: nothing plays"
    if sandboxed:
        first = answers[sandboxed[0]]
        sandbox = {
            "ok": True,
            "runners": len(sandboxed),
            "backend": first.get("backend"),
            "limits": first.get("limits"),
            "packages": first.get("packages"),
            "detail": first.get("detail"),
        }
    elif runners:
        first = answers[runners[0]]
        sandbox = {
            "ok": False,
            "runners": 0,
            "backend": first.get("backend"),
            "limits": first.get("limits"),
            "detail": f"no runner can sandbox bots: {first.get('detail')}",
        }
    else:
        sandbox = {"ok": False, "runners": 0, "detail": "no runner answered"}
    return {"workers": workers, "runners": runner_report, "sandbox": sandbox}


def health_report(app: Celery, *, timeout: float) -> dict[str, Any]:
    """Database, broker, workers, runners and the runners' sandbox, and an overall ``status``
    of ``ok`` (every part ok) or ``error``."""
    database = check_database()
    broker = check_broker(app, timeout=timeout)
    if broker["ok"]:
        tiers = check_workers(app, timeout=timeout)
    else:
        tiers = {
            "workers": {"ok": False, "count": 0, "workers": [], "error": "broker unreachable"},
            "runners": {"ok": False, "count": 0, "runners": [], "error": "broker unreachable"},
            "sandbox": {"ok": False, "detail": "broker unreachable: no runner could be asked"},
        }
    parts = {"database": database, "broker": broker, **tiers}
    healthy = all(part["ok"] for part in parts.values())
    return {"status": "ok" if healthy else "error", **parts}
