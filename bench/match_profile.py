"""Where a ladder match's CPU goes: a game to 100 between four uploaded, sandboxed bots.

    .venv/bin/python bench/match_profile.py [--matches 6] [--starts 20] [--use-env]

Plays the job the platform sends a runner (``arena.services.dispatch`` builds it from a stored
match, the runner's ``run_job`` plays it, the platform's ``job_store`` stores and rates it), here
in one process, and splits its CPU:

- the bots' processes (every seat's whole process tree: start-up and decisions), from each
  seat's cgroup;
- one bot's start-up alone (sandbox, interpreter, imports, hello; --starts of them), so the
  share of start-up in the bots' CPU shows;
- the referee's CPU (matches played unprofiled, publishing their live feed as a runner does:
  files, or Redis with --use-env), split by the shares a profile of as many more matches
  gives: the live feed, the engine, the protocol (encoding views, reading answers), launching
  the sandbox, the rest of the runner (the feed's sending thread is outside the profile: its
  CPU is in the referee's, spread over the shares);
- storing the result (``job_store``: database writes, ratings).

The engine build in use is printed first (``BIDEL_ENGINE=pure`` to profile the pure one).
Celery's own share is what ``bench/platform_bench.py`` measures beyond these.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import time

from django_setup import setup_django, upload_example_bots

#: Where a profiled function's file lies -> the part of the referee it belongs to.
AREAS = (
    (
        "live feed (frames, publishing)",
        (
            "/hearts_runner/live.py",
            "/bots_sdk/referee/frames.py",
            "orjson",
            "/redis/",
            "threading.py",
        ),
    ),
    ("engine", ("/engine/", "'GameState' objects", "'RuleSet' objects", "engine.")),
    (
        "protocol",
        ("/bots_sdk/protocol.py", "/bots_sdk/referee/players.py", "/bots_sdk/view.py", "json/"),
    ),
    (
        "sandbox launch",
        (
            "/bots_sdk/sandbox/",
            "/bots_sdk/builds/",
            "subprocess.py",
        ),
    ),
    (
        "waiting (bots, processes)",
        (
            "selectors.py",
            "'poll' of",
            "'select' of",
            "built-in method select",
            "time.sleep",
            "posix.waitpid",
            "_wait",
        ),
    ),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=6)
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--use-env", action="store_true")
    args = parser.parse_args()
    setup_django(use_env=args.use_env, prefix="bidel-profile-")
    import engine
    from arena import services
    from arena.models import Match
    from arena.services import dispatch as jobs
    from bots_sdk.referee import players
    from bots_sdk.referee.jobs import run_job
    from bots_sdk.sandbox import SandboxUnavailable, default_launcher
    from hearts_runner import live

    try:
        default_launcher()
    except SandboxUnavailable as exc:
        raise SystemExit(f"no sandbox here ({exc}): the profile is of sandboxed bots") from None
    print(f"engine: {engine.BUILD}")
    versions = upload_example_bots("profile")

    # Each seat's CPU (its whole process tree, start-up included, from its cgroup), read as
    # its player closes: instrumentation of this script only.
    seat_cpu: list[float] = []
    close = players.ProcessPlayer.close

    def closing(player: players.ProcessPlayer) -> str:
        cpu = player._cpu()
        seat_cpu.append(cpu or 0.0)
        return close(player)

    players.ProcessPlayer.close = closing  # type: ignore[method-assign]

    # 1. whole matches, as a runner plays them, then stored as the platform does: first
    # unprofiled (the CPU figures), then under the profiler (only its shares are used)
    profile = cProfile.Profile(time.process_time)  # CPU, not wall: waiting is not work
    walls, referee, bots, store, decisions, hands = [], [], [], [], [], []
    profiled = []
    for number in range(2 * args.matches):
        match = services.match_create(
            kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(version=v) for v in versions]
        )
        Match.objects.filter(pk=match.pk).update(
            status=Match.Status.RUNNING, claim_token=jobs.new_claim()
        )
        job = jobs._match_job(Match.objects.get(pk=match.pk))
        under_profile = number >= args.matches
        seat_cpu.clear()
        cpu, wall = time.process_time(), time.perf_counter()
        if under_profile:
            profile.enable()
        publish = live.publisher_for(job.kind, job.ref, job.claim, wanted=bool(job.live))
        result = run_job(job, runner="profile", publish=publish)
        if under_profile:
            profile.disable()
            profiled.append(time.process_time() - cpu)
        else:
            walls.append(time.perf_counter() - wall)
            referee.append(time.process_time() - cpu)
            bots.append(sum(seat_cpu))
        assert result.ok, result.error
        decisions.append(sum(len(s["move_ms"]) for s in result.game["seats"]))
        hands.append(len(result.game["hands"]))
        cpu = time.process_time()
        jobs.job_store(result=result.to_dict())
        store.append(time.process_time() - cpu)

    # 2. one bot's start-up alone: sandbox, interpreter, imports, hello, exit
    starts = _startups(versions[0], args.starts)

    median = statistics.median
    per_match = median(referee) + median(bots) + median(store)
    print(
        f"A match (game to 100, 4 sandboxed uploaded bots; median of {args.matches}): "
        f"{median(walls) * 1000:.0f} ms wall, {median(hands):.0f} hands, "
        f"{median(decisions):.0f} decisions, "
        f"{per_match * 1000:.0f} ms CPU:"
    )
    rows = [
        ("bots' processes (4 seats)", median(bots)),
        ("  of which start-up (4 x one bot's)", 4 * median(starts)),
        ("referee (runner)", median(referee)),
        *[(f"  {name}", median(referee) * share) for name, share in _areas(profile)],
        ("storing the result (job_store)", median(store)),
    ]
    for label, seconds in rows:
        print(f"  {label:40} {seconds * 1000:8.1f} ms  {100 * seconds / per_match:5.1f}%")
    print(f"One sandboxed bot's start-up alone: {median(starts) * 1000:.1f} ms CPU (median)")


def _startups(version, count: int) -> list[float]:  # noqa: ANN001 — a BotVersion
    import tempfile
    from pathlib import Path

    from bots_sdk.referee.players import ProcessPlayer
    from bots_sdk.sandbox import default_launcher
    from engine.rules import RuleSet

    path = Path(tempfile.mkdtemp(prefix="bidel-profile-bot-")) / version.filename
    path.write_bytes(bytes(version.code))
    spec = RuleSet.from_preset("standard").to_spec()
    cpu = []
    for _ in range(count):
        player = ProcessPlayer(path, default_launcher())
        fault = player.start(0, spec, 1)
        assert fault is None, fault
        cpu.append(player.cpu_mark)  # the bot's whole tree, from its cgroup, at "ready"
        player.close()
    return cpu


def _areas(profile: cProfile.Profile) -> list[tuple[str, float]]:
    """The shares of the referee's own CPU time (tottime, timed by process_time) by area."""
    totals = {name: 0.0 for name, _ in AREAS}
    totals["the rest of the runner"] = 0.0
    rest: list[tuple[float, str]] = []
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    for (file, _, function), (_, _, own, _, _) in stats.items():
        where = f"{file}:{function}"
        area = next((n for n, marks in AREAS if any(m in where for m in marks)), None)
        totals[area or "the rest of the runner"] += own
        if area is None:
            rest.append((own, where))
    if os.environ.get("BIDEL_PROFILE_REST"):
        for own, where in sorted(rest, reverse=True)[:12]:
            print(f"    {own * 1000:8.1f} ms  {where}")
    whole = sum(totals.values()) or 1.0
    return [(name, seconds / whole) for name, seconds in totals.items()]


if __name__ == "__main__":
    main()
