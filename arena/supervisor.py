"""Run a few long-lived processes together and stop all of them, children included.

Used by ``manage.py demo``. Each process starts in its own session (so a Ctrl-C in the
terminal reaches only the supervisor, which then stops everything in order) and is stopped by
signalling its whole process group: SIGTERM, a grace period, then SIGKILL for whatever is left
(Celery's pool children, uvicorn's workers). Nothing outlives the supervisor.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass
class Supervisor:
    grace_seconds: float = 15.0
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> int:
        """Start ``argv`` as process ``name`` in a new session; returns its pid."""
        process = subprocess.Popen(
            list(argv), env=None if env is None else dict(env), start_new_session=True
        )
        self.processes[name] = process
        return process.pid

    def exited(self) -> tuple[str, int] | None:
        """The first process that has exited, with its return code, or None."""
        for name, process in self.processes.items():
            code = process.poll()
            if code is not None:
                return name, code
        return None

    def wait_any(self) -> tuple[str, int]:
        """Block until one of the processes exits; returns its name and return code."""
        by_pid = {process.pid: name for name, process in self.processes.items()}
        while True:
            finished = self.exited()
            if finished:
                return finished
            pid, status = os.wait()
            if pid in by_pid:
                process = self.processes[by_pid[pid]]
                process.returncode = os.waitstatus_to_exitcode(status)
                return by_pid[pid], process.returncode

    def stop_all(self) -> None:
        """Stop every process group, last started first."""
        for name in reversed(list(self.processes)):
            self._stop(self.processes[name])
        self.processes.clear()

    def _stop(self, process: subprocess.Popen[bytes]) -> None:
        group = process.pid  # the session leader's pid is the group id
        _signal_group(group, signal.SIGTERM)
        try:
            process.wait(timeout=self.grace_seconds)
        except subprocess.TimeoutExpired:
            pass
        # The leader may be gone while its children linger: clear the whole group.
        _signal_group(group, signal.SIGKILL)
        try:
            process.wait(timeout=self.grace_seconds)
        except subprocess.TimeoutExpired:
            pass


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass
