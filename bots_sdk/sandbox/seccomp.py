"""The system calls a bot is refused, as one seccomp filter compiled by libseccomp.

A bot needs files, memory, threads and processes; it never needs the kernel's keyring (which
outlives processes and can be read across seats through ``/proc/keys``), new namespaces,
mounts, tracing, BPF, performance counters, ``userfaultfd``, io_uring, kernel modules or
kexec. Each of these answers ``EPERM``; ``clone3`` answers ``ENOSYS`` (its flags are behind a
pointer a filter cannot read), so the C library falls back to ``clone``, whose flags are
checked: a ``clone`` asking for a new namespace is refused.

Nor does it need to observe or mark what another process does with a file both can see: the
seats of a runner share the read-only runtime, so a lock one seat takes on a shared file, a
watch that reports another's opens, or a probe of which pages another has read would carry
its hand to a seat beside it, exactly. :data:`SHARED_INODE` refuses those calls whole
(``flock``, inotify, fanotify, ``cachestat``) and :data:`BY_ARGUMENT` the operations of
otherwise needed calls: ``fcntl``'s locks, leases and directory notifications, ``preadv2``'s
"only if cached" read, and the advice that evicts a shared file's pages (which would let a
sender reset what a receiver times). Each answers the error a kernel without the feature
gives, so programs that can do without it carry on. docs/security.md lists what seats still
share and what bounds it.

:func:`compiled` builds the filter with the system's libseccomp (``libseccomp.so.2``, called
through :mod:`ctypes`: five functions of its stable C API, so the SDK needs no third-party
package) as a BPF program; the bubblewrap backend hands it to ``bwrap --seccomp``, the
namespaces backend loads it in :mod:`bots_sdk.sandbox.init` right before the bot's
``execve``. Where libseccomp is missing the sandbox is refused
(:class:`~bots_sdk.sandbox.SandboxUnavailable`), never run without it.

>>> "keyctl" in DENIED and "read" not in DENIED
True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from dataclasses import dataclass
from functools import cache

#: Refused with EPERM, by family.
DENIED: tuple[str, ...] = (
    # the kernel keyring: state shared between processes of a uid, outliving them
    "add_key",
    "keyctl",
    "request_key",
    # namespaces and mounts: a bot's view of the system is made for it, not by it
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    # looking into other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    # kernel attack surface a card game never needs
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "quotactl",
    "syslog",
    "acct",
    "vhangup",
    "iopl",
    "ioperm",
    # the machine itself
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
)

#: Calls that observe or mark a file another process also sees, refused whole, with the error
#: a kernel without them gives (``flock``: "no locks available"; inotify, fanotify and
#: ``cachestat``: not there).
SHARED_INODE: dict[str, int] = {
    "flock": errno.ENOLCK,
    "inotify_init": errno.ENOSYS,
    "inotify_init1": errno.ENOSYS,
    "inotify_add_watch": errno.ENOSYS,
    "inotify_rm_watch": errno.ENOSYS,
    "fanotify_mark": errno.EPERM,  # (fanotify_init is in DENIED)
    "cachestat": errno.ENOSYS,
}

#: System call numbers of calls an older libseccomp may not know by name (the same on x86_64
#: and aarch64: calls added since Linux 5.1 have one number on every architecture).
NEW_CALLS = {"cachestat": 451}

# fcntl's commands (asm-generic/fcntl.h); 12-14 are the 64-bit-offset locks of 32-bit ABIs.
_F_LOCKS = (5, 6, 7, 12, 13, 14, 36, 37, 38)  # F_GETLK, F_SETLK(W), F_*LK64, F_OFD_*
_F_LEASE_AND_NOTIFY = (1024, 1025, 1026)  # F_SETLEASE, F_GETLEASE, F_NOTIFY
_RWF_NOWAIT = 0x8
_POSIX_FADV_DONTNEED, _POSIX_FADV_NOREUSE = 4, 5
_MADV_COLD, _MADV_PAGEOUT = 20, 21
#: The low 32 bits: these arguments are C ints, which the kernel reads without the upper half
#: (a comparison of all 64 bits would let a bot set a high bit and pass).
_INT = 0xFFFFFFFF


@dataclass(frozen=True)
class ArgRule:
    """A call refused when ``argument & mask == value``, answering ``error``."""

    call: str
    argument: int
    mask: int
    value: int
    error: int


#: Operations refused by their arguments (see the module's docstring).
BY_ARGUMENT: tuple[ArgRule, ...] = (
    *(
        ArgRule(call, 1, _INT, command, errno.ENOLCK)
        for call in ("fcntl", "fcntl64")
        for command in _F_LOCKS
    ),
    *(
        ArgRule(call, 1, _INT, command, errno.EPERM)
        for call in ("fcntl", "fcntl64")
        for command in _F_LEASE_AND_NOTIFY
    ),
    # preadv2(fd, iov, count, pos_l, pos_h, flags): RWF_NOWAIT reads only what is cached
    ArgRule("preadv2", 5, _RWF_NOWAIT, _RWF_NOWAIT, errno.EOPNOTSUPP),
    ArgRule("pwritev2", 5, _RWF_NOWAIT, _RWF_NOWAIT, errno.EOPNOTSUPP),
    # advice that drops a file's pages from the page cache (every process's copy)
    ArgRule("fadvise64", 3, _INT, _POSIX_FADV_DONTNEED, errno.EINVAL),
    ArgRule("fadvise64", 3, _INT, _POSIX_FADV_NOREUSE, errno.EINVAL),
    ArgRule("madvise", 2, _INT, _MADV_COLD, errno.EINVAL),
    ArgRule("madvise", 2, _INT, _MADV_PAGEOUT, errno.EINVAL),
)

#: Every CLONE_NEW* flag ``clone`` takes in its first argument (CLONE_NEWTIME is clone3's).
CLONE_NEW_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its binding) is missing: the message says which."""


