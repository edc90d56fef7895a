"""PID 1 of the namespaces sandbox (the backend for hosts without bubblewrap).

Run as root by ``unshare --mount --net --pid --ipc --uts --fork`` (see
:class:`bots_sdk.sandbox.Namespaces`): builds a root of its own — a tmpfs with read-only
binds of /usr, the Python runtime, the SDK and the bot, its own /proc, a size-capped /tmp —
chroots into it, then forks the bot under an unprivileged uid with an empty environment and
stays as its reaper, so that the bot is never PID 1 (which would ignore SIGXCPU). It exits
with the bot's status; when it dies, the kernel kills everything left in the namespace.

Usage: python sandbox_init.py UID TMP_MB RUNTIME SDK BOT -- COMMAND...
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = "/run/bidel-sandbox"


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


def build_root(runtime: str, sdk: str, bot: str, tmp_mb: int) -> str:
    os.makedirs(ROOT, exist_ok=True)
    _mount("-t", "tmpfs", "-o", "size=4m,mode=755", "tmpfs", ROOT)
    _bind("/usr", "/usr")
    for link, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
        os.symlink(target, f"{ROOT}/{link}")
    _bind(runtime, runtime)
    _bind(os.path.join(sdk, "engine"), "/sdk/engine")
    _bind(os.path.join(sdk, "bots_sdk"), "/sdk/bots_sdk")
    inside = "/bot/" + os.path.basename(bot)
    _bind(bot, inside)
    os.makedirs(ROOT + "/dev", exist_ok=True)
    for device in ("null", "zero", "urandom"):
        open(f"{ROOT}/dev/{device}", "a").close()
        _mount("--bind", f"/dev/{device}", f"{ROOT}/dev/{device}")
    os.makedirs(ROOT + "/proc", exist_ok=True)
    _mount("-t", "proc", "-o", "nosuid,nodev,noexec", "proc", ROOT + "/proc")
    os.makedirs(ROOT + "/tmp", exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={tmp_mb}m,mode=1777,nosuid,nodev", "tmpfs", ROOT + "/tmp")
    _mount("-o", "remount,ro,bind", ROOT)  # the root itself: read-only
    return inside


def main(argv: list[str]) -> int:
    split = argv.index("--")
    uid, tmp_mb, runtime, sdk, bot = argv[:split]
    command = argv[split + 1 :]
    build_root(runtime, sdk, bot, int(tmp_mb))
    os.chroot(ROOT)
    os.chdir("/tmp")
    child = os.fork()
    if child == 0:
        os.setgroups([])
        os.setresgid(int(uid), int(uid), int(uid))
        os.setresuid(int(uid), int(uid), int(uid))
        os.execve(command[0], command, {"HOME": "/tmp"})
    while True:  # reap until the bot is gone; orphans are reaped too
        pid, status = os.wait()
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
