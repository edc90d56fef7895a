"""How a bot process is launched: isolated by layers, or not at all in the author's debug
mode. Backends (``BIDEL_SANDBOX``): ``bubblewrap`` where it is installed, else ``namespaces``
(the same layers made with ``unshare`` and :mod:`bots_sdk.sandbox_init`), and ``docker`` for
production hosts.

The sandboxed chain, exec'd (no ``preexec_fn``) from an empty environment::

    prlimit --as --cpu --fsize --nofile --nproc --core=0 --
      bwrap --unshare-net --unshare-pid --unshare-ipc --unshare-uts --die-with-parent
            --new-session --clearenv  (read-only: /usr, the Python runtime, the SDK, the bot;
            a size-capped private tmpfs at /tmp; /proc and /dev of its own)
        setpriv --reuid=U --regid=U --clear-groups --inh-caps=-all --no-new-privs
          python -I -S -c 'run bots_sdk.host' /bot/<file> /tmp

No network (its own namespace has only a loopback that is down), its own PID namespace with
bwrap's reaper as PID 1 (so SIGXCPU works), an unprivileged uid of its own (so RLIMIT_NPROC
counts), and ``--die-with-parent`` plus a process-group kill: nothing it starts survives.

>>> Unsandboxed().layers
[]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

SDK_ROOT = Path(__file__).resolve().parent.parent
_HOST = "import sys; sys.path[:0] = ['/sdk']; from bots_sdk.host import main; sys.exit(main())"


class SandboxUnavailable(RuntimeError):
    """This host cannot provide a layer the sandbox needs; the message says which."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one bot process."""

    memory_mb: int = 512
    cpu_seconds: int = 600
    processes: int = 16
    file_size_mb: int = 8
    open_files: int = 64
    tmp_mb: int = 16
    stderr_bytes: int = 64 * 1024


