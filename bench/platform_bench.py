"""Platform throughput and the rankings endpoint.

    .venv/bin/python bench/platform_bench.py [--matches 40] [--stored 10000]
    .venv/bin/python bench/platform_bench.py --use-env --baseline HEAD~3 [--rounds 3]

1. Ladder matches per minute through Celery with 1 and with 2 worker processes, each match a
   game to 100 between four uploaded bots (sandboxed where the host can), and the scaling.
2. ``GET /api/ladders/{id}/rankings/`` latency (p50, p99) with --stored matches in the
   ladder's history, and its query count at a tenth of that and at all of it.

With ``--baseline REV``, only matches per minute with 2 worker processes, this tree's runner
against REV's (its engine, SDK and bot start-up; exported with ``git archive``, its engine
compiled when REV knows how), the platform worker being this tree's for both: ``--rounds``
rounds, the two taking turns, each reporting its median round, and the CPU a match costs
beyond the runner (median over the rounds): the platform worker (claiming, storing, rating:
Celery's share included), PostgreSQL and Redis. The runner's own (bots included, which a
session's accounting misses) is what bench/match_profile.py splits.

Runs on a fresh SQLite database and the embedded broker in a temporary folder, unless
--use-env (then DATABASE_URL / REDIS_URL as configured, e.g. PostgreSQL and Redis).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid

from django_setup import ROOT, setup_django, upload_example_bots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--stored", type=int, default=10_000)
    parser.add_argument("--use-env", action="store_true")
    parser.add_argument("--baseline", metavar="REV", help="compare the runner with REV's")
    parser.add_argument("--rounds", type=int, default=3)
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
    versions = upload_example_bots("bench")
    if args.baseline:
        _against_baseline(versions, args.matches, args.rounds, args.baseline, sandbox)
        return
    print(f"Ladder matches (games to 100, four uploaded bots, {sandbox}), {args.matches} per run:")
    rates = {}
    for processes in (1, 2):
        rates[processes] = _throughput(versions, args.matches, processes)
        label = f"{processes} worker process{'es' if processes > 1 else ''}"
        print(f"  {label}: {rates[processes]:7.1f} matches/minute")
    print(f"  scaling 1 -> 2 processes: {rates[2] / rates[1]:.2f}x")
    _rankings(args.stored)


def _against_baseline(versions: list, count: int, rounds: int, rev: str, sandbox: str) -> None:
    import subprocess

    from trees import export

    import engine

    commit, tree = export(rev)
    build = subprocess.run(
        [sys.executable, "-c", "import engine; print(getattr(engine, 'BUILD', 'pure'))"],
        cwd=tree,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tree)},
    ).stdout.strip()
    trees = {
        f"{commit} (baseline; engine {build})": tree,
        f"this tree (engine {engine.BUILD})": ROOT,
    }
    print(
        f"Ladder matches per minute, 2 worker processes (games to 100, four uploaded bots, "
        f"{sandbox}), {count} per run, {rounds} rounds, the runners taking turns:"
    )
    rates: dict[str, list[float]] = {name: [] for name in trees}
    cpu: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, source in trees.items():
            rates[name].append(_throughput(versions, count, 2, runner_tree=source))
            cpu[name].append(_CPU_PER_MATCH[-1])
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, value in medians.items():
        print(f"  {name:50} {value:7.1f}  (rounds: {', '.join(f'{r:.0f}' for r in rates[name])})")
    base, ours = medians.values()
    print(f"  ratio, this tree to {commit}: {ours / base:.2f}x")
    print("CPU per match beyond the runner, ms (median of the rounds):")
    for name, runs in cpu.items():
        roles = [role for role in runs[0] if role != "runner"]
        shares = {role: statistics.median(run[role] for run in runs) * 1000 for role in roles}
        parts = ", ".join(f"{role} {ms:.0f}" for role, ms in shares.items())
        print(f"  {name:50} {sum(shares.values()):6.0f}  ({parts})")


def _throughput(versions: list, count: int, processes: int, runner_tree=None) -> float:  # noqa: ANN001
    from arena import services
    from arena.models import Match
    from hearts_runner.config import FORBIDDEN
    from tests.support import celery_worker, child_env

    env = child_env({})
    runner_env = {k: v for k, v in env.items() if k not in FORBIDDEN}
    if runner_tree is not None and runner_tree != ROOT:
        runner_env["PYTHONPATH"] = str(runner_tree)
    tag = uuid.uuid4().hex[:4]
    # a platform worker (claims, stores, rates) and a runner (plays), as in `make demo`
    with (
        celery_worker(
            env=env,
            hostname=f"bench-{processes}-{tag}@bench",
            queues=["celery"],
            concurrency=processes,
        ) as platform,
        celery_worker(
            env=runner_env,
            hostname=f"bench-runner-{processes}-{tag}@bench",
            queues=["runner"],
            concurrency=processes,
            app="hearts_runner",
            cwd=runner_tree or ROOT,
        ) as runner,
    ):
        roles = {"runner": runner.process.pid, "platform worker": platform.process.pid}
        before = _cpu_by_role(roles)
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
        after = _cpu_by_role(roles)
    _CPU_PER_MATCH.append({role: (after[role] - before[role]) / count for role in after})
    failed = Match.objects.filter(pk__in=ids, status=Match.Status.FAILED).count()
    if failed:
        print(f"  ({failed} matches failed)")
    return count / elapsed * 60


#: CPU seconds per match by role, one entry per _throughput run (appended in order).
_CPU_PER_MATCH: list[dict[str, float]] = []
_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_by_role(sessions: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each worker's session (its processes, with what they reaped:
    the bots a runner started) and of the PostgreSQL and Redis servers, from /proc."""
    totals = dict.fromkeys([*sessions, "postgresql", "redis"], 0.0)
    by_session = {sid: role for role, sid in sessions.items()}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                head, _, rest = stat.read().rpartition(")")
        except OSError:
            continue
        fields = rest.split()
        command = head.partition("(")[2]
        session = int(fields[3])
        seconds = sum(int(f) for f in fields[11:15]) / _TICKS  # utime stime cutime cstime
        if session in by_session:
            totals[by_session[session]] += seconds
        elif command.startswith("postgres"):
            totals["postgresql"] += seconds
        elif command.startswith("redis-server"):
            totals["redis"] += seconds
    return totals


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
