"""The two ends of the embedded broker's race test, importable without Django (the test runs
them in spawned processes)."""

from __future__ import annotations

import multiprocessing
from typing import Any

from kombu import Connection

from hearts_runner.broker import EMBEDDED_TRANSPORT

#: What the writer sends after its messages, once for each reader: "no more".
END = {"end": True}


def put(options: dict[str, Any], count: int, readers: int) -> None:
    with Connection("filesystem://", transport=EMBEDDED_TRANSPORT, transport_options=options) as c:
        queue = c.SimpleQueue("race")
        for i in range(count):
            queue.put({"i": i, "code": "x" * 20_000})  # a job's size: a bot's code rides along
        for _ in range(readers):
            queue.put(END)


def take(options: dict[str, Any], results: multiprocessing.Queue[Any], patience: float) -> None:
    """Take messages until one says there are no more (sent after all the others: each
    reader stops at one), or until none came for ``patience`` seconds: the writer is gone."""
    taken, broken = [], []
    with Connection("filesystem://", transport=EMBEDDED_TRANSPORT, transport_options=options) as c:
        queue = c.SimpleQueue("race")
        while True:
            try:
                message = queue.get(timeout=patience)
            except queue.Empty:
                broken.append(f"no message for {patience:g} s, and no end")
                break
            except Exception as error:  # noqa: BLE001 — what the test counts
                broken.append(repr(error))
                continue
            message.ack()
            if message.payload == END:
                break
            taken.append(message.payload["i"])
    results.put((taken, broken))
