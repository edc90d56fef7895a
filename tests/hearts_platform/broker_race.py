"""The two ends of the embedded broker's race test, importable without Django (the test runs
them in spawned processes)."""

from __future__ import annotations

import multiprocessing
from typing import Any

from kombu import Connection

from hearts_runner.broker import EMBEDDED_TRANSPORT


def put(options: dict[str, Any], count: int) -> None:
    with Connection("filesystem://", transport=EMBEDDED_TRANSPORT, transport_options=options) as c:
        queue = c.SimpleQueue("race")
        for i in range(count):
            queue.put({"i": i, "code": "x" * 20_000})  # a job's size: a bot's code rides along


def take(options: dict[str, Any], results: multiprocessing.Queue[Any]) -> None:
    taken, broken = [], []
    with Connection("filesystem://", transport=EMBEDDED_TRANSPORT, transport_options=options) as c:
        queue = c.SimpleQueue("race")
        while True:
            try:
                message = queue.get(timeout=5)
            except queue.Empty:
                break  # the writer is done and the other reader took the rest
            except Exception as error:  # noqa: BLE001 — what the test counts
                broken.append(repr(error))
                continue
            message.ack()
            taken.append(message.payload["i"])
    results.put((taken, broken))
