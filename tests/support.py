"""Helpers for tests that run the project's real processes (workers, commands); each waits
with the suite's one deadline (:mod:`tests.deadline`)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from django.conf import settings

from tests.deadline import DEADLINE, wait_until

PROJECT_DIR = Path(__file__).resolve().parent.parent
#: Variables the settings read; tests that want "a fresh machine" remove them all.
SERVICE_VARIABLES = ("DATABASE_URL", "REDIS_URL", "BIDEL_VAR_DIR")


requires_redis = pytest.mark.skipif(
    not settings.REDIS_URL,
    reason="no Redis configured: set REDIS_URL=redis://127.0.0.1:6379/0 (.ci/run does)",
)
requires_postgres = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql",
    reason="no PostgreSQL configured: set DATABASE_URL=postgres://... (.ci/run does)",
)


#: pytest-xdist's word to a worker that it is one (tests/lanes.py acts on it): a pytest that a
#: test starts is a run of its own, never a worker of this one.
XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


def child_env(overrides: Mapping[str, str | None] = {}) -> dict[str, str]:
    """The current environment with ``overrides`` applied (None removes a variable), without
    :data:`XDIST_VARIABLES`."""
    env = {name: value for name, value in os.environ.items() if name not in XDIST_VARIABLES}
    env.setdefault("DEBUG", "1")
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def run_python(
    code: str, env: Mapping[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code`` in the project directory."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_DIR,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def settings_in_subprocess(env: Mapping[str, str], *names: str) -> dict[str, Any]:
    """Load the settings module in a fresh interpreter under ``env``; return ``names`` as JSON."""
    code = (
        "import json, os\n"
        "os.environ['DJANGO_SETTINGS_MODULE'] = 'hearts_platform.settings'\n"
        "from django.conf import settings\n"
        f"print(json.dumps({{n: getattr(settings, n) for n in {list(names)!r}}}, default=str))\n"
    )
    completed = run_python(code, env)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


@dataclass
class WorkerProcess:
    process: subprocess.Popen[str]
    hostname: str
    output: list[str] = field(default_factory=list)

    def log(self) -> str:
        return "".join(self.output)


def wait_for_line(process: subprocess.Popen[str], output: list[str], marker: str, what: str) -> str:
    """Wait until ``process`` (started with ``stdout=PIPE``, text) prints a line holding
    ``marker`` — its own word that it is ready — and return that line; fail if it exits first
    or says nothing of the kind within :data:`DEADLINE`. Its output, that line's and every
    later one, goes on into ``output`` (so a chatty process never blocks on a full pipe)."""
    assert process.stdout is not None
    stream = process.stdout
    reader = threading.Thread(target=lambda: output.extend(stream), daemon=True)
    reader.start()

    def said() -> str | bool:
        exited = process.poll() is not None
        if exited:
            reader.join(DEADLINE)  # (the last lines it wrote, read to the end of its output)
        return next((line for line in list(output) if marker in line), None) or exited

    try:
        line = wait_until(said, f"{what} to say {marker!r}", interval=0.05)
    except AssertionError as failure:
        raise AssertionError(f"{failure}; it said:\n{''.join(output)[-4000:]}") from None
    if line is True:
        raise AssertionError(f"{what} exited before it was ready:\n{''.join(output)}")
    return str(line)


def _stop_group(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=30)


@contextmanager
def celery_worker(
    *,
    env: Mapping[str, str],
    hostname: str,
    queues: list[str],
    concurrency: int = 1,
    app: str = "hearts_platform",
    cwd: Path = PROJECT_DIR,
) -> Iterator[WorkerProcess]:
    """A real ``celery -A hearts_platform worker`` process (or ``-A hearts_runner``: a
    runner), yielded once it logs "ready"; ``cwd``: the source tree it runs (a benchmark's
    baseline runs another commit's).

    The worker consumes only ``queues``, so tests never take each other's tasks.
    """
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        app,
        "worker",
        "--pool=prefork",
        f"--concurrency={concurrency}",
        "--loglevel=INFO",
        f"--hostname={hostname}",
        f"--queues={','.join(queues)}",
        "--without-gossip",
        "--without-mingle",
    ]
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    worker = WorkerProcess(process=process, hostname=hostname)
    try:
        wait_for_line(process, worker.output, f"{hostname} ready.", f"the worker {hostname}")
        yield worker
    finally:
        _stop_group(process)


def purge_queues(*queues: str) -> int:
    """Empty the broker's ``queues`` (messages an earlier test sent and no worker took), so
    a test's workers do its own work only; the number of messages removed."""
    removed = 0
    with Celery(
        "bidel-test-purge",
        set_as_current=False,
        broker=settings.CELERY_BROKER_URL,
        broker_transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS,
    ).connection_for_write() as connection:
        channel = connection.default_channel
        for queue in queues:
            removed += channel.queue_purge(queue) or 0
    return removed


def client_app(transport: Mapping[str, Any]) -> Celery:
    """A Celery client with the project's settings but the given broker/backend settings."""
    app = Celery("bidel-test-client", set_as_current=False)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(dict(transport))
    return app


@contextmanager
def celery_beat(*, env: Mapping[str, str], folder: Path) -> Iterator[WorkerProcess]:
    """A real ``celery -A hearts_platform beat`` with django-celery-beat's scheduler, yielded
    once it has started."""
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "hearts_platform",
        "beat",
        "--loglevel=INFO",
        "--scheduler=django_celery_beat.schedulers:DatabaseScheduler",
        f"--pidfile={folder / 'beat.pid'}",
    ]
    process = subprocess.Popen(
        argv,
        cwd=PROJECT_DIR,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    beat = WorkerProcess(process=process, hostname="beat")
    try:
        wait_for_line(process, beat.output, "beat: Starting", "celery beat")
        yield beat
    finally:
        _stop_group(process)


class RedisServer:
    """A Redis server of a test's own (``redis-server`` on a free port of 127.0.0.1, keeping
    nothing on disk), for a test that stops and restarts it: the machine's server is shared
    by the tests running beside it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.output: list[str] = []
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--dir", str(self.folder)]
        self.process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        wait_for_line(self.process, self.output, "Ready to accept connections", "redis-server")

    def restart(self) -> None:
        """Stop it, losing every key and message it held, and start it again on its port."""
        self.stop()
        self.output.clear()
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # (without --save, it writes nothing as it goes)
            self.process.wait(timeout=DEADLINE)
        self.process = None


@contextmanager
def redis_server(folder: Path) -> Iterator[RedisServer]:
    """A started :class:`RedisServer`, stopped at the end."""
    server = RedisServer(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def run_queued(task_name: str, queue: str = "celery") -> int:
    """Take every message waiting in the broker's ``queue`` and run here, as a worker would,
    those of the task ``task_name`` (the others are dropped: no worker of this test wanted
    them); how many ran. For work a request hands to the workers, followed to its end
    without starting one."""
    from celery import current_app

    import arena.tasks  # noqa: F401 (the tasks, by name)

    ran = 0
    with client_app({}).connection_for_read() as connection:
        waiting = connection.SimpleQueue(queue)
        try:
            while True:
                try:
                    message = waiting.get(block=False)
                except waiting.Empty:
                    return ran
                message.ack()
                if message.headers.get("task") == task_name:
                    args, kwargs, _ = message.decode()
                    current_app.tasks[task_name](*args, **kwargs)
                    ran += 1
        finally:
            waiting.close()
