"""Tries every kind of kernel and file state another seat (in this match or the next) could
read: the keyring, System V message queues, POSIX shared memory, an abstract Unix socket, its
/tmp. Reports FOUND <where> for what another bot left, STASHED <where> for what it could leave."""

import ctypes
import os
import platform
import socket
import sys

from bots_sdk import Bot, lowest

SYSCALLS = {"x86_64": {"add_key": 248, "keyctl": 250}, "aarch64": {"add_key": 217, "keyctl": 219}}
KEY_SPEC_USER_KEYRING = -4
KEYCTL_SETPERM = 5


def report(*words):
    print(*words, file=sys.stderr, flush=True)


class Stash(Bot):
    def pass_cards(self, view):
        secret = " ".join(view.hand).encode()
        libc = ctypes.CDLL(None, use_errno=True)
        calls = SYSCALLS.get(platform.machine())
        # 1. the keyring, read through /proc/keys
        try:
            keys = open("/proc/keys").read()
            if "bidel-stash" in keys:
                report("FOUND keyring", keys.strip())
        except OSError:
            pass
        if calls:
            key = libc.syscall(
                calls["add_key"],
                b"user",
                b"bidel-stash",
                secret,
                len(secret),
                KEY_SPEC_USER_KEYRING,
            )
            if key >= 0:
                libc.syscall(calls["keyctl"], KEYCTL_SETPERM, key, 0x3F3F3F3F)
                report("STASHED keyring")
            else:
                report("DENIED keyring errno", ctypes.get_errno())
        # 2. System V message queues
        try:
            queues = open("/proc/sysvipc/msg").read().splitlines()[1:]
            if queues:
                report("FOUND sysv-msg", queues)
        except OSError:
            pass
        if libc.msgget(0x5EED, 0o1666) >= 0:
            report("STASHED sysv-msg")
        # 3. POSIX shared memory and a shared /tmp
        for path in ("/dev/shm/bidel-stash", "/tmp/bidel-stash"):
            if os.path.exists(path):
                report("FOUND", path)
            try:
                with open(path, "wb") as out:
                    out.write(secret)
                report("STASHED", path)
            except OSError:
                report("DENIED", path)
        # 4. an abstract Unix socket: another seat's listener would answer
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect("\0bidel-stash")
            report("FOUND abstract-socket")
        except OSError:
            pass
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.listener.bind("\0bidel-stash")
            self.listener.listen()
            report("STASHED abstract-socket")
        except OSError:
            pass
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)
