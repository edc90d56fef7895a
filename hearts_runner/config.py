"""A runner's settings, from its environment only (no Django)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hearts_runner.broker import embedded_transport, redis_transport

#: The queue runners consume; the platform sends jobs there.
RUNNER_QUEUE = "runner"
#: The queue of games with a person at the table, served by runners of their own
#: (``python -m hearts_runner --people``): a person's game, mostly waiting on the person,
#: never holds a bot match's slot.
PEOPLE_QUEUE = "runner.people"
#: Games a runner of people's games plays at once by default: each is a process waiting on
#: its person most of the time (the platform's HUMAN_GAMES_MAX_OPEN is the sum over them).
PEOPLE_CONCURRENCY = 4
#: Where a runner sends results: the platform workers' (Celery's default) queue.
PLATFORM_QUEUE = "celery"
#: What a runner must never hold (the platform's secrets).
FORBIDDEN = ("DATABASE_URL", "SECRET_KEY")


def unsafe_no_sandbox() -> bool:
    """``BIDEL_UNSAFE_NO_SANDBOX``: bots run without a sandbox (a development machine's explicit
    choice, said out loud). The platform's setting of that name reads it here too."""
    return os.environ.get("BIDEL_UNSAFE_NO_SANDBOX", "").lower() in ("1", "true", "yes", "on")


def hard_time_limit() -> int:
    return int(os.environ.get("CELERY_TASK_TIME_LIMIT", "960"))


def soft_time_limit() -> int:
    return int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", "900"))


def match_budget() -> float:
    """Seconds a bot match may take on this runner (``BIDEL_MATCH_BUDGET_SECONDS``; default two
    thirds of the soft time limit): once they are spent the game ends with the hand in
    progress and is ranked on its totals so far, instead of running into the time limit and
    being played again (the room left is for that hand, at most seconds a move).

    >>> match_budget() == soft_time_limit() * 2 / 3
    True
    """
    raw = os.environ.get("BIDEL_MATCH_BUDGET_SECONDS", "")
    budget = float(raw) if raw else soft_time_limit() * 2 / 3
    if not 0 < budget < soft_time_limit():
        raise ValueError(
            f"BIDEL_MATCH_BUDGET_SECONDS must be positive and below the soft time limit "
            f"({soft_time_limit()} s), not {raw!r}"
        )
    return budget


def transport() -> dict[str, Any]:
    """Broker settings as the platform chooses them: Redis at ``REDIS_URL``, else the embedded
    broker under ``BIDEL_VAR_DIR`` (default: the project's var/)."""
    redis_url = os.environ.get("REDIS_URL", "")
    if redis_url:
        return redis_transport(redis_url, hard_time_limit=hard_time_limit())
    default = Path(__file__).resolve().parent.parent / "var"
    return embedded_transport(Path(os.environ.get("BIDEL_VAR_DIR") or default))


def task_routes() -> dict[str, dict[str, str]]:
    """Where each runner task is sent: a person's game to the people's queue, the rest to the
    runners' (an exact name wins over the pattern)."""
    return {"runner.play_person": {"queue": PEOPLE_QUEUE}, "runner.*": {"queue": RUNNER_QUEUE}}


def celery_settings() -> dict[str, Any]:
    """The runner app's Celery configuration: the platform's reliability settings (late
    acknowledgement, one message at a time, JSON only) over the chosen broker."""
    chosen = transport()
    return {
        "broker_url": chosen["broker_url"],
        "broker_transport": chosen["broker_transport"],
        "result_backend": None,
        "broker_transport_options": chosen["broker_transport_options"],
        "broker_connection_retry_on_startup": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_retry_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_soft_time_limit": soft_time_limit(),
        "task_time_limit": hard_time_limit(),
        "task_default_queue": PLATFORM_QUEUE,
        "task_routes": task_routes(),
        "worker_send_task_events": True,
    }
