"""Live viewing: how fast a move reaches its spectators, and what publishing costs the runner.

    .venv/bin/python bench/live_bench.py [--spectators 1 10 100] [--hands 4] [--use-env]

For each spectator count, one match (four sandboxed example bots where the host can sandbox,
games of --hands hands) is played by this process exactly as a runner plays a job, publishing
its live feed, while that many WebSocket clients (another process) watch it through a real
uvicorn server (two worker processes, as `make demo` runs it), the spectators spread over
--processes client processes (many browsers are many machines). Printed: move-delivery latency
p50 / p99 / max (from the runner's publish to the client's receipt, one clock), the events,
and the runner's CPU per match with and without the feed (medians of interleaved rounds).

The feed is files in a scratch folder (the embedded default), or with --use-env the configured
DATABASE_URL and REDIS_URL (Redis: the production feed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django_setup import ROOT, setup_django

CLAIM = "bench-claim"


def spectate(url: str, count: int) -> None:
    """The spectators' process: ``count`` clients; prints "ready", then one JSON line."""
    import websockets

    async def one(ready: asyncio.Event, hellos: list[int]) -> list[tuple[int, float]]:
        origin = "http://" + url.split("/")[2]
        seen: list[tuple[int, float]] = []
        async with websockets.connect(url, origin=origin, max_size=None) as client:
            async for message in client:
                now = time.time()
                event = json.loads(message)
                if event["type"] == "hello":
                    hellos.append(1)
                    if len(hellos) == count:
                        ready.set()
                    continue
                seen.append((event["seq"], now))
                if event["type"] == "end":
                    return seen
        return seen

    async def main() -> None:
        ready = asyncio.Event()
        hellos: list[int] = []
        tasks = [asyncio.create_task(one(ready, hellos)) for _ in range(count)]
        await ready.wait()
        print("ready", flush=True)
        print(json.dumps(await asyncio.gather(*tasks)), flush=True)

    asyncio.run(main())


def _move_delays(published: dict[int, float], seen: list[list[float]]) -> list[float]:
    """Per published event and client: from its publication to the client's receipt of it or
    of a later event that shows it (a frame shows its whole hand; a client that falls behind
    gets the newest frame only)."""
    delays = []
    for client in seen:
        received = sorted((int(seq), at) for seq, at in client)
        index = 0
        for seq in sorted(published):
            while index < len(received) and received[index][0] < seq:
                index += 1
            assert index < len(received), f"event {seq} never reached a client"
            delays.append(received[index][1] - published[seq])
    return delays


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(port: int) -> subprocess.Popen[str]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "hearts_platform.asgi:application",
            "--host=127.0.0.1",
            f"--port={port}",
            "--workers=2",
            "--ws=websockets-sansio",
            "--lifespan=off",
            "--log-level=warning",
        ],
        cwd=ROOT,
        env=dict(os.environ),
        text=True,
    )
    deadline = time.monotonic() + 60
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        if time.monotonic() > deadline or server.poll() is not None:
            raise SystemExit("uvicorn did not start")
        time.sleep(0.05)  # waiting for the server to listen


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spectators", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--hands", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="runner-cost rounds")
    parser.add_argument("--processes", type=int, default=4, help="spectator processes")
    parser.add_argument("--use-env", action="store_true")
    parser.add_argument("--spectate", nargs=2, metavar=("URL", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spectate:
        spectate(args.spectate[0], int(args.spectate[1]))
        return
    setup_django(use_env=args.use_env, prefix="bidel-live-bench-")

    from arena import services
    from arena.models import Match
    from bots_sdk import examples
    from bots_sdk.referee.jobs import Job, run_job
    from bots_sdk.referee.participants import Participant
    from bots_sdk.sandbox import SandboxUnavailable, default_launcher
    from hearts_runner import live

    try:
        default_launcher()
        unsafe, sandbox = False, "sandboxed"
    except SandboxUnavailable as exc:
        unsafe, sandbox = True, f"UNSANDBOXED ({exc})"
    code = (Path(examples.__file__).parent / "ducker.py").read_bytes()
    seats = tuple(Participant.from_code("ducker.py", code) for _ in range(4))
    feed = live.feed_from_environment()
    print(f"feed: {type(feed).__name__}; bots: 4 × examples/ducker.py, {sandbox}; ", end="")
    print(f"{args.hands} hands per match")

    def job(match_id: int, watched: bool) -> Job:
        return Job(
            kind="match",
            ref=match_id,
            claim=CLAIM,
            rules="standard",
            seed=match_id,
            hands=args.hands,
            seats=seats,
            live="all" if watched else "",
        )

    def play(match_id: int, watched: bool) -> tuple[float, int]:
        publish = live.publisher_for("match", match_id, CLAIM, wanted=watched)
        started = time.process_time()
        result = run_job(job(match_id, watched), unsafe=unsafe, publish=publish)
        assert result.ok, result.error
        return time.process_time() - started, publish.seq if publish else 0

    def new_match() -> int:
        match = services.match_create(
            kind=Match.Kind.CHALLENGE,
            seats=[services.SeatSpec(builtin="low")] * 4,
            hands=args.hands,
        )
        Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING, claim_token=CLAIM)
        return match.pk

    port = _free_port()
    server = _serve(port)
    try:
        print(
            f"\n{'spectators':>10} {'published':>9} {'received':>9} {'p50 ms':>8} {'p99 ms':>8} "
            f"{'max ms':>8}"
        )
        for count in args.spectators:
            match_id = new_match()
            url = f"ws://127.0.0.1:{port}/ws/matches/{match_id}/live/"
            # Spectators are many browsers: spread over a few processes, as they would be.
            groups = [
                count // args.processes + (i < count % args.processes)
                for i in range(args.processes)
            ]
            watchers = [
                subprocess.Popen(
                    [sys.executable, __file__, "--spectate", url, str(size)],
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                for size in groups
                if size
            ]
            for watcher in watchers:
                assert watcher.stdout is not None
                assert watcher.stdout.readline().strip() == "ready", "spectators did not connect"
            play(match_id, True)
            seen: list[list[Any]] = []
            for watcher in watchers:
                assert watcher.stdout is not None
                seen += json.loads(watcher.stdout.readline())
                watcher.wait(timeout=60)
            history = [json.loads(line) for line in feed.history(live.key_for("match", match_id))]
            published = {e["seq"]: e["at"] for e in history}
            delays = [d * 1000 for d in _move_delays(published, seen)]
            received = statistics.mean(len(client) for client in seen)
            print(
                f"{count:>10} {len(published):>9} {received:>9.0f} "
                f"{_percentile(delays, 0.5):>8.1f} {_percentile(delays, 0.99):>8.1f} "
                f"{max(delays):>8.1f}"
            )
        costs: dict[bool, list[float]] = {False: [], True: []}
        events = 0
        for _ in range(args.rounds):
            for watched in (False, True):
                seconds, published = play(new_match(), watched)
                costs[watched].append(seconds)
                events = published or events
        plain, watched_cost = (statistics.median(costs[w]) for w in (False, True))
        print(
            f"\nrunner CPU per match (median of {args.rounds}): unwatched {plain * 1000:.0f} ms, "
            f"published live {watched_cost * 1000:.0f} ms: +{(watched_cost - plain) * 1000:.0f} "
            f"ms for {events} events ({(watched_cost - plain) / max(events, 1) * 1e6:.0f} µs "
            f"each, {watched_cost / plain:.2f}×)"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    if re.search(r"--spectate", " ".join(sys.argv)):
        sys.path.insert(0, str(ROOT))
    main()
