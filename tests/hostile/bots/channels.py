"""Two seats of one author trying to share a hand through the kernel, past the referee.

Both seats run this file. Seat 0 is the sender: at its pass it marks, for every card it holds,
one of 52 files every seat can read (the card's index in the deck picks the file), in every
way it knows — it opens and reads the file, takes a ``flock``, a POSIX lock on byte 0 and an
open-file-description lock on byte 1, asks for a lease and a directory notification — and it
leaves a mark of its own for the card (an abstract Unix socket, a file in ``/tmp`` and in
``/dev/shm``, a System V message queue). It keeps all of that held until the match ends.

Seat 1 is the receiver: when it starts (before any decision) it watches the 52 files with
inotify, notes their access times and asks the kernel to drop their cached pages; at its own
pass (right after the sender's) it probes each channel for each of the 52 cards. It prints
one line per channel, ``CHANNEL <name> <indices seen as marked>`` (``[]`` when the probe
itself was refused), and both seats print ``CALL <name> <result>`` for every call they tried:
``ok``, or the errno's name. The sender prints ``HAND <indices>``: what a working channel
shows the receiver.
"""

import ctypes
import errno
import fcntl
import glob
import json
import mmap
import os
import signal
import socket
import struct
import sys

from bots_sdk import Bot, lowest
from engine.cards import RANKS, SUITS

DECK = sorted(rank + suit for suit in SUITS for rank in RANKS)
PREFIX = "bidel-channel-"
#: A System V key per card (the test removes what a run outside the sandbox leaves).
SYSV_KEY = 0x0B1DE000

libc = ctypes.CDLL(None, use_errno=True)
IN_ACCESS, IN_OPEN, IN_NONBLOCK = 0x1, 0x20, 0o4000
F_OFD_GETLK, F_OFD_SETLK = 36, 37
DN_ACCESS = 0x1
SYS_CACHESTAT = 451


def say(*words):
    print(*words, file=sys.stderr, flush=True)


def files():
    """52 files of the runtime that nothing else reads: 2to3's fixers, then (where a runtime
    lacks them) other modules of the standard library, in an order both seats agree on."""
    stdlib = os.path.dirname(os.__file__)
    found = sorted(glob.glob(os.path.join(stdlib, "lib2to3", "fixes", "fix_*.py")))
    found += sorted(set(glob.glob(os.path.join(stdlib, "*", "*.py"))) - set(found))
    return found[:52]


def attempt(name, call, *args):
    """``call(*args)``, saying CALL name ok|ERRNO; whether it worked."""
    try:
        call(*args)
    except OSError as exc:
        say("CALL", name, errno.errorcode.get(exc.errno, str(exc.errno)))
        return False
    say("CALL", name, "ok")
    return True


def touch(path):
    open(path, "w").close()


def lock_struct(kind, start):
    # struct flock: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, start, 1, 0)


