"""A runner's settings, from its environment only (no Django)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hearts_runner.broker import embedded_transport, redis_transport

#: The queue runners consume; the platform sends jobs there.
RUNNER_QUEUE = "runner"
#: Where a runner sends results: the platform workers' (Celery's default) queue.
PLATFORM_QUEUE = "celery"
#: What a runner must never hold (the platform's secrets).
FORBIDDEN = ("DATABASE_URL", "SECRET_KEY")


def hard_time_limit() -> int:
    return int(os.environ.get("CELERY_TASK_TIME_LIMIT", "960"))


def soft_time_limit() -> int:
    return int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", "900"))


def transport() -> dict[str, Any]:
    """Broker settings as the platform chooses them: Redis at ``REDIS_URL``, else the embedded
    broker under ``BIDEL_VAR_DIR`` (default: the project's var/)."""
    redis_url = os.environ.get("REDIS_URL", "")
    if redis_url:
        return redis_transport(redis_url, hard_time_limit=hard_time_limit())
    default = Path(__file__).resolve().parent.parent / "var"
    return embedded_transport(Path(os.environ.get("BIDEL_VAR_DIR") or default))


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
        "task_routes": {"runner.*": {"queue": RUNNER_QUEUE}},
        "worker_send_task_events": True,
    }
