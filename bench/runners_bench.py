"""The runner tier: bots' start-up by sandbox backend, and matches per minute by deployment.

    .venv/bin/python bench/runners_bench.py [--startups 10] [--matches 8] [--no-compose]

1. Bot start-up (process or container start to the bot's ``ready``), a small bot:
   bubblewrap on this host; bubblewrap inside the runner's container (docker-compose.yml's
   image, user and privileges); the Docker backend with an empty pool (cold: the engine creates
   and starts a container) and with a warm pool (a started container takes the code).
2. Matches per minute (challenge matches, games to 100 between four uploaded bots,
   ``ladder_rate.py``): `make demo`'s form (embedded SQLite and broker, one platform worker and
   one runner of two processes each) vs docker-compose.yml with 1 and with 2 runner containers
   (two processes each) on PostgreSQL and Redis.

Needs root and a Docker engine with the images (deploy/docker-engine.sh, deploy/base-image.sh);
it builds bidel:latest and the bots' image itself. What it cannot run it names and skips.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from match_bench import BOT  # noqa: E402 — (the same small bot as the match bench)

# Run inside the runner's container (stdin of `python -`): bubblewrap start-ups, as JSON.
IN_RUNNER = f"""
import json, sys, tempfile, time
from pathlib import Path
from bots_sdk.referee.players import ProcessPlayer
from bots_sdk.sandbox import default_launcher
bot = Path(tempfile.mkdtemp()) / "lowest.py"
bot.write_text({BOT!r})
times = []
for _ in range(int(sys.argv[1])):
    player = ProcessPlayer(bot, default_launcher(backend="bubblewrap"))
    started = time.perf_counter()
    assert player.start(0, "standard", 1) is None
    times.append(time.perf_counter() - started)
    player.close()
print(json.dumps(times))
"""

RUNNER_FLAGS = [
    "--user",
    "0",
    "--cap-add",
    "SYS_ADMIN",
    "--cap-add",
    "NET_ADMIN",
    "--security-opt",
    f"seccomp={ROOT / 'deploy' / 'runner-seccomp.json'}",
    "--network",
    "none",
]


def _ms(times: list[float]) -> str:
    ordered = sorted(times)
    return (
        f"median {statistics.median(ordered) * 1000:8.1f} ms   "
        f"max {ordered[-1] * 1000:8.1f} ms   (n={len(ordered)})"
    )


def _run(*argv: str, timeout: float = 1800, **options: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, cwd=ROOT, **options
    )  # type: ignore[call-overload]
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}…: {done.stderr.strip()[-400:]}")
    return done


def _engine_problem() -> str:
    if shutil.which("docker") is None or shutil.which("docker-compose") is None:
        return "docker and docker-compose are not installed (deploy/docker-engine.sh)"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return "no Docker engine answers (deploy/docker-engine.sh)"
    return ""


# --- 1. start-up -----------------------------------------------------------------------------


def _local_startups(backend: str, count: int, pool: int | None = None) -> list[float]:
    from bots_sdk.referee.players import ProcessPlayer
    from bots_sdk.sandbox import containers, default_launcher

    bot = Path(tempfile.mkdtemp(prefix="bidel-bench-")) / "lowest.py"
    bot.write_text(BOT)
    if pool is not None:
        containers.pool().size = pool
    times = []
    for _ in range(count):
        if pool:
            containers.pool().fill(default_launcher(backend=backend).limits)
            containers.pool().settle()  # warm: the pool is full when the seat asks
        player = ProcessPlayer(bot, default_launcher(backend=backend))
        started = time.perf_counter()
        fault = player.start(0, "standard", 1)
        times.append(time.perf_counter() - started)
        player.close()
        assert fault is None, fault
    return times


def startups(count: int, engine: str) -> None:
    from bots_sdk.sandbox import SandboxUnavailable, default_launcher

    print(f"Bot start-up (process or container start -> ready), {count} each:")
    try:
        default_launcher(backend="bubblewrap")
        print(f"  bubblewrap on this host          {_ms(_local_startups('bubblewrap', count))}")
    except SandboxUnavailable as exc:
        print(f"  bubblewrap on this host          skipped: {exc}")
    if engine:
        print(f"  (the rest skipped: {engine})")
        return
    done = _run(
        "docker",
        "run",
        "-i",
        "--rm",
        *RUNNER_FLAGS,
        "bidel:latest",
        "python",
        "-",
        str(count),
        input=IN_RUNNER,
    )
    inside = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"  bubblewrap in the runner         {_ms(inside)}")
    from bots_sdk.sandbox import containers

    containers.build_image()
    print(f"  docker backend, cold (no pool)   {_ms(_local_startups('docker', count, pool=0))}")
    print(f"  docker backend, warm pool        {_ms(_local_startups('docker', count, pool=4))}")
    containers.pool().close()


# --- 2. matches per minute -------------------------------------------------------------------


def demo_rate(count: int) -> dict[str, float]:
    """`make demo`'s form: embedded SQLite and broker, a platform worker and a runner."""
    sys.path.insert(0, str(ROOT / "bench"))
    from django_setup import setup_django

    folder = setup_django(use_env=False, prefix="bidel-bench-demo-")
    from ladder_rate import rate

    from hearts_runner.config import FORBIDDEN
    from tests.support import celery_worker, child_env

    env = child_env({})
    runner_env = {k: v for k, v in env.items() if k not in FORBIDDEN}
    runner_env["BIDEL_VAR_DIR"] = str(folder)
    tag = uuid.uuid4().hex[:4]
    with (
        celery_worker(
            env=env, hostname=f"bench-worker-{tag}@bench", queues=["celery"], concurrency=2
        ),
        celery_worker(
            env=runner_env,
            hostname=f"bench-runner-{tag}@bench",
            queues=["runner"],
            concurrency=2,
            app="hearts_runner",
        ),
    ):
        return rate(count)