@dataclass
class Unsandboxed:
    """The bot runs as a plain subprocess of the referee: the debug mode for one's own bot
    (``--unsafe-no-sandbox``). Same protocol, no isolation."""

    layers: list[str] = field(default_factory=list)

    def command(self, bot: Path, seat: int) -> tuple[list[str], dict[str, str]]:
        env = {"PYTHONPATH": str(SDK_ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return [sys.executable, "-m", "bots_sdk.host", str(bot.resolve()), "/tmp"], env


@dataclass
class Bubblewrap:
    """Namespaces, mounts, an unprivileged uid and rlimits (see the module docstring)."""

    limits: Limits = field(default_factory=Limits)
    base_uid: int = 61000
    layers: list[str] = field(
        default_factory=lambda: [
            "network namespace (no network)",
            "pid namespace",
            "read-only filesystem: runtime, SDK and the bot only",
            "private tmpfs",
            "unprivileged uid per seat",
            "rlimits: memory, CPU, processes, file size, open files",
            "empty environment",
            "die with the referee",
        ]
    )

    @staticmethod
    def check() -> None:
        """Raise :class:`SandboxUnavailable` naming what is missing on this host."""
        for tool in ("bwrap", "setpriv", "prlimit"):
            if shutil.which(tool) is None:
                raise SandboxUnavailable(
                    f"{tool} is not installed (bubblewrap, util-linux): the sandbox needs it"
                )
        if os.geteuid() != 0:
            raise SandboxUnavailable("the sandbox switches each bot to its own uid: run as root")
        probe = subprocess.run(
            ["bwrap", "--unshare-net", "--unshare-pid", "--ro-bind", "/usr", "/usr",
             "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
             "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "/bin/true"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        if probe.returncode != 0:
            raise SandboxUnavailable(
                f"bubblewrap cannot create namespaces here: {probe.stderr.strip()}"
            )

    def uid(self, seat: int) -> int:
        # One uid per (referee process, seat): matches in parallel never share a process count.
        return self.base_uid + (os.getpid() % 4000) * 16 + seat

    def command(self, bot: Path, seat: int) -> tuple[list[str], dict[str, str]]:
        limits = self.limits
        python = Path(os.path.realpath(sys.executable))
        runtime = Path(sys.base_prefix).resolve()
        uid = str(self.uid(seat))
        inside = f"/bot/{bot.name}"
        argv = [
            *_prlimit(limits),
            "bwrap",
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--die-with-parent", "--new-session", "--clearenv",
            *_open_dirs(["/sdk", "/bot", *_parents(runtime)]),
            "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64",
            "--ro-bind", str(runtime), str(runtime),
            "--ro-bind", str(SDK_ROOT / "engine"), "/sdk/engine",
            "--ro-bind", str(SDK_ROOT / "bots_sdk"), "/sdk/bots_sdk",
            "--ro-bind", str(bot.resolve()), inside,
            "--proc", "/proc",
            "--dev", "/dev",
            "--perms", "1777", "--size", str(limits.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp",
            "--chdir", "/tmp",
            "--setenv", "HOME", "/tmp",
            "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
            str(python), "-I", "-S", "-B", "-c", _HOST, inside, "/tmp",
        ]  # fmt: skip
        return argv, {}


def _prlimit(limits: Limits) -> list[str]:
    return [
        "prlimit",
        f"--as={limits.memory_mb * 1024 * 1024}",
        f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",  # SIGXCPU, then SIGKILL
        f"--fsize={limits.file_size_mb * 1024 * 1024}",
        f"--nofile={limits.open_files}",
        f"--nproc={limits.processes}",
        "--core=0",
        "--",
    ]


def _parents(path: Path) -> list[str]:
    return [str(p) for p in reversed(path.parents) if str(p) != "/"] + [str(path)]


def _open_dirs(paths: list[str]) -> list[str]:
    # bwrap makes missing mount points 0700; the bot's uid must be able to walk them.
    out: list[str] = []
    for path in paths:
        out += ["--perms", "0755", "--dir", path]
    return out


@dataclass
class Namespaces:
    """The same layers without bubblewrap, for hosts that lack it: ``unshare`` (util-linux)
    makes the namespaces and :mod:`bots_sdk.sandbox_init` (PID 1 inside) mounts a root of its
    own, chroots, and runs the bot under its uid as its child."""

    limits: Limits = field(default_factory=Limits)
    base_uid: int = 61000
    layers: list[str] = field(
        default_factory=lambda: [
            "network namespace (no network)",
            "pid namespace with a reaper at PID 1",
            "read-only filesystem: runtime, SDK and the bot only",
            "private tmpfs",
            "unprivileged uid per seat",
            "rlimits: memory, CPU, processes, file size, open files",
            "empty environment",
        ]
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
        probe = subprocess.run(["unshare", "--mount", "--net", "--pid", "--fork", "true"],
                               capture_output=True, text=True, timeout=30)  # fmt: skip
        if probe.returncode != 0:
            raise SandboxUnavailable(f"cannot create namespaces here: {probe.stderr.strip()}")

    def uid(self, seat: int) -> int:
        return self.base_uid + (os.getpid() % 4000) * 16 + seat

    def command(self, bot: Path, seat: int) -> tuple[list[str], dict[str, str]]:
        limits = self.limits
        python = str(Path(os.path.realpath(sys.executable)))
        runtime = str(Path(sys.base_prefix).resolve())
        inside = f"/bot/{bot.name}"
        argv = [
            *_prlimit(limits),
            "unshare", "--mount", "--net", "--pid", "--ipc", "--uts", "--fork",
            "--kill-child", "--propagation", "private", "--",
            python, "-I", "-S", "-B", str(SDK_ROOT / "bots_sdk" / "sandbox_init.py"),
            str(self.uid(seat)), str(limits.tmp_mb), runtime, str(SDK_ROOT), str(bot.resolve()),
            "--", python, "-I", "-S", "-B", "-c", _HOST, inside, "/tmp",
        ]  # fmt: skip
        return argv, {}


@dataclass
class Docker:
    """The production backend: each bot in its own container (``docker run -i``) with no
    network, a read-only root, memory, CPU and process limits, no capabilities, an
    unprivileged user and no environment of the worker. Every container carries the label
    ``bidel.bot`` so :meth:`janitor` can remove leftovers. Give workers this launcher through a
    separate runner host's Docker endpoint (``DOCKER_HOST``), never the local socket: the
    socket is root-equivalent.
    """

    limits: Limits = field(default_factory=Limits)
    image: str = "python:3.11-slim"
    layers: list[str] = field(
        default_factory=lambda: [
            "container: no network, read-only root, private tmpfs",
            "memory, CPU, process limits",
            "no capabilities, no new privileges, uid 65534",
            "empty environment",
        ]
    )

    @staticmethod
    def check() -> None:
        """Raise :class:`SandboxUnavailable` unless a Docker engine answers."""
        if shutil.which("docker") is None:
            raise SandboxUnavailable("the docker client is not installed")
        probe = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"],
                               capture_output=True, text=True, timeout=30)  # fmt: skip
        if probe.returncode != 0:
            raise SandboxUnavailable(f"no Docker engine answers: {probe.stderr.strip()[:200]}")

    def command(self, bot: Path, seat: int) -> tuple[list[str], dict[str, str]]:
        limits = self.limits
        inside = f"/bot/{bot.name}"
        argv = [
            "docker", "run", "--rm", "-i", "--init", "--network", "none", "--read-only",
            "--tmpfs", f"/tmp:size={limits.tmp_mb}m",
            "--memory", f"{limits.memory_mb}m", "--memory-swap", f"{limits.memory_mb}m",
            "--pids-limit", str(limits.processes), "--cpus", "1",
            "--ulimit", f"cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",
            "--ulimit", f"fsize={limits.file_size_mb * 1024 * 1024}",
            "--ulimit", f"nofile={limits.open_files}",
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--user", "65534",
            "--name", f"bidel-bot-{os.getpid()}-{seat}-{uuid.uuid4().hex[:8]}",
            "--label", "bidel.bot=1", "--label", f"bidel.seat={seat}",
            "-v", f"{SDK_ROOT / 'engine'}:/sdk/engine:ro",
            "-v", f"{SDK_ROOT / 'bots_sdk'}:/sdk/bots_sdk:ro",
            "-v", f"{bot.resolve()}:{inside}:ro",
            "-w", "/tmp",
            self.image, "python", "-I", "-S", "-B", "-c", _HOST, inside, "/tmp",
        ]  # fmt: skip
        return argv, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}

    @staticmethod
    def stop(argv: list[str]) -> None:
        """Remove the container started by ``argv`` (killing the client does not stop it)."""
        name = argv[argv.index("--name") + 1]
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=60)

    @staticmethod
    def janitor() -> int:
        """Remove every container of a bot that is still there; returns how many."""
        listed = subprocess.run(["docker", "ps", "-aq", "--filter", "label=bidel.bot"],
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        ids = listed.stdout.split()
        if ids:
            subprocess.run(["docker", "rm", "-f", *ids], capture_output=True, timeout=120)
        return len(ids)


Launcher = Unsandboxed | Bubblewrap | Namespaces | Docker
#: The backends by name (the ``BIDEL_SANDBOX`` setting, or the ``sandbox`` argument).
BACKENDS: dict[str, type[Bubblewrap] | type[Namespaces] | type[Docker]] = {
    "bubblewrap": Bubblewrap,
    "namespaces": Namespaces,
    "docker": Docker,
}


def default_launcher(
    unsafe: bool = False, limits: Limits | None = None, backend: str | None = None
) -> Launcher:
    """The launcher for untrusted bots: the chosen backend (``BIDEL_SANDBOX``, default
    bubblewrap), or refuse with the missing layer named, unless ``unsafe``."""
    if unsafe:
        return Unsandboxed()
    name = backend or os.environ.get("BIDEL_SANDBOX", "bubblewrap")
    try:
        cls = BACKENDS[name]
    except KeyError:
        raise SandboxUnavailable(
            f"unknown sandbox backend {name!r}; use {' or '.join(BACKENDS)}"
        ) from None
    cls.check()
    return cls(limits=limits or Limits())
