"""Helpers for tests that run the platform on real worker processes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.db import connection

from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from tests.support import child_env


def sandbox_env() -> dict[str, str | None]:
    try:
        default_launcher()
        return {"BIDEL_UNSAFE_NO_SANDBOX": None}
    except SandboxUnavailable:
        return {"BIDEL_UNSAFE_NO_SANDBOX": "1"}  # a development machine without a sandbox


def worker_env(**extra: str) -> dict[str, str]:
    """The test database for the worker processes (it is not the default one)."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        url = f"sqlite:///{db['NAME']}"
    else:
        url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
    return child_env({"DATABASE_URL": url, **sandbox_env(), **extra})


def wait_until(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Check ``condition`` until it holds (a database state written by a worker)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)  # polling a state; the condition, not the time, ends the wait
    raise AssertionError(f"timed out waiting for {what}")


def synthetic_history(ladder: Any, total: int, rng: Any) -> None:
    """Finished ladder matches with random finishing orders until the ladder has ``total``
    (no game played: for tests of reads at scale)."""
    from arena.models import LadderEntry, Match, MatchSeat

    entries = list(LadderEntry.objects.filter(ladder=ladder).order_by("pk"))[:4]
    have = Match.objects.filter(ladder=ladder).count()
    batch = Match.objects.bulk_create(
        Match(kind="ladder", status="finished", ladder=ladder, seed=i, rules="standard")
        for i in range(have, total)
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=m, seat=s, entry=entries[s], builtin=entries[s].builtin, rank=r, score=r)
        for m in batch
        for s, r in enumerate(rng.sample(range(4), 4))
    )
