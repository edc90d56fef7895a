"""Run a command as an ordinary user (uid and gid 65534), from root, for the rootless tests.

    python tests/bots_sdk/as_user.py [--no-user-namespaces] -- COMMAND...

The command runs in a user namespace of its own that maps the host's ids one to one (so the
user is the host's 65534, not root anywhere that counts) and a mount namespace of its own,
in which a folder the user could not walk into on the way to the Python runtime (``/root``
on hosts whose Python lives in root's home) is covered by a tmpfs holding only that runtime.
With ``--no-user-namespaces`` the namespace's ``user.max_user_namespaces`` is 0 first: a
kernel that lets no user make user namespaces, as seen from inside.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
USER = 65534


def _blocked_ancestor(path: Path) -> Path | None:
    """The highest folder above ``path`` the user may not walk into (None when all are)."""
    for folder in reversed(path.parents):
        if folder != Path("/") and not folder.stat().st_mode & 0o001:
            return folder
    return None


def _open_the_way(target: Path) -> None:
    """Cover the folder blocking ``target`` with a walkable tmpfs holding only ``target``."""
    blocked = _blocked_ancestor(target)
    if blocked is None:
        return
    child = blocked / target.relative_to(blocked).parts[0]
    hold = tempfile.mkdtemp(prefix="bidel-hold-")
    mount = ["mount", "--bind", str(blocked), hold]
    subprocess.run(mount, check=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "mode=755", "bidel-walk", str(blocked)], check=True
    )
    child.mkdir()
    subprocess.run(["mount", "--bind", f"{hold}/{child.name}", str(child)], check=True)


def _inside(command: list[str], no_user_namespaces: bool) -> None:
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    if no_user_namespaces:
        Path("/proc/sys/user/max_user_namespaces").write_text("0\n")
    for target in {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}:
        _open_the_way(target)
    os.setgroups([])
    os.setresgid(USER, USER, USER)
    os.setresuid(USER, USER, USER)
    os.execvp(command[0], command)


def main(argv: list[str]) -> int:
    no_user_namespaces = "--no-user-namespaces" in argv[: argv.index("--")]
    command = argv[argv.index("--") + 1 :]
    libc = ctypes.CDLL(None, use_errno=True)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
                raise OSError(ctypes.get_errno(), "unshare")
            os.write(ready_w, b"1")
            if os.read(go_r, 1) != b"1":
                raise OSError("no id maps")
            _inside(command, no_user_namespaces)
        except BaseException as exc:  # noqa: BLE001 — report and leave: this is the child
            print(f"as_user: {exc}", file=sys.stderr)
        os._exit(125)
    os.read(ready_r, 1)
    for kind in ("uid_map", "gid_map"):  # the host's ids, one to one
        Path(f"/proc/{child}/{kind}").write_text("0 0 4294967295\n")
    os.write(go_w, b"1")
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
