"""How a bot process is launched: isolated by layers, or not at all in the author's debug
mode. Backends (``BIDEL_SANDBOX``): ``bubblewrap`` where it is installed, else ``namespaces``
(the same layers made with ``unshare`` and :mod:`bots_sdk.sandbox_init`), and ``docker`` for
production hosts. docs/security.md says what each layer stops.

The bubblewrap chain, exec'd (no ``preexec_fn``) from an empty environment::

    sh (joins the seat's cgroup: memory, pids, cpuacct; see bots_sdk.cgroups)
      setpriv --pdeathsig=KILL
        prlimit --as --cpu --fsize --nofile --nproc --core=0 --
          unshare --mount   (a private mount namespace, gone with the chain)
            sh -c 'mount -t tmpfs -o size=…,nr_inodes=… …'   (the bot's /tmp: bytes and files)
              bwrap --unshare-net --unshare-pid --unshare-ipc --unshare-uts --die-with-parent
                    --new-session --clearenv --seccomp FD  (read-only: /usr, the Python runtime,
                    the SDK, the bot; that tmpfs at /tmp; /proc and /dev of its own)
                setpriv --reuid=U --regid=U --clear-groups --inh-caps=-all --no-new-privs
                  python -I -S -c 'run bots_sdk.host' /bot/<file> /tmp

No network (its own namespace has only a loopback that is down), its own PID namespace with
bwrap's reaper as PID 1 (so SIGXCPU works), an unprivileged uid of its own (so RLIMIT_NPROC
counts), a seccomp filter (:mod:`bots_sdk.seccomp`: no keyring, namespaces, mounts, tracing,
BPF…), one cgroup for the bot's whole process tree (one CPU clock, one memory and process
budget), and ``--die-with-parent`` plus a process-group kill: nothing it starts survives.

>>> Unsandboxed().layers
[]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from bots_sdk import cgroups, seccomp

SDK_ROOT = Path(__file__).resolve().parent.parent
_HOST = "import sys; sys.path[:0] = ['/sdk']; from bots_sdk.host import main; sys.exit(main())"


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
    reports the bot's pid (bwrap's ``--info-fd``)."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    group: cgroups.SeatGroup | None = None
    info_read: int | None = None
    #: Descriptors of ours to close once the process has started.
    close_after_start: tuple[int, ...] = ()

    def started(self) -> None:
        for fd in self.close_after_start:
            try:
                os.close(fd)
            except OSError:
                pass
        self.close_after_start = ()

    def release(self) -> None:
        """Close what is still open and remove the cgroup (killing what is left in it)."""
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


@dataclass
class Unsandboxed:
    """The bot runs as a plain subprocess of the referee: the debug mode for one's own bot
    (``--unsafe-no-sandbox``). Same protocol, no isolation."""

    layers: list[str] = field(default_factory=list)

    def launch(self, bot: Path, seat: int) -> Launch:
        env = {"PYTHONPATH": str(SDK_ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return Launch([sys.executable, "-m", "bots_sdk.host", str(bot.resolve()), "/tmp"], env)


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
            "private tmpfs: size and file count capped",
            "unprivileged uid per seat",
            "seccomp: no keyring, namespaces, mounts, tracing, BPF",
            "cgroup per seat: memory, processes, CPU clock of the whole tree",
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
        _check_common()

    def uid(self, seat: int) -> int:
        # One uid per (referee process, seat): matches in parallel never share a process count.
        return self.base_uid + (os.getpid() % 4000) * 16 + seat

    def launch(self, bot: Path, seat: int) -> Launch:
        limits = self.limits
        python = Path(os.path.realpath(sys.executable))
        runtime = Path(sys.base_prefix).resolve()
        uid = str(self.uid(seat))
        inside = f"/bot/{bot.name}"
        source, mount_point = str(bot.resolve()), str(_mount_point())  # may raise: nothing held
        group = _seat_group(limits)
        try:
            filter_fd = seccomp.memfd()
            info_read, info_write = os.pipe()
        except BaseException:
            if group is not None:
                group.remove()
            raise
        argv = [
            *(group.enter_argv() if group else []),
            "setpriv", "--pdeathsig=KILL", "--",
            *_prlimit(limits),
            "unshare", "--mount", "--propagation", "private", "--",
            "/bin/sh", "-c", _MOUNT_TMP, "sh", _tmp_options(limits), mount_point,
            "bwrap",
            "--info-fd", str(info_write), "--seccomp", str(filter_fd),
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
            "--ro-bind", source, inside,
            "--proc", "/proc",
            "--dev", "/dev",
            "--bind", mount_point, "/tmp",
            "--chdir", "/tmp",
            "--setenv", "HOME", "/tmp",
            "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
            str(python), "-I", "-S", "-B", "-c", _HOST, inside, "/tmp",
        ]  # fmt: skip
        return Launch(
            argv, {}, pass_fds=(filter_fd, info_write), group=group, info_read=info_read,
            close_after_start=(filter_fd, info_write),
        )  # fmt: skip


# Mounts the bot's /tmp in the chain's private mount namespace (so it vanishes with the
# chain): bwrap's own --tmpfs caps bytes but not inodes, and 150,000 empty files in a
# second cost the kernel ~150 MB no size limit sees.
_MOUNT_TMP = 'mount -t tmpfs -o "$1" bidel-tmp "$2" || exit 125; shift 2; exec "$@"'


def _tmp_options(limits: Limits) -> str:
    return (
        f"size={limits.tmp_mb * 1024 * 1024},nr_inodes={limits.tmp_files},"
        "mode=1777,nosuid,nodev"
    )


def _mount_point() -> Path:
    """An empty directory that each chain's private mount namespace covers with its tmpfs."""
    path = Path(tempfile.gettempdir()) / "bidel-sandbox-tmp"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def _seat_group(limits: Limits) -> cgroups.SeatGroup | None:
    try:
        return cgroups.SeatGroup.create(limits.memory_mb, limits.processes)
    except OSError as exc:
        raise SandboxUnavailable(f"cannot make the seat's cgroup: {exc}") from None


