"""The bubblewrap layers without bubblewrap, for hosts that lack it: ``unshare`` makes the
namespaces and :mod:`bots_sdk.sandbox.init`, PID 1 inside, mounts a root of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bots_sdk.sandbox import init as sandbox_init
from bots_sdk.sandbox import procs, seccomp
from bots_sdk.sandbox.base import (
    SDK_ROOT,
    BuildJob,
    BuiltBot,
    Launch,
    Limits,
    SandboxUnavailable,
    host_argv,
)
from bots_sdk.sandbox.layers import (
    NOT_BUILT,
    check_common,
    linux_layers,
    prlimit,
    runtime_binds,
    seat_group,
    tmp_options,
)


@dataclass
class Namespaces:
    """The same layers without bubblewrap, for hosts that lack it: ``unshare`` (util-linux)
    makes the namespaces and :mod:`bots_sdk.sandbox.init` (PID 1 inside) mounts a root of its
    own, chroots, and runs the bot under its uid as its child."""

    limits: Limits = field(default_factory=Limits)
    base_uid: int = 61000
    layers: list[str] = field(
        default_factory=lambda: linux_layers(
            pid="pid namespace with a reaper at PID 1",
            die="die with the referee (parent-death signal on every process)",
        )
    )

    @staticmethod
    def check() -> None:
        """Raise :class:`SandboxUnavailable` naming what is missing on this host."""
        for tool in ("unshare", "prlimit", "mount"):
            if shutil.which(tool) is None:
                raise SandboxUnavailable(
                    f"{tool} is not installed (util-linux): the sandbox needs it"
                )
        if os.geteuid() != 0:
            raise SandboxUnavailable("the sandbox switches each bot to its own uid: run as root")
        probe = subprocess.run(
            ["unshare", "--mount", "--net", "--pid", "--fork", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if probe.returncode != 0:
            raise SandboxUnavailable(f"cannot create namespaces here: {probe.stderr.strip()}")
        check_common()

    def uid(self, seat: int) -> int:
        return self.base_uid + (os.getpid() % 4000) * 16 + seat

    @staticmethod
    def build_launch(job: BuildJob) -> Launch:
        raise SandboxUnavailable(NOT_BUILT.format(backend="namespaces"))

    def launch(self, bot: Path | BuiltBot, seat: int) -> Launch:
        if isinstance(bot, BuiltBot) or bot.is_dir():  # (a folder: a compiled bot's)
            raise SandboxUnavailable(NOT_BUILT.format(backend="namespaces"))
        limits = self.limits
        python = str(Path(os.path.realpath(sys.executable)))
        runtime = str(Path(sys.base_prefix).resolve())
        inside = f"/bot/{bot.name}"
        source = str(bot.resolve())  # may raise: nothing held yet
        group = seat_group(limits)
        try:
            filter_fd = seccomp.memfd()
        except BaseException:
            if group is not None:
                group.remove()
            raise
        # setpriv's parent-death signal stays on unshare (exec keeps it); unshare's
        # --kill-child gives one to the init, whose death empties the PID namespace.
        argv = [
            *(group.enter_argv() if group else []),
            "setpriv",
            "--pdeathsig=KILL",
            "--",
            *prlimit(limits),
            "unshare",
            "--mount",
            "--net",
            "--pid",
            "--ipc",
            "--uts",
            "--fork",
            "--kill-child",
            "--propagation",
            "private",
            "--",
            python,
            "-I",
            "-S",
            "-B",
            str(Path(sandbox_init.__file__).resolve()),
            str(self.uid(seat)),
            tmp_options(limits),
            str(filter_fd),
            runtime,
            str(SDK_ROOT),
            source,
            *(f"{folder}={at}" for folder, at in runtime_binds()),
            "--",
            *host_argv(python, inside),
        ]
        return Launch(
            argv,
            {},
            pass_fds=(filter_fd,),
            group=group,
            close_after_start=(filter_fd,),
            locate=_init_and_bot,
        )


def _init_and_bot(pid: int, deadline: float) -> tuple[int | None, int | None]:
    """The chain (sh, setpriv, prlimit, unshare: one process) -> the init -> the bot."""
    init = procs.child_of(pid, deadline)
    return init, (procs.child_of(init, deadline) if init is not None else None)
