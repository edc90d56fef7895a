"""The host layers the local backends (bubblewrap and the namespaces) share: rlimits, the
bot's capped /tmp, /proc's machine-wide files covered, the seat's cgroup, the seccomp check,
and the runtime packages bound in."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from bots_sdk import runtime
from bots_sdk.sandbox import cgroups, seccomp
from bots_sdk.sandbox import init as sandbox_init
from bots_sdk.sandbox.base import Limits, SandboxUnavailable

#: What the backends without builds say to a bot in another language (refused, never run
#: outside the sandbox).
NOT_BUILT = (
    "bots in languages other than Python are built and run by the bubblewrap backend; "
    "the {backend} backend cannot run them yet"
)


#: The layers a seat's cgroup and uid give, by name (a backend drops or replaces them where
#: the host cannot give them).
CGROUP_LAYER = "cgroup per seat: memory, processes, CPU clock of the whole tree"
UID_LAYER = "unprivileged uid per seat"


def linux_layers(*, pid: str, die: str) -> list[str]:
    """The layers a Linux backend (bubblewrap, namespaces) gives a seat, as ``bidel play`` and
    ``/api/health/`` name them; ``pid`` and ``die`` say how the backend gives those two.

    >>> linux_layers(pid="pid namespace", die="die with the referee")[:2]
    ['network namespace (no network)', 'pid namespace']
    """
    return [
        "network namespace (no network)",
        pid,
        "read-only filesystem: runtime, SDK and the bot only",
        "private tmpfs: size and file count capped",
        UID_LAYER,
        "seccomp: no keyring, namespaces, mounts, tracing, BPF",
        CGROUP_LAYER,
        "rlimits: memory, CPU, processes, file size, open files",
        "empty environment",
        die,
    ]


def runtime_binds() -> list[tuple[Path, str]]:
    """The runtime packages' folders and where the bot sees them (:mod:`bots_sdk.runtime`)."""
    return runtime.binds()


# Mounts the bot's /tmp in the chain's private mount namespace (so it vanishes with the
# chain): bwrap's own --tmpfs caps bytes but not inodes, and 150,000 empty files in a
# second cost the kernel ~150 MB no size limit sees.
MOUNT_TMP = 'mount -t tmpfs -o "$1" bidel-tmp "$2" || exit 125; shift 2; exec "$@"'


def tmp_options(limits: Limits) -> str:
    return f"size={limits.tmp_mb * 1024 * 1024},nr_inodes={limits.tmp_files},mode=1777,nosuid,nodev"


def mount_point() -> Path:
    """An empty directory that each chain's private mount namespace covers with its tmpfs."""
    path = Path(tempfile.gettempdir()) / f"bidel-sandbox-tmp-{os.geteuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def proc_masks() -> list[str]:
    """bwrap's arguments covering what /proc tells of the whole machine
    (:data:`bots_sdk.sandbox.init.MASKED_PROC_FILES`): an empty read-only file over each file,
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


def seat_group(limits: Limits) -> cgroups.SeatGroup | None:
    try:
        return cgroups.SeatGroup.create(limits.memory_mb, limits.processes)
    except OSError as exc:
        raise SandboxUnavailable(f"cannot make the seat's cgroup: {exc}") from None


def check_common() -> None:
    """The layers every local backend needs besides its namespaces: the seccomp filter."""
    try:
        seccomp.compiled()
    except seccomp.SeccompUnavailable as exc:
        raise SandboxUnavailable(str(exc)) from None


def prlimit(limits: Limits) -> list[str]:
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


def mount_parents(points: list[str]) -> list[str]:
    """The folders above ``points`` that bwrap will make (each once, outermost first).

    >>> mount_parents(["/sdk/engine", "/sdk/bots_sdk", "/bot/x.py", "/bot"])
    ['/sdk', '/bot']
    """
    out: list[str] = []
    for point in points:
        for parent in reversed(Path(point).parents):
            if str(parent) != "/" and str(parent) not in out:
                out.append(str(parent))
    return out


def open_dirs(paths: list[str]) -> list[str]:
    # bwrap makes missing mount points 0700; the bot's uid must be able to walk them.
    out: list[str] = []
    for path in paths:
        out += ["--perms", "0755", "--dir", path]
    return out


#: bwrap's root: /usr read-only and the usual links into it (the probe's and every launch's).
USR_ROOT = [
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
]
