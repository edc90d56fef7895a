"""Celery task round trip through a real worker: the embedded broker vs Redis.

    DEBUG=1 .venv/bin/python bench/task_roundtrip.py [--tasks 200] [--redis redis://127.0.0.1:6379/0]

Starts one worker per broker (prefork, concurrency 2), then measures: the latency of one
`arena.ping` sent and awaited at a time (median, p95), and the throughput of a burst of
tasks sent together. Redis is measured when --redis or REDIS_URL is given.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hearts_platform.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from hearts_runner.broker import embedded_transport, redis_transport  # noqa: E402
from tests.support import celery_worker, child_env, client_app  # noqa: E402


def measure(name: str, transport: dict, env: dict[str, str], tasks: int) -> None:
    queue = f"bench-{uuid.uuid4().hex}"
    hostname = f"bench-{uuid.uuid4().hex[:6]}@{name}"
    with celery_worker(env=env, hostname=hostname, queues=[queue]):
        client = client_app(transport)
        client.send_task("arena.ping", args=[0], queue=queue).get(timeout=60)  # warm up
        latencies = []
        for i in range(tasks):
            started = time.perf_counter()
            client.send_task("arena.ping", args=[i], queue=queue).get(timeout=60, interval=0.01)
            latencies.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        results = [client.send_task("arena.ping", args=[i], queue=queue) for i in range(tasks)]
        for result in results:
            result.get(timeout=120, interval=0.01)
        burst = tasks / (time.perf_counter() - started)
    latencies.sort()
    print(
        f"{name:>9}: one at a time median {statistics.median(latencies):7.1f} ms, "
        f"p95 {latencies[int(0.95 * (len(latencies) - 1))]:7.1f} ms; burst {burst:7.1f} tasks/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL"))
    args = parser.parse_args()
    print(f"arena.ping round trips, {args.tasks} tasks each, 1 worker (prefork, concurrency 1)")
    with tempfile.TemporaryDirectory() as var_dir:
        env = child_env({"REDIS_URL": None, "BIDEL_VAR_DIR": var_dir})
        measure("embedded", embedded_transport(Path(var_dir)), env, args.tasks)
    if args.redis:
        env = child_env({"REDIS_URL": args.redis})
        measure("redis", redis_transport(args.redis, hard_time_limit=60), env, args.tasks)
    else:
        print("    redis: skipped (give --redis URL or set REDIS_URL)")


if __name__ == "__main__":
    main()
