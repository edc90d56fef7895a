"""Where Celery's messages and results go: Redis when ``REDIS_URL`` is set, else an embedded
broker in the project's var/ folder that needs no server.

The embedded broker is Kombu's filesystem transport (one file per message, fanout supported so
``celery inspect``/``ping`` work) with Celery's filesystem result backend. Real worker processes
consume it exactly as they consume Redis. :class:`EmbeddedTransport` makes both ends of a
message atomic: Kombu's own writes the message file in place and claims it by moving it to the
system's temporary folder, so a consumer polling at the wrong moment took a half-written (often
empty) file, failed to decode it and lost the message, or its worker; here a message is written
under a hidden name and renamed into the queue when complete, and claimed by a rename within
the broker's folder. Its limit:
a message is removed when a worker takes it, not when the task is acknowledged, so a worker
killed mid-task loses that message; the platform's lease reaper, not the broker, is what
re-runs such work (docs/architecture.md).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from time import monotonic_ns
from typing import Any

from kombu.transport import filesystem
from kombu.utils.json import dumps, loads

#: How Celery names this transport (its ``broker_transport`` setting).
EMBEDDED_TRANSPORT = "hearts_runner.broker:EmbeddedTransport"


class EmbeddedChannel(filesystem.Channel):
    """Kombu's filesystem channel with atomic put and claim (see the module's docstring)."""

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        # Fixed-width nanoseconds: names sort in the order one process sent them (Kombu's
        # milliseconds shuffle the messages of the same millisecond).
        name = f"{monotonic_ns():020d}_{uuid.uuid4()}.{queue}.msg"
        folder = Path(self.data_folder_out)
        # A hidden name ("." + ...) never matches a queue's "<stamp>_<uuid>.<queue>.msg".
        partial = folder / f".{name}.part"
        partial.write_bytes(dumps(payload).encode())
        os.replace(partial, folder / name)

    def _get(self, queue: str, timeout: Any = None) -> Any:
        wanted = f"{queue}.msg"
        inbox = Path(self.data_folder_in)
        claimed = Path(self.processed_folder)
        for name in sorted(os.listdir(inbox)):
            if name.partition(".")[2] != wanted:
                continue
            mine = claimed / name
            try:
                os.rename(inbox / name, mine)  # atomic: exactly one consumer wins it
            except FileNotFoundError:
                continue  # another consumer claimed it first
            payload = mine.read_bytes()
            if not self.store_processed:
                mine.unlink()
            return loads(payload)
        raise filesystem.Empty()


class EmbeddedTransport(filesystem.Transport):
    Channel = EmbeddedChannel


def redis_transport(redis_url: str, *, hard_time_limit: int) -> dict[str, Any]:
    """Celery settings (lower-case names) for Redis as broker and result backend."""
    # A task not acknowledged within visibility_timeout is handed to another worker. It must
    # exceed twice the hard time limit, the same in broker and backend, or a long match runs
    # several times at once.
    options = {"visibility_timeout": 2 * hard_time_limit + 120}
    return {
        "broker_url": redis_url,
        "broker_transport": None,
        "result_backend": redis_url,
        "broker_transport_options": options,
        "result_backend_transport_options": dict(options),
    }


def embedded_transport(var_dir: Path) -> dict[str, Any]:
    """Celery settings for the serverless broker and result store under ``var_dir``."""
    broker_dir = var_dir / "broker"
    queue_dir = broker_dir / "queue"
    control_dir = broker_dir / "control"
    claimed_dir = broker_dir / "claimed"  # the same file system as the queue: renames are atomic
    results_dir = var_dir / "results"
    for folder in (queue_dir, control_dir, claimed_dir, results_dir):
        folder.mkdir(parents=True, exist_ok=True)
    return {
        "broker_url": "filesystem://localhost/",
        "broker_transport": EMBEDDED_TRANSPORT,
        # Celery takes the path after file:// verbatim (no percent-decoding).
        "result_backend": f"file://{results_dir}",
        "broker_transport_options": {
            "data_folder_in": str(queue_dir),
            "data_folder_out": str(queue_dir),
            "control_folder": str(control_dir),
            "processed_folder": str(claimed_dir),
            # The transport polls its folder; Kombu's default of 1 s makes every task and
            # every `ping` reply wait up to a second.
            "polling_interval": 0.1,
        },
        "result_backend_transport_options": {},
    }