class Channels(Bot):
    def __init__(self, seed=0):
        super().__init__(seed)
        self.paths = files()
        say("FILES", len(self.paths))
        self.held = []
        self.watches = {}
        for path in self.paths:  # (before the watches: these opens are the receiver's own)
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            except OSError:
                pass
            os.close(fd)
        self.atimes = [os.stat(path).st_atime_ns for path in self.paths]
        self.notify = libc.inotify_init1(IN_NONBLOCK)
        say("CALL inotify_init1", "ok" if self.notify >= 0 else errno.errorcode[ctypes.get_errno()])
        if self.notify >= 0:
            for index, path in enumerate(self.paths):
                wd = libc.inotify_add_watch(self.notify, path.encode(), IN_ACCESS | IN_OPEN)
                if wd >= 0:
                    self.watches[wd] = index

    def pass_cards(self, view):
        if view.seat == 0:
            self.send(view)
        elif view.seat == 1:
            self.receive()
        return view.hand[:3]

    def play(self, view):
        return lowest(view.legal)

    # --- seat 0 ---------------------------------------------------------------------------

    def send(self, view):
        signal.signal(signal.SIGIO, signal.SIG_IGN)  # (a lease's or a notification's signal)
        marked = sorted(DECK.index(card) for card in view.hand)
        say("HAND", json.dumps(marked))
        for index in marked:
            path = self.paths[index]
            fd = os.open(path, os.O_RDONLY)
            ofd = os.open(path, os.O_RDONLY)
            folder = os.open(os.path.dirname(path), os.O_RDONLY)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.held += [fd, ofd, folder, listener]
            os.read(fd, 4096)
            attempt("flock", fcntl.flock, fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            attempt("posix-lock", fcntl.fcntl, fd, fcntl.F_SETLK, lock_struct(fcntl.F_RDLCK, 0))
            attempt("ofd-lock", fcntl.fcntl, ofd, F_OFD_SETLK, lock_struct(fcntl.F_RDLCK, 1))
            attempt("lease", fcntl.fcntl, fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
            attempt("dnotify", fcntl.fcntl, folder, fcntl.F_NOTIFY, DN_ACCESS)
            attempt("fadvise-willneed", os.posix_fadvise, fd, 0, 0, os.POSIX_FADV_WILLNEED)
            if attempt("abstract-socket", listener.bind, f"\0{PREFIX}{index}"):
                attempt("listen", listener.listen)
            for where in ("/tmp", "/dev/shm"):
                attempt(f"file-{where}", touch, f"{where}/{PREFIX}{index}")
            queue = libc.msgget(SYSV_KEY + index, 0o1666)  # IPC_CREAT | 0666
            say("CALL sysv-msg", "ok" if queue >= 0 else errno.errorcode[ctypes.get_errno()])

    # --- seat 1 ---------------------------------------------------------------------------

    def receive(self):
        report = {}
        # the watches first (the receiver's own probes open the files too), then what only
        # looks at the page cache, then the read that may start reading ahead
        report["inotify"] = self.inotify_events()
        report["atime"] = [
            i for i, path in enumerate(self.paths) if os.stat(path).st_atime_ns != self.atimes[i]
        ]
        report["cachestat"] = self.each(self.probe_cachestat)
        report["mincore"] = self.each(self.probe_mincore)
        report["rwf-nowait"] = self.each(self.probe_nowait)
        report["flock"] = self.each(self.probe_flock)
        report["posix-lock"] = self.each(lambda fd: self.probe_lock(fd, fcntl.F_GETLK, 0))
        report["ofd-lock"] = self.each(lambda fd: self.probe_lock(fd, F_OFD_GETLK, 1))
        report["proc-locks"] = self.proc_locks()
        report["abstract-socket"] = [i for i in range(52) if self.probe_socket(i)]
        for where in ("/tmp", "/dev/shm"):
            report[f"file-{where}"] = [
                i for i in range(52) if os.path.exists(f"{where}/{PREFIX}{i}")
            ]
        report["sysv-msg"] = [i for i in range(52) if libc.msgget(SYSV_KEY + i, 0) >= 0]
        for name, seen in report.items():
            say("CHANNEL", name, json.dumps(sorted(seen)))

    def each(self, probe):
        seen = []
        for index, path in enumerate(self.paths):
            fd = os.open(path, os.O_RDONLY)
            try:
                if probe(fd):
                    seen.append(index)
            except OSError:
                pass
            finally:
                os.close(fd)
        return seen

    def inotify_events(self):
        if self.notify < 0:
            return []
        seen = set()
        buffer = ctypes.create_string_buffer(65536)
        while True:
            size = libc.read(self.notify, buffer, len(buffer))
            if size <= 0:
                break
            offset = 0
            while offset < size:
                wd, _mask, _cookie, length = struct.unpack_from("iIII", buffer.raw, offset)
                if wd in self.watches:
                    seen.add(self.watches[wd])
                offset += 16 + length
        return sorted(seen)

    @staticmethod
    def probe_flock(fd):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False

    @staticmethod
    def probe_lock(fd, command, start):
        answer = fcntl.fcntl(fd, command, lock_struct(fcntl.F_WRLCK, start))
        return struct.unpack("hhqqi4x", answer)[0] != fcntl.F_UNLCK

    def proc_locks(self):
        try:
            text = open("/proc/locks").read()
        except OSError:
            return []
        inodes = {os.stat(path).st_ino: i for i, path in enumerate(self.paths)}
        seen = set()
        for line in text.splitlines():
            # "1: FLOCK  ADVISORY  READ  1234 fd:01:5678 0 EOF": the device and inode
            for word in line.split():
                if word.count(":") == 2:
                    inode = int(word.rsplit(":", 1)[1])
                    if inode in inodes:
                        seen.add(inodes[inode])
        return sorted(seen)

    @staticmethod
    def probe_nowait(fd):
        try:
            os.preadv(fd, [bytearray(4096)], 0, os.RWF_NOWAIT)
        except BlockingIOError:
            return False
        return True

    @staticmethod
    def probe_cachestat(fd):
        # cachestat(fd, &range, &stat, 0): stat's first field is the pages in the page cache
        span = (ctypes.c_uint64 * 2)(0, 0)
        stat = (ctypes.c_uint64 * 5)()
        if libc.syscall(SYS_CACHESTAT, fd, span, stat, 0) != 0:
            raise OSError(ctypes.get_errno(), "cachestat")
        return stat[0] > 0

    @staticmethod
    def probe_mincore(fd):
        # the file's first page mapped, and the kernel asked whether it is in memory
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
        libc.mmap.argtypes += [ctypes.c_int, ctypes.c_long]
        address = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap")
        try:
            vector = (ctypes.c_ubyte * 1)()
            if libc.mincore(ctypes.c_void_p(address), mmap.PAGESIZE, vector) != 0:
                raise OSError(ctypes.get_errno(), "mincore")
            return bool(vector[0] & 1)
        finally:
            libc.munmap(ctypes.c_void_p(address), mmap.PAGESIZE)

    @staticmethod
    def probe_socket(index):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(f"\0{PREFIX}{index}")
        except OSError:
            return False
        finally:
            probe.close()
        return True