def compose_rates(count: int) -> dict[int, dict[str, float]]:
    """docker-compose.yml with 1, then 2 runner containers (the same deployment, scaled)."""
    project = f"bidelbench{uuid.uuid4().hex[:6]}"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "POSTGRES_PASSWORD": secrets.token_urlsafe(24),
        "BIDEL_PORT": str(port),
    }
    compose = ["docker-compose", "-p", project]
    rates = {}
    try:
        for runners in (1, 2):
            _run(*compose, "up", "-d", "--no-build", "--scale", f"runner={runners}", env=env)
            _wait_healthy(port, runners)
            done = _run(
                *compose,
                "exec",
                "-T",
                "worker",
                "python",
                "-",
                str(count),
                env=env,
                input=(ROOT / "bench" / "ladder_rate.py").read_text(),
            )
            rates[runners] = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run(
            [*compose, "down", "-v", "--remove-orphans"],
            capture_output=True,
            cwd=ROOT,
            env=env,
            timeout=600,
        )
    return rates


def _wait_healthy(port: int, runners: int, timeout: float = 600) -> None:
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            health = requests.get(f"http://127.0.0.1:{port}/api/health/", timeout=10).json()
            if health.get("status") == "ok" and health["runners"]["count"] >= runners:
                return
        except (requests.RequestException, ValueError, KeyError):
            pass
        time.sleep(1)  # (a benchmark waiting for its deployment)
    raise RuntimeError("the deployment never became healthy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--startups", type=int, default=10)
    parser.add_argument("--matches", type=int, default=8)
    parser.add_argument("--no-compose", action="store_true", help="skip the compose rates")
    args = parser.parse_args()
    engine = _engine_problem()
    if not engine:
        print("building bidel:latest …", flush=True)
        _run("docker", "build", "--network", "host", "-t", "bidel:latest", ".")
    startups(args.startups, engine)
    print(
        f"\nMatches per minute ({args.matches} challenge matches, games to 100, four uploaded "
        "bots):"
    )
    demo = demo_rate(args.matches)
    print(
        f"  make demo (SQLite, embedded broker, 1 runner)   {demo['per_minute']:7.1f}/min"
        f"   ({demo['seconds']} s, {demo['failed']} failed)"
    )
    if engine or args.no_compose:
        print(f"  compose: skipped ({engine or '--no-compose'})")
        return
    rates = compose_rates(args.matches)
    for runners, found in rates.items():
        label = f"compose, {runners} runner{'s' if runners > 1 else ' '} (PostgreSQL, Redis)"
        print(
            f"  {label:<46}  {found['per_minute']:7.1f}/min   ({found['seconds']} s, "
            f"{found['failed']} failed)"
        )
    scaling = rates[2]["per_minute"] / rates[1]["per_minute"]
    versus = rates[1]["per_minute"] / demo["per_minute"]
    print(
        f"  compose scaling 1 -> 2 runners: {scaling:.2f}x; compose (1 runner) / make demo: "
        f"{versus:.2f}x"
    )


if __name__ == "__main__":
    main()
