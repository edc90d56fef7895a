"""``python manage.py demo``: Bidel on this machine — the web server, a Celery worker, a
runner (the tier that plays bots, holding no secrets) and beat (which fills ladders and starts
and advances tournaments) on the configured database and broker
(by default SQLite and the embedded broker in var/) — seeded with demo users and bots that
play the `standard` ladder; prints the rankings and the URLs to browse, then runs until
Ctrl-C, which stops every process it started. The port (``--port``, or ``$PORT``) is checked
first: taken, the command says so in one line and exits non-zero.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import signal
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

import bots_sdk
from arena.supervisor import Supervisor
from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from hearts_runner.config import FORBIDDEN as RUNNER_FORBIDDEN


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


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
    help = "Run the web server and a worker until Ctrl-C; prints the health report when up."

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
        try:
            default_launcher()
        except SandboxUnavailable as exc:
            # The demo's bots are our own examples: without a sandbox they run unsandboxed.
            self.stdout.write(f"No sandbox on this machine ({exc}); the demo bots run unsandboxed.")
            os.environ["BIDEL_UNSAFE_NO_SANDBOX"] = "1"
            settings.BIDEL_UNSAFE_NO_SANDBOX = True
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGINT, _interrupt)  # also when started with SIGINT ignored (`cmd &`)
        supervisor = Supervisor()
        health_url = f"http://{host}:{port}/api/health/"
        try:
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
            )
            # The runner tier on its own: the broker's address and nothing else of ours (the
            # embedded broker's folder), as on a separate runner host.
            runner_env = {k: v for k, v in os.environ.items() if k not in RUNNER_FORBIDDEN}
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
                    "--lifespan=off",
                ],
            )
            report = self._wait_healthy(supervisor, health_url, startup_timeout)
            self.stdout.write(json.dumps(report, indent=2))
            self.stdout.write(
                f"Healthy {time.time() - started:.1f} s after the start"
                f"{' of make demo' if 'BIDEL_DEMO_STARTED' in os.environ else ''}: web, "
                "worker, runner and beat (ladders, tournaments) are running."
            )
            if matches:
                self._seed_and_play(matches, supervisor)
            base = f"http://{host}:{port}"
            self.stdout.write(
                f"Browse: {base}/ (pages)  {base}/ladders/1/  {base}/signup/ (then upload a bot "
                f"and challenge it)  {base}/api/ladders/1/rankings/  "
                f"{base}/api/matches/  {base}/api/docs/  (admin: {base}/admin/)"
            )
            self.stdout.write(
                self.style.SUCCESS(f"Bidel is up: {health_url} (Ctrl-C stops everything)")
            )
            self.stdout.flush()
            name, code = supervisor.wait_any()
            raise CommandError(
                f"the {name} process exited unexpectedly (code {code}); stopped the rest"
            )
        except KeyboardInterrupt:
            self.stdout.write("Stopping web, worker, runner and beat…")
        finally:
            supervisor.stop_all()
        self.stdout.write("Stopped.")

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
        while Match.objects.filter(ladder=ladder, status=finished).count() < target:
            services.ladder_fill(ladder=ladder)
            self._wait(
                supervisor,
                lambda: (
                    not Match.objects.filter(
                        ladder=ladder, status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
                    ).exists()
                ),
                600,
            )
        services.ratings_recompute(ladder=ladder)
        self.stdout.write(
            f"{'rank':>4}  {'bot':12} {'rating':>7}  {'95% interval':>15}  {'live Elo':>8}  matches"
        )
        for row in ladder_rankings(ladder):
            if row["rating"] is None:
                continue  # not rated yet
            low, high = row["ci95"]
            self.stdout.write(
                f"{row['rank']:>4}  {row['bot']['name']:12} {row['rating']:>7.0f}  "
                f"{f'[{low:.0f}, {high:.0f}]':>15}  {row['live_elo']:>8.0f}  {row['matches']}"
            )

    def _wait(self, supervisor: Supervisor, condition: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            finished = supervisor.exited()
            if finished:
                raise CommandError(
                    f"the {finished[0]} process exited unexpectedly (code {finished[1]}); "
                    "stopped the rest"
                )
            if time.monotonic() > deadline:
                raise CommandError(f"the worker did not finish in {timeout:g} s")
            time.sleep(0.5)  # a CLI waiting on its own worker, not a test

    def _wait_healthy(self, supervisor: Supervisor, url: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        last: Any = "no answer yet"
        while time.monotonic() < deadline:
            finished = supervisor.exited()
            if finished:
                raise CommandError(
                    f"the {finished[0]} process exited during start-up (code {finished[1]})"
                )
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    return json.load(response)
            except urllib.error.HTTPError as exc:  # 503 until the worker answers
                last = json.load(exc)
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                last = str(exc)
            time.sleep(0.5)  # start-up poll of a server this command launched, not a test
        raise CommandError(f"not healthy after {timeout:g} s: {json.dumps(last)}")
