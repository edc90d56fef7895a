"""How a bot process is launched: isolated by layers, or not at all in the author's debug
mode. Backends (``BIDEL_SANDBOX``): ``bubblewrap`` (the default), ``namespaces`` (the same
layers made with ``unshare`` and :mod:`bots_sdk.sandbox_init`) and ``docker`` for production
hosts. The one chosen is used or refused with the missing layer named, never silently
replaced by another. docs/security.md says what each layer stops.

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
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bots_sdk import cgroups, sandbox_init, seccomp

SDK_ROOT = Path(__file__).resolve().parent.parent
_HOST = "import sys; sys.path[:0] = ['/sdk']; from bots_sdk.host import main, leave; leave(main())"


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
    reports the bot's pid (bwrap's ``--info-fd``). A backend whose bot lives elsewhere (a
    container) gives its own ``oom`` (whether the kernel killed it over its memory),
    ``cleanup``, and may give ``clock`` (CPU seconds of the bot's whole tree) or
    ``resume``/``suspend``: the bot runs only between the two (its turn), so its wall time is
    a bound on its CPU."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    group: cgroups.SeatGroup | None = None
    info_read: int | None = None
    #: Descriptors of ours to close once the process has started.
    close_after_start: tuple[int, ...] = ()
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
        if bot.is_dir():  # a built bot: its run command, in its folder
            from bots_sdk import build

            tools = build.toolchain(build.language_of(bot))
            command = shlex.join(build.run_command(bot))
            line = f"cd {shlex.quote(str(bot.resolve()))} && exec {command}"
            return Launch(["/bin/sh", "-c", line], {"PATH": tools.env_path, "HOME": "/tmp"})
        env = {"PYTHONPATH": str(SDK_ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return Launch([sys.executable, "-m", "bots_sdk.host", str(bot.resolve()), "/tmp"], env)

    def build_launch(self, sources: Path, build_line: str, tools: Any, limits: Any) -> Launch:
        """A build with the limits as rlimits and nothing else: the author's own code (its
        packer stops only the build's own processes, found below it)."""
        from bots_sdk import build

        folder = tempfile.mkdtemp(prefix="bidel-unsafe-build-")
        command = build.build_argv(
            build_line,
            str(sources),
            f"{folder}/build",
            python=os.path.realpath(sys.executable),
            script=str(build.PACKER),
            limits=limits,
            sandboxed=False,
        )
        argv = [*_prlimit(limits.as_sandbox_limits()), *command]
        launch = Launch(argv, {"PATH": tools.env_path, "HOME": folder})
        launch.cleanup = lambda: shutil.rmtree(folder, ignore_errors=True)
        return launch


