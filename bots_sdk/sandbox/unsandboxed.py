"""No sandbox: the bot runs as a plain subprocess of the referee (``--unsafe-no-sandbox``, the
debug mode for one's own bot)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bots_sdk.sandbox.base import SDK_ROOT, BuildJob, BuiltBot, Launch
from bots_sdk.sandbox.layers import prlimit


@dataclass
class Unsandboxed:
    """The bot runs as a plain subprocess of the referee: the debug mode for one's own bot
    (``--unsafe-no-sandbox``). Same protocol, no isolation."""

    layers: list[str] = field(default_factory=list)

    def launch(self, bot: Path | BuiltBot, seat: int) -> Launch:
        if isinstance(bot, BuiltBot):  # its run command, in its folder
            command = shlex.join(bot.command)
            line = f"cd {shlex.quote(str(bot.folder.resolve()))} && exec {command}"
            return Launch(
                ["/bin/sh", "-c", line], {"PATH": bot.path, "HOME": "/tmp"}, locate=_itself
            )
        env = {"PYTHONPATH": str(SDK_ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        argv = [sys.executable, "-m", "bots_sdk.host", str(bot.resolve()), "/tmp"]
        return Launch(argv, env, locate=_itself)

    def build_launch(self, job: BuildJob) -> Launch:
        """A build with the limits as rlimits and nothing else: the author's own code (its
        packer stops only the build's own processes, found below it)."""
        folder = tempfile.mkdtemp(prefix="bidel-unsafe-build-")
        command = job.command(str(job.sources), f"{folder}/build", str(job.packer), False)
        launch = Launch([*prlimit(job.limits), *command], {"PATH": job.path, "HOME": folder})
        launch.cleanup = lambda: shutil.rmtree(folder, ignore_errors=True)
        return launch


def _itself(pid: int, deadline: float) -> tuple[int | None, int | None]:
    return None, pid  # (no sandbox: the process is the bot)
