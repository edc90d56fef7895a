"""Helpers for tests that run the platform on real worker processes."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import connection
from rest_framework.test import APIClient

from arena import services
from arena.models import BotVersion, Ladder, Match
from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from tests.support import child_env, wait_until


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


def health_listing(hostname: str, tier: str) -> tuple[Any, dict[str, Any]]:
    """GET /api/health/ until its ``tier`` ("workers" or "runners") lists the worker
    ``hostname``: the answer and its body. The report asks every worker and takes the replies
    that come within HEALTH_TIMEOUT (a second): a worker just started, on a busy machine, may
    miss a report; it is asked again until it answers in time."""

    def listed() -> tuple[Any, dict[str, Any]] | None:
        response = APIClient().get("/api/health/")
        body = response.json()
        return (response, body) if hostname in body[tier][tier] else None

    return wait_until(listed, f"/api/health/ to list {hostname} among its {tier}")


#: A bot that takes 0.3 s at every decision, whatever the machine's speed.
SLOW_BOT = b"""import time
from bots_sdk import Bot, lowest


class Slowpoke(Bot):
    def pass_cards(self, view):
        time.sleep(0.3)
        return view.hand[:3]

    def play(self, view):
        time.sleep(0.3)
        return lowest(view.legal)
"""


def slow_ladder_match(ladder: Ladder, seed: int | None = None) -> Match:
    """A queued two-hand match of ``ladder`` between :data:`SLOW_BOT` (an active version of a
    bot entered in it) and three of its built-ins. It lasts 8 s at least (28 decisions of
    the slow bot), however fast the machine: a worker killed once it is playing is killed
    mid-match (built-ins alone once finished before the kill)."""
    owner = services.user_create(username="slow", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="slowpoke", join_ladders=[])
    version = BotVersion.objects.create(
        bot=bot,
        number=1,
        filename="bot.py",
        code=SLOW_BOT,
        sha256=hashlib.sha256(SLOW_BOT).hexdigest(),
        status=BotVersion.Status.ACTIVE,
    )
    slow, _ = services.ladder_join(ladder=ladder, bot=bot)
    builtins = list(ladder.entries.exclude(builtin="").order_by("pk")[:3])
    return services.match_create(
        kind=Match.Kind.LADDER,
        ladder=ladder,
        hands=2,
        rules="standard",
        seed=seed,
        seats=[
            services.SeatSpec(version=version, entry=slow),
            *(services.SeatSpec(builtin=e.builtin, entry=e) for e in builtins),
        ],
    )


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
