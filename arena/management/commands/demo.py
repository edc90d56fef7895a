"""``python manage.py demo``: Bidel on this machine — the web server, a Celery worker, a
runner (the tier that plays bots, holding no secrets), a runner of people's games (/play/, on
a queue of its own) and beat (which fills ladders and starts
and advances tournaments) on the configured database and broker
(by default SQLite and the embedded broker in var/) — seeded with demo users and bots that
play the `standard` ladder; prints the rankings and the URLs to browse, then runs until
Ctrl-C, which stops every process it started within seconds. The port (``--port``, or
``$PORT``) is checked first: taken, the command says so in one line and exits non-zero.

The processes run as a deployment does, DEBUG off (a person sees the project's own 404 and 500
pages, never Django's debug pages, which list every URL and setting): the static files
collected into var/static/, a secret key kept in var/secret-key, and mails still printed on
the web server's console.

Each process logs to its own file in var/log/ (web.log, worker.log, runner.log,
people-runner.log, beat.log); the screen keeps what a person reads: the health line, the
seeding, the rankings, the URLs, and, once the platform is healthy, the processes' warnings
and errors, each line named by its log file.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import secrets
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

import bots_sdk
from arena.supervisor import LogTail, Supervisor
from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from hearts_runner import heartbeat
from hearts_runner.config import FORBIDDEN as RUNNER_FORBIDDEN
from hearts_runner.config import RUNNER_QUEUE

#: The level from which a process's log records are shown on the screen too (WARNING
#: otherwise): the web server's warnings are its 4xx answers, which their client already has.
SCREEN_LEVELS = {"web": logging.ERROR}
#: Lines of a process's log shown when it exits unexpectedly.
LAST_LINES = 15
#: Seconds the processes have, together, to stop after Ctrl-C before what is left is killed.
#: A Celery worker's cold shutdown takes about 5 s here on the embedded broker (its loop
#: polls the broker 2 s between looks at its state, its pool's threads sleep a second between
#: theirs); one that hangs (a task handed to a pool process as the shutdown began) is killed,
#: and its match played again once its lease has passed. The grace is for a hang, not for a
#: busy machine, where the same shutdown was seen to take 7 s: well past it.
STOP_GRACE_SECONDS = 20.0

#: The start of a log record in the processes' logs, with its level: Celery's
#: ``[2026-12-04 21:29:43,275: ERROR/MainProcess]``, the settings' LOGGING's
#: ``2026-12-04 21:29:31,634 WARNING hearts_runner:`` and uvicorn's ``ERROR:    ``.
_RECORD = re.compile(
    r"\[[-\d :,]+: (?P<celery>[A-Z]+)/"
    r"|\d{4}-\d\d-\d\d [\d:,]+ (?P<django>[A-Z]+) "
    r"|(?P<uvicorn>[A-Z]+):\s"
)


def record_level(line: str) -> int | None:
    """The level of the log record ``line`` begins, or None for a line that begins none (a
    traceback's, a banner's).

    >>> record_level("[2026-12-04 21:29:43,275: ERROR/MainProcess] Process exited")
    40
    >>> record_level("2026-12-04 21:29:31,634 WARNING hearts_runner: bidel runner: sandbox")
    30
    >>> record_level('INFO:     127.0.0.1:50312 - "GET /api/health/ HTTP/1.1" 200 OK')
    20
    >>> [record_level(line) for line in ("Traceback (most recent call last):", "KeyError: 'x'")]
    [None, None]
    """
    found = _RECORD.match(line)
    if not found:
        return None
    name = found.group("celery") or found.group("django") or found.group("uvicorn")
    return logging.getLevelNamesMapping().get(name)


def _shown(path: Path) -> str:
    """``path`` as a person types it here: relative to the current folder when inside it."""
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else str(path)


def _health_line(report: dict[str, Any]) -> str:
    """The health report in one line: each part, and what it found.

    >>> line = _health_line({"status": "ok", "database": {"ok": True, "vendor": "sqlite"},
    ...     "broker": {"ok": True, "transport": "filesystem"}, "workers": {"ok": True, "count": 3},
    ...     "runners": {"ok": True, "count": 1},
    ...     "sandbox": {"ok": True, "backend": "bubblewrap", "detail": "bots are sandboxed"}})
    >>> for part in line.split(", "):
    ...     print(part)
    database ok (sqlite)
    broker ok (filesystem)
    workers ok (3)
    runners ok (1)
    sandbox ok (bubblewrap: bots are sandboxed)
    """
    found = {
        "database": lambda part: part.get("vendor"),
        "broker": lambda part: part.get("transport"),
        "workers": lambda part: part.get("count"),
        "runners": lambda part: part.get("count"),
        "sandbox": lambda part: f"{part.get('backend')}: {part.get('detail')}",
    }
    return ", ".join(
        f"{name} {'ok' if report[name]['ok'] else 'not ok'} ({what(report[name])})"
        for name, what in found.items()
    )


def _detailed(report: dict[str, Any]) -> dict[str, Any]:
    """The health report with its details (the web shows anyone only each part's ``ok``):
    the workers, runners and sandbox as their heartbeats say, read here as the web reads
    them, and what the database and broker are."""
    from django.db import connection

    beats = heartbeat.store_from_environment().read()
    return {
        **report,
        "database": {**report["database"], "vendor": connection.vendor},
        "broker": {
            **report["broker"],
            "transport": "redis" if settings.REDIS_URL else "filesystem",
        },
        **heartbeat.summary(beats, time.time(), RUNNER_QUEUE),
    }


class _Echo(threading.Thread):
    """Shows on the screen the records of the processes' logs at or above their screen level
    (:data:`SCREEN_LEVELS`) written from now on, each line after its log file's name."""

    def __init__(self, supervisor: Supervisor, write: Callable[[str], object]) -> None:
        super().__init__(name="demo-echo", daemon=True)
        self.write = write
        self.tails = {
            name: LogTail(path, offset=path.stat().st_size if path.exists() else 0)
            for name in supervisor.processes
            for path in [supervisor.log_path(name)]
        }
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.5):  # a log's new lines, read twice a second
            self.show_new()

    def show_new(self) -> None:
        for name, tail in self.tails.items():
            floor = SCREEN_LEVELS.get(name, logging.WARNING)
            for line in tail.lines():
                level = record_level(line)
                if level is not None and level >= floor:
                    self.write(f"{tail.path.name}: {line}")

    def stop(self) -> None:
        """Stop following, after showing what was written until now."""
        self.stopped.set()
        self.join()
        self.show_new()


