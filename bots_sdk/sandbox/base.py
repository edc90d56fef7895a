"""What every sandbox backend shares: the limits of a bot, the launch of one process, what a
build hands a launcher (:class:`BuiltBot`, :class:`BuildJob`) and the :class:`Launcher` each
backend is. Imports no backend, no build and nothing of the referee."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bots_sdk.sandbox import cgroups, procs

#: The folder holding ``engine`` and ``bots_sdk``, bound read-only at /sdk for a Python bot.
SDK_ROOT = Path(__file__).resolve().parents[2]
#: What runs a Python bot inside a sandbox: the SDK's host around the bot's file.
HOST = "import sys; sys.path[:0] = ['/sdk']; from bots_sdk.host import main, leave; leave(main())"


def host_argv(python: str, bot: str) -> list[str]:
    """How a sandbox starts a Python bot inside: isolated (no site, no user paths, no bytecode
    written), the SDK's host running the bot's file (``bot``) with /tmp as its folder."""
    return [python, "-I", "-S", "-B", "-c", HOST, bot, "/tmp"]


class SandboxUnavailable(RuntimeError):
    """This host cannot provide a layer the sandbox needs; the message says which."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one bot: of its whole process tree where the host gives cgroups
    (memory, processes, CPU), else of each of its processes (rlimits, always set too)."""

    memory_mb: int = 512
    cpu_seconds: int = 600
    processes: int = 16
    file_size_mb: int = 8
    open_files: int = 64
    tmp_mb: int = 16
    #: Files and directories the bot's /tmp may hold (its tmpfs's inodes).
    tmp_files: int = 2048
    stderr_bytes: int = 64 * 1024


@dataclass
class Launch:
    """One bot process to start: its command, environment and inherited descriptors, the
    seat's cgroup (None where the host has none, or unsandboxed), and where the sandbox
    reports the bot's pid (bwrap's ``--info-fd``). A backend whose bot lives elsewhere (a container)
    gives its own ``oom`` (whether the kernel killed it over its memory), ``cleanup``, and may give
    ``locate`` (where its init and bot are), ``clock`` (CPU seconds of the bot's whole tree) or
    ``resume``/``suspend``: the bot runs only between the two (its turn), so its wall time is a
    bound on its CPU."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    group: cgroups.SeatGroup | None = None
    info_read: int | None = None
    #: Descriptors of ours to close once the process has started.
    close_after_start: tuple[int, ...] = ()
    #: Where the sandbox's init and the bot are, given the started process's pid and a
    #: deadline (a backend that knows: the namespaces' chain; unsandboxed, the process itself).
    locate: Callable[[int, float], tuple[int | None, int | None]] | None = None
    clock: Callable[[], float | None] | None = None
    oom: Callable[[], bool] | None = None
    cleanup: Callable[[], None] | None = None
    resume: Callable[[], None] | None = None
    suspend: Callable[[], None] | None = None

    def started(self) -> None:
        for fd in self.close_after_start:
            try:
                os.close(fd)
            except OSError:
                pass
        self.close_after_start = ()

    def popen(self, *, stdin: int) -> subprocess.Popen[bytes]:
        """Start the process (in a session of its own, its output on pipes, unbuffered), then
        close our copies of the descriptors it inherited; a failure to start releases the
        launch (its cgroup, its container) before it is raised."""
        try:
            return subprocess.Popen(
                self.argv,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                start_new_session=True,
                bufsize=0,
                pass_fds=self.pass_fds,
            )
        except BaseException:
            self.release()
            raise
        finally:
            self.started()

    def processes(self, pid: int, deadline: float) -> tuple[int | None, int | None]:
        """The sandbox's init and the bot, for the launch started as ``pid``: what bwrap
        reports, else what the backend finds; (None, None) where they are not this host's
        processes (a container)."""
        if self.info_read is not None:
            return procs.reported_pids(self.info_read, deadline)
        if self.locate is not None:
            return self.locate(pid, deadline)
        return None, None

    def cpu_seconds(self) -> float | None:
        if self.clock is not None:
            return self.clock()
        return self.group.cpu_seconds() if self.group is not None else None

    def oom_killed(self) -> bool:
        if self.oom is not None:
            return self.oom()
        return self.group is not None and self.group.oom_killed()

    def release(self) -> None:
        """Close what is still open and remove the cgroup or container (killing what is left
        in it)."""
        self.started()
        if self.info_read is not None:
            try:
                os.close(self.info_read)
            except OSError:
                pass
            self.info_read = None
        if self.group is not None:
            self.group.remove()
            self.group = None
        if self.cleanup is not None:
            cleanup, self.cleanup = self.cleanup, None
            cleanup()


@dataclass(frozen=True)
class BuiltBot:
    """A bot built by :mod:`bots_sdk.builds`, as a launcher runs it: its folder (read-only at
    /bot), the command that runs it there, the toolchain's folders it needs read-only where they
    are, and its ``PATH``."""

    folder: Path
    command: tuple[str, ...]
    binds: tuple[str, ...] = ()
    path: str = ""


#: A build's command: given where its sources are, the folder it builds in, the packer script
#: and whether it runs sandboxed (all as the build sees them), the argv to run.
BuildCommand = Callable[[str, str, str, bool], list[str]]


@dataclass(frozen=True)
class BuildJob:
    """A build as a launcher runs it (:mod:`bots_sdk.builds.build`): the sources, read-only;
    the packer, its PID 1; the toolchain's folders and ``PATH``; the limits of the whole build;
    and its command, told where the launcher put each of them."""

    sources: Path
    packer: Path
    command: BuildCommand
    limits: Limits
    binds: tuple[str, ...] = ()
    path: str = ""


class Launcher(Protocol):
    """A sandbox backend: launches a bot's process for a seat, and a build's."""

    layers: list[str]

    def launch(self, bot: Path | BuiltBot, seat: int) -> Launch: ...

    def build_launch(self, job: BuildJob) -> Launch: ...


def per_bot_limits() -> str:
    """Which limits cover a bot's whole process tree on this host, in one line (for ``play``
    and ``/api/health/``).

    >>> per_bot_limits().startswith(("per bot", "per process"))
    True
    """
    found = cgroups.support()
    if found.ok:
        return f"per bot: memory, processes and CPU clock ({found.detail})"
    return f"per process only: memory, processes and CPU clock ({found.detail})"
