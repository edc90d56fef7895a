"""PID 1 of the namespaces sandbox (the backend for hosts without bubblewrap).

Run as root by ``unshare --mount --net --pid --ipc --uts --fork`` (see
:class:`bots_sdk.sandbox.Namespaces`): builds a root of its own — a tmpfs with read-only
binds of /usr, the Python runtime, the SDK and the bot, its own /proc, a size-capped /tmp —
chroots into it, then forks the bot under an unprivileged uid with an empty environment, a
parent-death signal and the seccomp filter (:mod:`bots_sdk.sandbox.seccomp`, compiled by the referee
and read from a descriptor), and stays as its reaper, so that the bot is never PID 1 (which
would ignore SIGXCPU). It exits with the bot's status; when it dies, the kernel kills
everything left in the namespace.

Usage: python init.py UID TMP_OPTIONS SECCOMP_FD RUNTIME SDK BOT [FOLDER=TARGET...] --
COMMAND... (each FOLDER=TARGET: a runtime package bound read-only at TARGET; bots_sdk.runtime)
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

ROOT = "/run/bidel-sandbox"

#: What /proc tells of the whole machine rather than of the bot's own processes: the locks
#: every process holds, counters of memory, CPU, disks, interrupts, open files and cgroups,
#: pressure. A seat could read another's doings in them (a lock on a shared file, memory
#: held or processes started as a signal); each is covered, where the kernel has it, by an
#: empty read-only file (a folder by an empty read-only tmpfs). The same list serves every
#: backend (bots_sdk.sandbox, bots_sdk.sandbox.containers).
MASKED_PROC_FILES = (
    "locks",
    "meminfo",
    "stat",
    "loadavg",
    "uptime",
    "vmstat",
    "zoneinfo",
    "buddyinfo",
    "pagetypeinfo",
    "diskstats",
    "partitions",
    "interrupts",
    "softirqs",
    "schedstat",
    "slabinfo",
    "swaps",
    "cgroups",
    "keys",
    "key-users",
    "timer_list",
    "sched_debug",
    "latency_stats",
    "kallsyms",
    "sys/fs/file-nr",
    "sys/fs/inode-nr",
    "sys/fs/inode-state",
    "sys/fs/dentry-state",
    "sys/fs/aio-nr",
    "sys/kernel/pty/nr",
)
MASKED_PROC_FOLDERS = ("pressure",)


def masked_proc() -> tuple[list[str], list[str]]:
    """The masked /proc files and folders this kernel has (a mount over a missing one would
    fail), each a path under /proc."""
    files = [name for name in MASKED_PROC_FILES if os.path.isfile("/proc/" + name)]
    folders = [name for name in MASKED_PROC_FOLDERS if os.path.isdir("/proc/" + name)]
    return files, folders


def _mount(*args: str) -> None:
    subprocess.run(["/usr/bin/mount", *args], check=True, capture_output=True)


def _bind(source: str, target: str) -> None:
    path = ROOT + target
    if os.path.isdir(source):
        os.makedirs(path, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "a").close()
    _mount("--bind", source, path)
    _mount("-o", "remount,bind,ro,nosuid,nodev", path)


def build_root(
    runtime: str, sdk: str, bot: str, tmp_options: str, extra: list[tuple[str, str]]
) -> str:
    os.makedirs(ROOT, exist_ok=True)
    _mount("-t", "tmpfs", "-o", "size=4m,mode=755", "tmpfs", ROOT)
    _bind("/usr", "/usr")
    for link, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
        os.symlink(target, f"{ROOT}/{link}")
    _bind(runtime, runtime)
    _bind(os.path.join(sdk, "engine"), "/sdk/engine")
    _bind(os.path.join(sdk, "bots_sdk"), "/sdk/bots_sdk")
    for source, target in extra:  # the runtime's packages (bots_sdk.runtime)
        _bind(source, target)
    inside = "/bot/" + os.path.basename(bot)
    _bind(bot, inside)
    os.makedirs(ROOT + "/dev", exist_ok=True)
    for device in ("null", "zero", "urandom"):
        open(f"{ROOT}/dev/{device}", "a").close()
        _mount("--bind", f"/dev/{device}", f"{ROOT}/dev/{device}")
    os.makedirs(ROOT + "/proc", exist_ok=True)
    _mount("-t", "proc", "-o", "nosuid,nodev,noexec", "proc", ROOT + "/proc")
    files, folders = masked_proc()
    empty = ROOT + "/dev/.empty"  # (in the root's own tmpfs, read-only once it is remounted)
    open(empty, "w").close()
    for name in files:
        _mount("--bind", empty, f"{ROOT}/proc/{name}")
        _mount("-o", "remount,bind,ro,nosuid,nodev,noexec", f"{ROOT}/proc/{name}")
    for name in folders:
        _mount(
            "-t", "tmpfs", "-o", "size=4k,ro,nosuid,nodev,noexec", "tmpfs", f"{ROOT}/proc/{name}"
        )
    os.makedirs(ROOT + "/tmp", exist_ok=True)
    _mount("-t", "tmpfs", "-o", tmp_options, "tmpfs", ROOT + "/tmp")
    _mount("-o", "remount,ro,bind", ROOT)  # the root itself: read-only
    return inside


_PR_SET_PDEATHSIG, _PR_SET_SECCOMP, _PR_SET_NO_NEW_PRIVS = 1, 22, 38
_SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _prctl(*args: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(*(ctypes.c_ulong(a) for a in args)) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def confine(program: bytes) -> None:
    """In the bot's process, after its uid is set: die with this init, gain no privilege by
    exec, and load the seccomp filter (a BPF program of 8-byte instructions)."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(code))
    _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def main(argv: list[str]) -> int:
    split = argv.index("--")
    uid, tmp_options, filter_fd, runtime, sdk, bot, *binds = argv[:split]
    extra = [(b.rpartition("=")[0], b.rpartition("=")[2]) for b in binds]
    command = argv[split + 1 :]
    program = _read_all(int(filter_fd))
    if not program or len(program) % 8:
        print("sandbox: no seccomp filter given", file=sys.stderr)
        return 125
    build_root(runtime, sdk, bot, tmp_options, extra)
    os.chroot(ROOT)
    os.chdir("/tmp")
    child = os.fork()
    if child == 0:
        try:
            os.setgroups([])
            os.setresgid(int(uid), int(uid), int(uid))
            os.setresuid(int(uid), int(uid), int(uid))
            confine(program)
            os.execve(command[0], command, {"HOME": "/tmp"})
        except OSError as exc:  # fail closed: no bot runs half-confined
            os.write(2, f"sandbox: cannot confine the bot: {exc}\n".encode())
        os._exit(125)
    while True:  # reap until the bot is gone; orphans are reaped too
        pid, status = os.wait()
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