# libseccomp's C API (seccomp.h): actions, the comparison and the argument comparison struct.
_ACT_ALLOW = 0x7FFF0000
_CMP_MASKED_EQ = 7


def _act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(
            f"libseccomp is not installed ({exc}): install the system's libseccomp2"
        ) from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.restype = None
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_export_bpf.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _rule(
    lib: ctypes.CDLL, ctx: int, action: int, name: str, *args: tuple[int, int, int, int]
) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number == -1 and name in NEW_CALLS and os.uname().machine in ("x86_64", "aarch64"):
        number = NEW_CALLS[name]  # newer than this libseccomp: by its number
    if number < 0:
        return  # not a call of this architecture
    array = (_ArgCmp * max(1, len(args)))(*(_ArgCmp(*a) for a in args))
    status = lib.seccomp_rule_add_array(ctx, action, number, len(args), array)
    if status < 0:
        raise SeccompUnavailable(f"libseccomp refused the rule on {name}: {os.strerror(-status)}")


@cache
def compiled() -> bytes:
    """The filter as a BPF program for this machine's architecture (built once).

    >>> program = compiled()
    >>> len(program) % 8 == 0 and len(program) > 8 * len(DENIED)  # sock_filter entries
    True
    """
    lib = _library()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("libseccomp could not make a filter (seccomp_init failed)")
    try:
        for name in DENIED:
            _rule(lib, ctx, _act_errno(errno.EPERM), name)
        for name, code in SHARED_INODE.items():
            _rule(lib, ctx, _act_errno(code), name)
        for rule in BY_ARGUMENT:
            condition = (rule.argument, _CMP_MASKED_EQ, rule.mask, rule.value)
            _rule(lib, ctx, _act_errno(rule.error), rule.call, condition)
        _rule(lib, ctx, _act_errno(errno.ENOSYS), "clone3")
        for bit in range(32):
            flag = 1 << bit
            if CLONE_NEW_FLAGS & flag:
                _rule(lib, ctx, _act_errno(errno.EPERM), "clone", (0, _CMP_MASKED_EQ, flag, flag))
        # libseccomp writes to a file descriptor: an anonymous file in memory.
        with open(os.memfd_create("bidel-seccomp", 0), "w+b") as handle:
            status = lib.seccomp_export_bpf(ctx, handle.fileno())
            if status < 0:
                raise SeccompUnavailable(f"libseccomp could not export the filter: {status}")
            handle.seek(0)
            return handle.read()
    finally:
        lib.seccomp_release(ctx)


def memfd() -> int:
    """A new file descriptor holding the compiled filter, at offset 0, inheritable (for
    ``bwrap --seccomp FD`` or the namespaces init). The caller closes it."""
    program = compiled()
    fd = os.memfd_create("bidel-seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    return fd


#: What the sandbox itself needs of these, in the runner container: bubblewrap makes the bot's
#: namespaces and mounts, pivots into its root and chroots.
SANDBOX_NEEDS = frozenset(
    {
        "unshare",
        "setns",
        "mount",
        "umount2",
        "pivot_root",
        "chroot",
        "move_mount",
        "open_tree",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "mount_setattr",
    }
)


def runner_profile() -> dict[str, object]:
    """The seccomp profile of the runner container (docs/operations.md): everything a bot is
    refused, less what building its sandbox takes. Docker's default profile refuses
    ``pivot_root`` outright, which bubblewrap cannot do without; this one refuses the rest.
    ``deploy/runner-seccomp.json`` is this, written out (a test keeps them equal)."""
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [
            {
                "names": [n for n in DENIED if n not in SANDBOX_NEEDS],
                "action": "SCMP_ACT_ERRNO",
                "errnoRet": errno.EPERM,
            },
        ],
    }


def docker_profile() -> dict[str, object]:
    """The same refusals as a Docker seccomp profile (``--security-opt seccomp=…``)."""
    clone_rules = [
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": errno.EPERM,
            "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}],
        }
        for flag in (1 << b for b in range(32))
        if CLONE_NEW_FLAGS & flag
    ]
    by_argument = [
        {
            "names": [rule.call],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": rule.error,
            # (Docker's masked comparison: "value" is the mask, "valueTwo" what it must equal)
            "args": [
                {
                    "index": rule.argument,
                    "value": rule.mask,
                    "valueTwo": rule.value,
                    "op": "SCMP_CMP_MASKED_EQ",
                }
            ],
        }
        for rule in BY_ARGUMENT
    ]
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [
            {"names": list(DENIED), "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM},
            *(
                {"names": [name], "action": "SCMP_ACT_ERRNO", "errnoRet": code}
                for name, code in SHARED_INODE.items()
            ),
            {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS},
            *clone_rules,
            *by_argument,
        ],
    }
