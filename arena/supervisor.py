"""Run a few long-lived processes together, each logging to its own file, and stop all of
them, children included.

Used by ``manage.py demo``. Each process starts in its own session (so a Ctrl-C in the
terminal reaches only the supervisor, which then stops everything) with its output, stdout
and stderr, in ``<log_dir>/<name>.log`` (the previous run's kept as ``<name>.log.1``).
Stopping asks every process at once, each with its own stop signal sent to it alone: a Celery
worker stops its pool itself, so no pool process dies of a signal its worker did not send (which
the worker logs as an error), and uvicorn stops its own workers. After a grace period whatever
is left in each process group (a bot a stopped pool left behind, a process that did not stop)
is killed. Nothing outlives the supervisor.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Supervisor:
    #: Where each process's log file is written.
    log_dir: Path
    #: How long the processes have, together, to stop once asked before they are killed.
    grace_seconds: float
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    stop_signals: dict[str, signal.Signals] = field(default_factory=dict)

    def log_path(self, name: str) -> Path:
        """The file process ``name`` writes its output to."""
        return self.log_dir / f"{name}.log"

    def start(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        stop_signal: signal.Signals = signal.SIGTERM,
    ) -> int:
        """Start ``argv`` as process ``name`` in a new session, its output in its log file
        (:meth:`log_path`), to be stopped by ``stop_signal``; returns its pid."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        path = self.log_path(name)
        if path.exists():
            path.replace(path.with_name(f"{path.name}.1"))
        with path.open("ab") as log:
            process = subprocess.Popen(
                list(argv),
                env=None if env is None else dict(env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes[name] = process
        self.stop_signals[name] = stop_signal
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
        """Ask every process to stop, all at once; after :attr:`grace_seconds` at most, kill
        whatever is left of each process group."""
        for name, process in self.processes.items():
            if process.poll() is None:
                process.send_signal(self.stop_signals[name])  # the leader alone, not its group
        deadline = time.monotonic() + self.grace_seconds
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        # The leader may be gone while its children linger: clear the whole group.
        for process in self.processes.values():
            _signal_group(process.pid, signal.SIGKILL)
        for process in self.processes.values():
            try:
                process.wait(timeout=self.grace_seconds)
            except subprocess.TimeoutExpired:
                pass
        self.processes.clear()


@dataclass
class LogTail:
    """The complete lines added to a file since the last call of :meth:`lines` (the first
    call: since the tail was made at ``offset``).

    >>> import tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> log = Path(folder.name) / "worker.log"
    >>> _ = log.write_text("ready\\nTask recei")
    >>> tail = LogTail(log)
    >>> tail.lines()
    ['ready']
    >>> with log.open("a") as more:
    ...     _ = more.write("ved\\n")
    >>> tail.lines(), tail.lines()
    (['Task received'], [])
    >>> folder.cleanup()
    """

    path: Path
    offset: int = 0
    partial: bytes = b""

    def lines(self) -> list[str]:
        try:
            with self.path.open("rb") as log:
                log.seek(self.offset)
                data = log.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        *complete, self.partial = (self.partial + data).split(b"\n")
        return [line.decode(errors="replace").rstrip("\r") for line in complete]


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass
