"""The suite's one deadline for whatever a test awaits (:data:`DEADLINE`, :func:`wait_until`):
no Django here, so that the root conftest can read it before the settings load."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

#: Seconds, where ``BIDEL_TEST_DEADLINE`` is not set.
DEFAULT_DEADLINE = 60.0


def _deadline() -> float:
    text = os.environ.get("BIDEL_TEST_DEADLINE", f"{DEFAULT_DEADLINE:g}")
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise ValueError(f"BIDEL_TEST_DEADLINE={text!r} is not a positive number of seconds")
    return seconds


#: Seconds a test waits for anything it awaits — a process to answer, a worker's result, a
#: page's event — before it fails saying what it awaited (``BIDEL_TEST_DEADLINE``, 60 by
#: default; raise it on a slow machine). Work known to be long waits a stated multiple of it.
#: A verdict never rests on something happening sooner: a busy machine is only slower.
DEADLINE = _deadline()

#: Seconds for work known to be long — a build of the engine or of the SDK's wheel, a fresh
#: venv, a suite run in a subprocess: ten deadlines (600 by default), however busy the machine.
LONG = 10 * DEADLINE
#: The bound of a test that does such work, or waits for another worker's (a shared build):
#: a few of :data:`LONG` (``pytest.mark.timeout(LONG_TEST)``), never the suite's per-test 300 s,
#: which a build alone passes on a busy machine.
LONG_TEST = 3 * LONG

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], what: str, *, deadline: float = DEADLINE, interval: float = 0.2
) -> T:
    """Check ``condition`` every ``interval`` seconds until it returns something true, and
    return that; after ``deadline`` seconds of false answers, fail saying what was awaited
    (``what``: "the match to finish") and how long."""
    started = time.monotonic()
    while True:
        value = condition()
        if value:
            return value
        waited = time.monotonic() - started
        if waited >= deadline:
            raise AssertionError(
                f"waited {waited:.1f} s for {what}, in vain (the deadline: {deadline:g} s; "
                f"BIDEL_TEST_DEADLINE={DEADLINE:g})"
            )
        time.sleep(min(interval, deadline - waited))  # (the condition ends the wait, not this)