def _interrupt(signum: int, frame: Any) -> None:
    # Once only: a second Ctrl-C while everything stops must not cut the stopping short and
    # leave processes running (the stopping is bounded: STOP_GRACE_SECONDS).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def _serve_as_deployed(var_dir: Path, site_url: str) -> None:
    """The environment the demo's processes inherit: DEBUG off, with a secret key of this
    machine's (made once, readable by its owner alone), the console's mails and the site's
    own address (where a reset link points); then the static files collected, which DEBUG
    off serves from ``STATIC_ROOT`` alone."""
    os.environ["DEBUG"] = "0"
    os.environ.setdefault("SITE_URL", site_url)
    if not os.environ.get("SECRET_KEY"):
        key_file = var_dir / "secret-key"
        if not key_file.exists():
            descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as out:
                out.write(secrets.token_urlsafe(50))
        os.environ["SECRET_KEY"] = key_file.read_text().strip()
    os.environ.setdefault("EMAIL_BACKEND", "console")
    call_command("collectstatic", interactive=False, verbosity=0)


def _port_problem(host: str, port: int) -> str:
    """Why the web server could not listen on ``host:port`` ('' when it can), in one line."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        try:
            probe.bind((host, port))
        except OSError as exc:
            taken = exc.errno == errno.EADDRINUSE
            return (
                f"port {port} on {host} is taken by another program: stop it, or choose "
                f"another port (PORT={port + 1} make demo)"
                if taken
                else f"cannot listen on {host}:{port}: {exc.strerror}"
            )
    return ""


class Command(BaseCommand):
    help = "Run the web server, workers, runners and beat until Ctrl-C, seeded and ranked."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to serve on")
        parser.add_argument(
            "--port",
            type=int,
            default=int(os.environ.get("PORT") or 8000),
            help="port to serve on (default: $PORT or 8000)",
        )
        parser.add_argument("--concurrency", type=int, default=2, help="worker processes")
        parser.add_argument(
            "--startup-timeout", type=float, default=90.0, help="seconds to wait for health"
        )
        parser.add_argument(
            "--matches", type=int, default=12, help="ladder matches to play before showing rankings"
        )

    def handle(
        self,
        *args: Any,
        host: str,
        port: int,
        concurrency: int,
        startup_timeout: float,
        matches: int,
        **options: Any,
    ) -> None:
        started = float(os.environ.get("BIDEL_DEMO_STARTED") or time.time())
        problem = _port_problem(host, port)
        if problem:
            raise CommandError(problem)
        call_command("migrate", interactive=False, verbosity=0)
        address = f"[{host}]" if ":" in host else host
        _serve_as_deployed(settings.VAR_DIR, f"http://{address}:{port}")
        try:
            default_launcher()
        except SandboxUnavailable as exc:
            # The demo's bots are our own examples: without a sandbox they run unsandboxed.
            self.stdout.write(f"No sandbox on this machine ({exc}); the demo bots run unsandboxed.")
            os.environ["BIDEL_UNSAFE_NO_SANDBOX"] = "1"
            settings.BIDEL_UNSAFE_NO_SANDBOX = True
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGINT, _interrupt)  # also when started with SIGINT ignored (`cmd &`)
        logs = settings.VAR_DIR / "log"
        supervisor = Supervisor(log_dir=logs, grace_seconds=STOP_GRACE_SECONDS)
        health_url = f"http://{host}:{port}/api/health/"
        echo: _Echo | None = None
        try:
            # The Celery processes stop on SIGQUIT, Celery's cold shutdown: the tasks in hand
            # are cancelled and their messages given back to the broker, not finished first
            # (SIGTERM, the warm shutdown, waits for every match in play). A match cut short
            # is played again: its message's redelivery, or else the reaper once its lease
            # has passed (arena.services.matches_reap).
            supervisor.start(
                "worker",
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "hearts_platform",
                    "worker",
                    f"--concurrency={concurrency}",
                    "--loglevel=INFO",
                    "--hostname=demo@%h",
                    "--queues=celery",
                ],
                stop_signal=signal.SIGQUIT,
            )
            # The runner tier on its own: the broker's address and nothing else of ours (the
            # embedded broker's folder), as on a separate runner host.
            # (Nor DJANGO_SETTINGS_MODULE, which manage.py set: Celery would load Django.)
            runner_env = {
                k: v
                for k, v in os.environ.items()
                if k not in RUNNER_FORBIDDEN and k != "DJANGO_SETTINGS_MODULE"
            }
            runner_env["BIDEL_VAR_DIR"] = str(settings.VAR_DIR)
            supervisor.start(
                "runner",
                [
                    sys.executable,
                    "-m",
                    "hearts_runner",
                    f"--concurrency={concurrency}",
                    "--hostname=demo-runner@%h",
                ],
                env=runner_env,
                stop_signal=signal.SIGQUIT,
            )
            # People's games (/play/) on runners of their own: never a bot match's slot.
            supervisor.start(
                "people-runner",
                [
                    sys.executable,
                    "-m",
                    "hearts_runner",
                    "--people",
                    "--hostname=demo-people@%h",
                ],
                env=runner_env,
                stop_signal=signal.SIGQUIT,
            )
            # Beat: fills ladders, reaps lost matches, starts and advances tournaments.
            supervisor.start(
                "beat",
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "hearts_platform",
                    "beat",
                    "--loglevel=INFO",
                    f"--schedule={settings.VAR_DIR / 'celerybeat-schedule'}",
                ],
            )
            supervisor.start(
                "web",
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "hearts_platform.asgi:application",
                    f"--host={host}",
                    f"--port={port}",
                    "--workers=2",
                    "--ws=websockets-sansio",
                    f"--ws-max-size={settings.WS_MESSAGE_MAX_BYTES}",  # as production
                    "--lifespan=off",
                    "--timeout-graceful-shutdown=2",  # an open WebSocket never holds up Ctrl-C
                ],
            )
            *first, last = supervisor.processes
            self.stdout.write(
                f"Started {', '.join(first)} and {last}; each logs to {_shown(logs)}/<name>.log. "
                "Waiting until they are healthy…"
            )
            report = _detailed(self._wait_healthy(supervisor, health_url, startup_timeout))
            self.stdout.write(f"Health ({health_url}): {_health_line(report)}")
            self.stdout.write(
                f"Healthy {time.time() - started:.1f} s after the start"
                f"{' of make demo' if 'BIDEL_DEMO_STARTED' in os.environ else ''}: web, "
                "worker, runners (bots', people's) and beat (ladders, tournaments) are running."
            )
            # From here on, the processes' warnings and errors are shown as they are logged.
            echo = _Echo(supervisor, self.stdout.write)
            echo.start()
            if matches:
                self._seed_and_play(matches, supervisor)
            base = f"http://{host}:{port}"
            self.stdout.write(
                f"Browse: {base}/ (pages)  {base}/ladders/1/  {base}/docs/ (guides)  "
                f"{base}/signup/ (then upload a bot "
                f"and challenge it)  {base}/api/ladders/1/rankings/  "
                f"{base}/api/matches/  {base}/api/docs/  (admin: {base}/admin/, for an "
                "account made with: python manage.py createsuperuser)"
            )
            self.stdout.write(
                f"From a terminal: bidel signup --url {base}  (then bidel submit my_bot.py "
                f"--bot my-bot --new --url {base}; or export BIDEL_URL={base})"
            )
            self.stdout.write(
                f"The processes' warnings and errors are shown here; their full logs are in "
                f"{_shown(logs)}/."
            )
            self.stdout.write(
                self.style.SUCCESS(f"Bidel is up: {health_url} (Ctrl-C stops everything)")
            )
            self.stdout.flush()
            name, code = supervisor.wait_any()
            raise self._exited(supervisor, name, code, "unexpectedly")
        except KeyboardInterrupt:
            self.stdout.write("Stopping web, worker, runners and beat…")
        finally:
            stopping = time.monotonic()
            supervisor.stop_all()
            if echo is not None:
                echo.stop()
        self.stdout.write(
            f"Stopped in {time.monotonic() - stopping:.1f} s: nothing of the demo is running. "
            f"The logs stay in {_shown(logs)}/."
        )

    def _exited(self, supervisor: Supervisor, name: str, code: int, when: str) -> CommandError:
        """The error for process ``name`` gone ``when``: its code and its log's last lines."""
        path = supervisor.log_path(name)
        try:
            last = path.read_text(errors="replace").splitlines()[-LAST_LINES:]
        except OSError:
            last = []
        return CommandError(
            f"the {name} process exited {when} (code {code}); stopped the rest. The end of "
            f"its log, {_shown(path)}:\n" + "\n".join(f"  {line}" for line in last)
        )

    def _seed_and_play(self, count: int, supervisor: Supervisor) -> None:
        """Demo users and bots (uploaded like anyone's), validated and laddered by the worker."""
        from arena import services
        from arena.models import Bot, BotVersion, Ladder, LadderEntry, Match
        from arena.selectors import ladder_rankings

        ladder = Ladder.objects.get(name="standard")
        examples = Path(bots_sdk.__file__).parent / "examples"
        User = get_user_model()
        for username, example in (("ada", "ducker"), ("grace", "dumper")):
            user = User.objects.filter(username=username).first() or services.user_create(
                username=username, password=secrets.token_urlsafe(12)
            )
            bot = Bot.objects.filter(name=example).first() or services.bot_create(
                owner=user, name=example
            )
            if not bot.versions.exists():
                code = (examples / f"{example}.py").read_bytes()
                services.version_upload(bot=bot, user=user, filename=f"{example}.py", data=code)
            LadderEntry.objects.get_or_create(ladder=ladder, bot=bot)
        self.stdout.write(
            "Demo users ada and grace uploaded the bots ducker and dumper; validating…"
        )
        waiting = [BotVersion.Status.PENDING, BotVersion.Status.VALIDATING]
        self._wait(
            supervisor, lambda: not BotVersion.objects.filter(status__in=waiting).exists(), 180
        )
        finished = Match.Status.FINISHED
        target = Match.objects.filter(ladder=ladder, status=finished).count() + count
        self.stdout.write(f"Playing {count} ladder matches (games to 100) on the worker…")

        def played() -> bool:
            # Tables are queued as the ladder has room (beat fills it too). Counting the
            # finished ones, not waiting for none in play: a match a stopped demo cut short
            # and the broker lost holds its table until its lease passes, and is then played
            # again (services.matches_reap).
            services.ladder_fill(ladder=ladder)
            return Match.objects.filter(ladder=ladder, status=finished).count() >= target

        self._wait(supervisor, played, 600)
        services.ratings_recompute(ladder=ladder)
        self.stdout.write(
            f"{'rank':>4}  {'bot':12} {'rating':>7}  {'95% interval':>15}  {'live Elo':>8}  matches"
        )
        cut = False
        for row in ladder_rankings(ladder):
            if row.rating is None or row.ci95 is None:
                continue  # not rated yet
            low, high = row.ci95
            shown = f"[{low:.0f}, {high:.0f}]"
            if low < 0:  # (a rating is above 0: an interval past it says "too few matches")
                shown, cut = f"[0*, {high:.0f}]", True
            self.stdout.write(
                f"{row.rank:>4}  {row.bot.name:12} {row.rating:>7.0f}  "
                f"{shown:>15}  {row.live_elo:>8.0f}  {row.matches}"
            )
        if cut:
            self.stdout.write(
                "  * its interval reaches below 0: too few matches yet to place it; it "
                "narrows as the ladder plays on"
            )

    def _wait(self, supervisor: Supervisor, condition: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            finished = supervisor.exited()
            if finished:
                raise self._exited(supervisor, *finished, "unexpectedly")
            if time.monotonic() > deadline:
                raise CommandError(
                    f"the worker did not finish in {timeout:g} s (the logs: "
                    f"{_shown(supervisor.log_dir)}/)"
                )
            time.sleep(0.5)  # a CLI waiting on its own worker, not a test

    def _wait_healthy(self, supervisor: Supervisor, url: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        last: Any = "no answer yet"
        while time.monotonic() < deadline:
            finished = supervisor.exited()
            if finished:
                raise self._exited(supervisor, *finished, "during start-up")
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    return json.load(response)
            except urllib.error.HTTPError as exc:  # 503 until the worker answers
                last = json.load(exc)
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                last = str(exc)
            time.sleep(0.5)  # start-up poll of a server this command launched, not a test
        if isinstance(last, dict) and "database" in last:
            last = _detailed(last)
        raise CommandError(
            f"not healthy after {timeout:g} s: {json.dumps(last)} (the logs: "
            f"{_shown(supervisor.log_dir)}/)"
        )
