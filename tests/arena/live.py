"""Helpers for tests that run the platform on real worker processes."""

from __future__ import annotations

import hashlib
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

from arena import services
from arena.models import Bot, BotVersion, Ladder, Match
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


def staff_client() -> APIClient:
    """A client of a staff account: it reads the health report's details."""
    users = get_user_model().objects
    staff = users.filter(username="health-staff").first()
    if staff is None:
        staff = users.create_user("health-staff", is_staff=True)
    client = APIClient()
    client.force_authenticate(staff)
    return client


def health_listing(hostname: str, tier: str) -> tuple[Any, dict[str, Any]]:
    """GET /api/health/ as staff until its ``tier`` ("workers" or "runners") lists the
    worker ``hostname`` (its first heartbeat comes once it consumes): the answer and its
    body."""
    client = staff_client()

    def listed() -> tuple[Any, dict[str, Any]] | None:
        response = client.get("/api/health/")
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


def slow_ladder_match(ladder: Ladder, seed: int | None = None, hands: int = 2) -> Match:
    """A queued match of ``hands`` hands of ``ladder`` between :data:`SLOW_BOT` (an active
    version of a bot entered in it) and three of its built-ins. It lasts 4 s a hand at least
    (14 decisions of the slow bot), however fast the machine: a worker killed once it is
    playing is killed mid-match (built-ins alone once finished before the kill)."""
    bot = Bot.objects.filter(name="slowpoke").first()
    if bot is None:
        owner = services.user_create(username="slow", password="a long passphrase")
        bot = services.bot_create(owner=owner, name="slowpoke", join_ladders=[])
        BotVersion.objects.create(
            bot=bot,
            number=1,
            filename="bot.py",
            code=SLOW_BOT,
            sha256=hashlib.sha256(SLOW_BOT).hexdigest(),
            status=BotVersion.Status.ACTIVE,
        )
    version = bot.versions.get(number=1)
    slow, _ = services.ladder_join(ladder=ladder, bot=bot)
    builtins = list(ladder.entries.exclude(builtin="").order_by("pk")[:3])
    return services.match_create(
        kind=Match.Kind.LADDER,
        ladder=ladder,
        hands=hands,
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
