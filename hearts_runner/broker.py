"""Where Celery's messages and results go: Redis when ``REDIS_URL`` is set, else an embedded
broker in the project's var/ folder that needs no server.

The embedded broker is Kombu's filesystem transport (one file per message, claimed by an
atomic rename, fanout supported so ``celery inspect``/``ping`` work) with Celery's filesystem
result backend. Real worker processes consume it exactly as they consume Redis. Its limit:
a message is removed when a worker takes it, not when the task is acknowledged, so a worker
killed mid-task loses that message; the platform's lease reaper, not the broker, is what
re-runs such work (docs/architecture.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def redis_transport(redis_url: str, *, hard_time_limit: int) -> dict[str, Any]:
    """Celery settings (lower-case names) for Redis as broker and result backend."""
    # A task not acknowledged within visibility_timeout is handed to another worker. It must
    # exceed twice the hard time limit, the same in broker and backend, or a long match runs
    # several times at once.
    options = {"visibility_timeout": 2 * hard_time_limit + 120}
    return {
        "broker_url": redis_url,
        "result_backend": redis_url,
        "broker_transport_options": options,
        "result_backend_transport_options": dict(options),
    }


def embedded_transport(var_dir: Path) -> dict[str, Any]:
    """Celery settings for the serverless broker and result store under ``var_dir``."""
    broker_dir = var_dir / "broker"
    queue_dir = broker_dir / "queue"
    control_dir = broker_dir / "control"
    results_dir = var_dir / "results"
    for folder in (queue_dir, control_dir, results_dir):
        folder.mkdir(parents=True, exist_ok=True)
    return {
        "broker_url": "filesystem://localhost/",
        # Celery takes the path after file:// verbatim (no percent-decoding).
        "result_backend": f"file://{results_dir}",
        "broker_transport_options": {
            "data_folder_in": str(queue_dir),
            "data_folder_out": str(queue_dir),
            "control_folder": str(control_dir),
            # The transport polls its folder; Kombu's default of 1 s makes every task and
            # every `ping` reply wait up to a second.
            "polling_interval": 0.1,
        },
        "result_backend_transport_options": {},
    }