def _check_common() -> None:
    """The layers every local backend needs besides its namespaces: the seccomp filter."""
    try:
        seccomp.compiled()
    except seccomp.SeccompUnavailable as exc:
        raise SandboxUnavailable(str(exc)) from None


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
            "private tmpfs: size and file count capped",
            "unprivileged uid per seat",
            "seccomp: no keyring, namespaces, mounts, tracing, BPF",
            "cgroup per seat: memory, processes, CPU clock of the whole tree",
            "rlimits: memory, CPU, processes, file size, open files",
            "empty environment",
            "die with the referee (parent-death signal on every process)",
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
        _check_common()

    def uid(self, seat: int) -> int:
        return self.base_uid + (os.getpid() % 4000) * 16 + seat

    def launch(self, bot: Path, seat: int) -> Launch:
        limits = self.limits
        python = str(Path(os.path.realpath(sys.executable)))
        runtime = str(Path(sys.base_prefix).resolve())
        inside = f"/bot/{bot.name}"
        source = str(bot.resolve())  # may raise: nothing held yet
        group = _seat_group(limits)
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
            "setpriv", "--pdeathsig=KILL", "--",
            *_prlimit(limits),
            "unshare", "--mount", "--net", "--pid", "--ipc", "--uts", "--fork",
            "--kill-child", "--propagation", "private", "--",
            python, "-I", "-S", "-B", str(SDK_ROOT / "bots_sdk" / "sandbox_init.py"),
            str(self.uid(seat)), _tmp_options(limits), str(filter_fd), runtime, str(SDK_ROOT),
            source,
            "--", python, "-I", "-S", "-B", "-c", _HOST, inside, "/tmp",
        ]  # fmt: skip
        return Launch(
            argv, {}, pass_fds=(filter_fd,), group=group, close_after_start=(filter_fd,)
        )


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
    image: str = field(default_factory=lambda: Docker.default_image())
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
        image = Docker.default_image()
        found = subprocess.run(["docker", "image", "inspect", image], capture_output=True,
                               timeout=30)  # fmt: skip
        if found.returncode != 0:  # never a pull at match time: the image is built ahead
            raise SandboxUnavailable(
                f"the bots' image {image!r} is not on the Docker host (BIDEL_DOCKER_IMAGE)"
            )

    @staticmethod
    def default_image() -> str:
        return os.environ.get("BIDEL_DOCKER_IMAGE", "python:3.11-slim")

    def launch(self, bot: Path, seat: int) -> Launch:
        argv, env = self.command(bot, seat)
        return Launch(argv, env)

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