_BWRAP_LAYERS = [
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
#: Rootless (an author's laptop): each seat gets a user namespace of its own instead of a uid
#: of its own; process counts are per seat through it.
_ROOTLESS_UID = "a user namespace per seat (in place of a uid per seat: not root)"


#: What the backends without builds say to a bot in another language (refused, never run
#: outside the sandbox).
_NOT_BUILT = (
    "bots in languages other than Python are built and run by the bubblewrap backend; "
    "the {backend} backend cannot run them yet"
)


def _rootless() -> bool:
    return os.geteuid() != 0


@dataclass
class Bubblewrap:
    """Namespaces, mounts, an unprivileged uid and rlimits (see the module docstring).

    Run by a user other than root (``rootless``), where the kernel lets unprivileged users
    make user namespaces, the same chain starts inside a user namespace of the seat's own
    (``unshare --user --map-root-user``: it may mount the bot's /tmp there) and bwrap puts the
    bot in a second one, as uid 1000 with no capabilities: the same layers, with a user
    namespace per seat in place of a uid per seat. Cgroups are used where the host delegates
    them to the user, else the rlimits bound each process (:attr:`not_applied` says so)."""

    limits: Limits = field(default_factory=Limits)
    base_uid: int = 61000
    rootless: bool = field(default_factory=_rootless)
    layers: list[str] = field(default_factory=list)
    #: Layers of the full sandbox this host cannot give, each with why.
    not_applied: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.layers:
            return
        layers = list(_BWRAP_LAYERS)
        found = cgroups.support()
        if not found.ok:
            layers.remove("cgroup per seat: memory, processes, CPU clock of the whole tree")
            self.not_applied.append(f"cgroup per seat ({found.detail}): rlimits per process")
        if self.rootless:
            layers[layers.index("unprivileged uid per seat")] = _ROOTLESS_UID
            self.not_applied.append("a uid per seat (not root): a user namespace per seat")
        self.layers = layers

    @staticmethod
    def check() -> None:
        """Raise :class:`SandboxUnavailable` naming what is missing on this host."""
        for tool in ("bwrap", "setpriv", "prlimit", "unshare"):
            if shutil.which(tool) is None:
                raise SandboxUnavailable(
                    f"{tool} is not installed (bubblewrap, util-linux): the sandbox needs it"
                )
        if _rootless():
            _check_user_namespaces()
        probe = subprocess.run(
            [
                *(_ROOTLESS_PROBE if _rootless() else []),
                "bwrap",
                "--unshare-net",
                "--unshare-pid",
                "--ro-bind",
                "/usr",
                "/usr",
                "--symlink",
                "usr/bin",
                "/bin",
                "--symlink",
                "usr/lib",
                "/lib",
                "--symlink",
                "usr/lib64",
                "/lib64",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "/bin/true",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if probe.returncode != 0:
            raise SandboxUnavailable(
                f"bubblewrap cannot create namespaces here: {probe.stderr.strip()}"
            )
        _check_common()

    def uid(self, seat: int) -> int:
        # One uid per (referee process, seat): matches in parallel never share a process count.
        return self.base_uid + (os.getpid() % 4000) * 16 + seat

    def launch(self, bot: Path, seat: int) -> Launch:
        if bot.is_dir():
            # A built bot (bots_sdk.build): its folder read-only at /bot, its run command there.
            from bots_sdk import build

            language = build.language_of(bot)
            tools = build.toolchain(language)
            return self._launch(
                self.uid(seat),
                self.limits,
                binds=[*((folder, folder) for folder in tools.binds), (str(bot.resolve()), "/bot")],
                chdir="/bot",
                command=build.run_command(bot),
                path=tools.env_path,
                report_pid=True,
            )
        runtime = Path(sys.base_prefix).resolve()
        packages = [(str(folder), at) for folder, at in runtime_binds()]
        inside = f"/bot/{bot.name}"
        return self._launch(
            self.uid(seat),
            self.limits,
            binds=[
                (str(runtime), str(runtime)),
                (str(SDK_ROOT / "engine"), "/sdk/engine"),
                (str(SDK_ROOT / "bots_sdk"), "/sdk/bots_sdk"),
                *packages,
                (str(bot.resolve()), inside),
            ],
            chdir="/tmp",
            command=[
                os.path.realpath(sys.executable),
                "-I",
                "-S",
                "-B",
                "-c",
                _HOST,
                inside,
                "/tmp",
            ],
            path="",
            report_pid=True,
        )

    def build_launch(self, sources: Path, build_line: str, tools: Any, limits: Any) -> Launch:
        """The build of a bot in another language (:mod:`bots_sdk.build`): the same layers
        under the build's limits, its sources read-only at /src, its toolchain's folders
        read-only where they are, a uid of its own; the packer (:mod:`bots_sdk.packer`) and
        the interpreter that runs it read-only, the packer as the sandbox's PID 1."""
        from bots_sdk import build

        runtime = str(Path(sys.base_prefix).resolve())
        return self._launch(
            self.uid(15),  # (seats use 0..n-1 of the process's range: 15 is the builds')
            limits.as_sandbox_limits(),
            binds=[
                *((folder, folder) for folder in tools.binds),
                (runtime, runtime),
                (str(build.PACKER), "/sdk/packer.py"),
                (str(sources), "/src"),
            ],
            chdir="/tmp",
            command=build.build_argv(
                build_line,
                "/src",
                "/tmp/build",
                python=os.path.realpath(sys.executable),
                script="/sdk/packer.py",
                limits=limits,
                sandboxed=True,
            ),
            path=tools.env_path,
            report_pid=False,
            pid1=True,
        )

    def _launch(
        self,
        uid: int,
        limits: Limits,
        *,
        binds: list[tuple[str, str]],
        chdir: str,
        command: list[str],
        path: str,
        report_pid: bool,
        pid1: bool = False,
    ) -> Launch:
        """The bubblewrap chain (see the module's docstring) around ``command``: /usr and
        ``binds`` read-only, a capped tmpfs at /tmp, ``PATH`` set where ``path`` is given;
        ``pid1``: ``command`` is the PID namespace's init (no bwrap process inside with it)."""
        mount_point = str(_mount_point())  # may raise: nothing held
        group = _seat_group(limits)
        try:
            filter_fd = seccomp.memfd()
            info_read, info_write = os.pipe() if report_pid else (None, None)
        except BaseException:
            if group is not None:
                group.remove()
            raise
        if self.rootless:
            # The seat's own user namespace first (its process count is the seat's: rlimits
            # are set inside it), in which it may mount the bot's /tmp; bwrap then puts the
            # bot in a nested one as an ordinary uid with no capabilities.
            outer = [
                "unshare",
                "--user",
                "--map-root-user",
                "--mount",
                "--propagation",
                "private",
                "--",
            ]
            mount_tmp = ["/bin/sh", "-c", _MOUNT_TMP, "sh", _tmp_options(limits), mount_point]
            chain = [*outer, *mount_tmp, *_prlimit(limits)]
            user = ["--unshare-user", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL"]
            drop: list[str] = []
        else:
            chain = [
                *_prlimit(limits),
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "--",
                "/bin/sh",
                "-c",
                _MOUNT_TMP,
                "sh",
                _tmp_options(limits),
                mount_point,
            ]
            user = []
            drop = [
                "setpriv",
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
            ]
        info = ["--info-fd", str(info_write)] if info_write is not None else []
        mounts = [arg for source, at in binds for arg in ("--ro-bind", source, at)]
        argv = [
            *(group.enter_argv() if group else []),
            "setpriv",
            "--pdeathsig=KILL",
            "--",
            *chain,
            "bwrap",
            *info,
            "--seccomp",
            str(filter_fd),
            *user,
            "--unshare-net",
            "--unshare-pid",
            *(["--as-pid-1"] if pid1 else []),
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            *_open_dirs(_mount_parents([at for _, at in binds])),
            "--ro-bind",
            "/usr",
            "/usr",
            "--symlink",
            "usr/bin",
            "/bin",
            "--symlink",
            "usr/lib",
            "/lib",
            "--symlink",
            "usr/lib64",
            "/lib64",
            *mounts,
            "--proc",
            "/proc",
            *_masks(),
            "--dev",
            "/dev",
            "--bind",
            mount_point,
            "/tmp",
            "--remount-ro",
            "/",  # bwrap's root tmpfs: the bot's own where it is "root"
            "--chdir",
            chdir,
            "--setenv",
            "HOME",
            "/tmp",
            *(["--setenv", "PATH", path] if path else []),
            *drop,
            *command,
        ]
        fds = (filter_fd,) if info_write is None else (filter_fd, info_write)
        return Launch(
            argv,
            {},
            pass_fds=fds,
            group=group,
            info_read=info_read,
            close_after_start=fds,
        )


#: Runs the bubblewrap probe as the rootless chain does: in a user namespace of its own.
_ROOTLESS_PROBE = ["unshare", "--user", "--map-root-user", "--mount", "--"]


def _check_user_namespaces() -> None:
    """Not root: the sandbox needs unprivileged user namespaces. Refuse saying why not."""
    probe = subprocess.run([*_ROOTLESS_PROBE, "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode == 0:
        return
    reason = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "refused"
    raise SandboxUnavailable(
        "not root, and this kernel does not let users make user namespaces "
        f"({reason}; see sysctls user.max_user_namespaces, kernel.unprivileged_userns_clone, "
        "kernel.apparmor_restrict_unprivileged_userns). Without them none of these layers "
        "can be applied: network, pid and mount namespaces, read-only root, private /tmp, "
        "a uid or user namespace per seat"
    )


def runtime_binds() -> list[tuple[Path, str]]:
    """The runtime packages' folders and where the bot sees them (:mod:`bots_sdk.runtime`)."""
    from bots_sdk import runtime

    return runtime.binds()


# Mounts the bot's /tmp in the chain's private mount namespace (so it vanishes with the
# chain): bwrap's own --tmpfs caps bytes but not inodes, and 150,000 empty files in a
# second cost the kernel ~150 MB no size limit sees.
_MOUNT_TMP = 'mount -t tmpfs -o "$1" bidel-tmp "$2" || exit 125; shift 2; exec "$@"'


def _tmp_options(limits: Limits) -> str:
    return f"size={limits.tmp_mb * 1024 * 1024},nr_inodes={limits.tmp_files},mode=1777,nosuid,nodev"


def _mount_point() -> Path:
    """An empty directory that each chain's private mount namespace covers with its tmpfs."""
    path = Path(tempfile.gettempdir()) / f"bidel-sandbox-tmp-{os.geteuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def _masks() -> list[str]:
    """bwrap's arguments covering what /proc tells of the whole machine
    (:data:`bots_sdk.sandbox_init.MASKED_PROC_FILES`): an empty read-only file over each file,
    an empty read-only tmpfs over each folder."""
    files, folders = sandbox_init.masked_proc()
    empty = _empty_file()
    out: list[str] = []
    for name in files:
        out += ["--ro-bind", empty, f"/proc/{name}"]
    for name in folders:
        out += ["--size", "4096", "--tmpfs", f"/proc/{name}", "--remount-ro", f"/proc/{name}"]
    return out


def _empty_file() -> str:
    """An empty file of ours, read-only, to bind over what a bot must not read (made anew if
    it is anything else)."""
    path = Path(tempfile.gettempdir()) / f"bidel-sandbox-empty-{os.geteuid()}"
    for _ in range(3):  # (another referee may be making it at the same moment)
        try:
            found = path.lstat()
            if stat.S_ISREG(found.st_mode) and found.st_size == 0 and found.st_uid == os.geteuid():
                return str(path)
            path.unlink()
        except FileNotFoundError:
            pass
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444))
        except FileExistsError:
            continue
        return str(path)
    raise SandboxUnavailable(f"cannot make an empty file at {path} to cover /proc with")


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


def _mount_parents(points: list[str]) -> list[str]:
    """The folders above ``points`` that bwrap will make (each once, outermost first).

    >>> _mount_parents(["/sdk/engine", "/sdk/bots_sdk", "/bot/x.py", "/bot"])
    ['/sdk', '/bot']
    """
    out: list[str] = []
    for point in points:
        for parent in reversed(Path(point).parents):
            if str(parent) != "/" and str(parent) not in out:
                out.append(str(parent))
    return out


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
        probe = subprocess.run(
            ["unshare", "--mount", "--net", "--pid", "--fork", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if probe.returncode != 0:
            raise SandboxUnavailable(f"cannot create namespaces here: {probe.stderr.strip()}")
        _check_common()

    def uid(self, seat: int) -> int:
        return self.base_uid + (os.getpid() % 4000) * 16 + seat

    @staticmethod
    def build_launch(sources: Path, build_line: str, tools: Any, limits: Any) -> Launch:
        raise SandboxUnavailable(_NOT_BUILT.format(backend="namespaces"))

    def launch(self, bot: Path, seat: int) -> Launch:
        if bot.is_dir():
            raise SandboxUnavailable(_NOT_BUILT.format(backend="namespaces"))
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
            "setpriv",
            "--pdeathsig=KILL",
            "--",
            *_prlimit(limits),
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
            str(SDK_ROOT / "bots_sdk" / "sandbox_init.py"),
            str(self.uid(seat)),
            _tmp_options(limits),
            str(filter_fd),
            runtime,
            str(SDK_ROOT),
            source,
            *(f"{folder}={at}" for folder, at in runtime_binds()),
            "--",
            python,
            "-I",
            "-S",
            "-B",
            "-c",
            _HOST,
            inside,
            "/tmp",
        ]
        return Launch(argv, {}, pass_fds=(filter_fd,), group=group, close_after_start=(filter_fd,))


@dataclass
class Docker:
    """The production backend: each bot in a container of its own on the engine
    ``DOCKER_HOST`` names, through the Docker SDK for Python (:mod:`bots_sdk.containers`): no
    network, a read-only root, memory, CPU and process limits, no capabilities, the bots'
    seccomp filter, an unprivileged user, an empty environment, and no path of the referee's
    shared (the code goes in on the container's input). A warm pool hides the engine's
    start-up. Point it at a separate runner host's engine, never a worker's local socket: the
    socket is root-equivalent.
    """

    limits: Limits = field(default_factory=Limits)
    layers: list[str] = field(
        default_factory=lambda: [
            "container: no network, read-only root, private tmpfs (bytes and files)",
            "memory, CPU, process limits of the whole container",
            "no capabilities, no new privileges, seccomp filter, uid 65534",
            "empty environment, nothing shared with the referee's host",
        ]
    )

    @staticmethod
    def check() -> None:
        """Raise :class:`SandboxUnavailable` unless a Docker engine answers with the bots'
        image, built from these SDK sources."""
        from bots_sdk import containers

        try:
            containers.check()
        except containers.Unavailable as exc:
            raise SandboxUnavailable(str(exc)) from None

    @staticmethod
    def build_launch(sources: Path, build_line: str, tools: Any, limits: Any) -> Launch:
        raise SandboxUnavailable(_NOT_BUILT.format(backend="docker"))

    def launch(self, bot: Path, seat: int) -> Launch:
        from bots_sdk import containers

        if bot.is_dir():
            raise SandboxUnavailable(_NOT_BUILT.format(backend="docker"))
        try:
            return containers.launch(bot, seat, self.limits)
        except containers.Unavailable as exc:
            raise SandboxUnavailable(str(exc)) from None

    @staticmethod
    def janitor() -> int:
        """Remove the bot containers left behind (see :func:`bots_sdk.containers.janitor`)."""
        from bots_sdk import containers

        return containers.janitor()


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
