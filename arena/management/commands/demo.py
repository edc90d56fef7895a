"""``python manage.py demo``: Bidel on this machine — the web server and a Celery worker on
the configured database and broker (by default SQLite and the embedded broker in var/) —
until Ctrl-C, which stops every process it started.
"""

from __future__ import annotations

import json
import signal
import sys
import time
import urllib.error
import urllib.request
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.supervisor import Supervisor


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = "Run the web server and a worker until Ctrl-C; prints the health report when up."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to serve on")
        parser.add_argument("--port", type=int, default=8000, help="port to serve on")
        parser.add_argument("--concurrency", type=int, default=2, help="worker processes")
        parser.add_argument(
            "--startup-timeout", type=float, default=90.0, help="seconds to wait for health"
        )

    def handle(
        self,
        *args: Any,
        host: str,
        port: int,
        concurrency: int,
        startup_timeout: float,
        **options: Any,
    ) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        signal.signal(signal.SIGTERM, _interrupt)
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
                ],
            )
            supervisor.start(
                "web",
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "hearts_platform.wsgi",
                    f"--bind={host}:{port}",
                    "--workers=2",
                    "--access-logfile=-",
                ],
            )
            report = self._wait_healthy(supervisor, health_url, startup_timeout)
            self.stdout.write(json.dumps(report, indent=2))
            self.stdout.write(
                self.style.SUCCESS(f"Bidel is up: {health_url} (Ctrl-C stops everything)")
            )
            self.stdout.flush()
            name, code = supervisor.wait_any()
            raise CommandError(
                f"the {name} process exited unexpectedly (code {code}); stopped the rest"
            )
        except KeyboardInterrupt:
            self.stdout.write("Stopping web and worker…")
        finally:
            supervisor.stop_all()
        self.stdout.write("Stopped.")

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
