"""Platform throughput and the rankings endpoint.

    .venv/bin/python bench/platform_bench.py [--matches 40] [--stored 10000]

1. Ladder matches per minute through Celery with 1 and with 2 worker processes, each match a
   game to 100 between four uploaded bots (sandboxed where the host can), and the scaling.
2. ``GET /api/ladders/{id}/rankings/`` latency (p50, p99) with --stored matches in the
   ladder's history, and its query count at a tenth of that and at all of it.

Runs on a fresh SQLite database and the embedded broker in a temporary folder, unless
--use-env (then DATABASE_URL / REDIS_URL as configured, e.g. PostgreSQL and Redis).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid

from django_setup import ROOT, setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--stored", type=int, default=10_000)
    parser.add_argument("--use-env", action="store_true")
    args = parser.parse_args()
    setup_django(use_env=args.use_env, prefix="bidel-bench-")
    from django.conf import settings

    from bots_sdk.sandbox import SandboxUnavailable, default_launcher

    try:
        default_launcher()
        sandbox = "sandboxed"
    except SandboxUnavailable as exc:
        os.environ["BIDEL_UNSAFE_NO_SANDBOX"] = "1"
        settings.BIDEL_UNSAFE_NO_SANDBOX = True
        sandbox = f"NOT sandboxed ({exc})"
    versions = _uploaded_bots()
    print(f"Ladder matches (games to 100, four uploaded bots, {sandbox}), {args.matches} per run:")
    rates = {}
    for processes in (1, 2):
        rates[processes] = _throughput(versions, args.matches, processes)
        label = f"{processes} worker process{'es' if processes > 1 else ''}"
        print(f"  {label}: {rates[processes]:7.1f} matches/minute")
    print(f"  scaling 1 -> 2 processes: {rates[2] / rates[1]:.2f}x")
    _rankings(args.stored)


def _uploaded_bots() -> list:
    from arena import services

    user = services.user_create(
        username=f"bench-{uuid.uuid4().hex[:6]}", password="bench passphrase"
    )
    examples = ROOT / "bots_sdk" / "examples"
    versions = []
    for i, example in enumerate(["ducker", "dumper", "ducker", "dumper"]):
        bot = services.bot_create(owner=user, name=f"{example}-{i}-{uuid.uuid4().hex[:4]}")
        code = (examples / f"{example}.py").read_bytes()
        version = services.version_upload(bot=bot, user=user, filename=f"{example}.py", data=code)
        versions.append(services.version_validate(version_id=version.pk))  # (here, at once)
    return versions


def _throughput(versions: list, count: int, processes: int) -> float:
    from arena import services
    from arena.models import Match
    from hearts_runner.config import FORBIDDEN
    from tests.support import celery_worker, child_env

    env = child_env({})
    runner_env = {k: v for k, v in env.items() if k not in FORBIDDEN}
    tag = uuid.uuid4().hex[:4]
    # a platform worker (claims, stores, rates) and a runner (plays), as in `make demo`
    with (
        celery_worker(
            env=env,
            hostname=f"bench-{processes}-{tag}@bench",
            queues=["celery"],
            concurrency=processes,
        ),
        celery_worker(
            env=runner_env,
            hostname=f"bench-runner-{processes}-{tag}@bench",
            queues=["runner"],
            concurrency=processes,
            app="hearts_runner",
        ),
    ):
        started = time.perf_counter()
        ids = [
            services.match_create(
                kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(version=v) for v in versions]
            ).pk
            for _ in range(count)
        ]
        done = [Match.Status.FINISHED, Match.Status.FAILED]
        while Match.objects.filter(pk__in=ids).exclude(status__in=done).exists():
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
    failed = Match.objects.filter(pk__in=ids, status=Match.Status.FAILED).count()
    if failed:
        print(f"  ({failed} matches failed)")
    return count / elapsed * 60


def _rankings(stored: int) -> None:
    import random

    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from arena import services
    from arena.models import Ladder, LadderEntry, Match, MatchSeat

    ladder = Ladder.objects.create(name=f"bench-{uuid.uuid4().hex[:6]}", rules="standard")
    entries = [
        LadderEntry.objects.create(ladder=ladder, builtin=b)
        for b in ("random", "low", "heuristic", "montecarlo")
    ]
    rng = random.Random(1)
    client = Client()
    counts = {}
    kind, finished = Match.Kind.LADDER, Match.Status.FINISHED
    for target in (stored // 10, stored):
        have = Match.objects.filter(ladder=ladder).count()
        for start in range(have, target, 1000):
            batch = Match.objects.bulk_create(
                Match(kind=kind, status=finished, ladder=ladder, seed=i, rules="standard")
                for i in range(start, min(start + 1000, target))
            )
            seats = []
            for match in batch:
                order = rng.sample(range(4), 4)
                seats += [
                    MatchSeat(
                        match=match,
                        seat=s,
                        entry=entries[s],
                        builtin=entries[s].builtin,
                        rank=order[s],
                        score=order[s],
                    )
                    for s in range(4)
                ]
            MatchSeat.objects.bulk_create(seats)
        started = time.perf_counter()
        services.ratings_recompute(ladder=ladder)
        fit = time.perf_counter() - started
        with CaptureQueriesContext(connection) as queries:
            client.get(f"/api/ladders/{ladder.pk}/rankings/")
        counts[target] = len(queries)
        print(f"Ratings refit over {target} matches: {fit * 1000:.0f} ms")
    times = []
    for _ in range(200):
        started = time.perf_counter()
        response = client.get(f"/api/ladders/{ladder.pk}/rankings/")
        times.append(time.perf_counter() - started)
        assert response.status_code == 200
    times.sort()
    p50, p99 = statistics.median(times) * 1000, times[int(0.99 * len(times)) - 1] * 1000
    print(f"GET rankings with {stored} matches stored: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    tenth = stored // 10
    print(
        f"  queries per request: {counts[tenth]} at {tenth} matches, {counts[stored]} at {stored}"
    )


if __name__ == "__main__":
    main()
