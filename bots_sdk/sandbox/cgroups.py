"""A control group per seat: one CPU clock, one memory budget and one process budget for a bot
and everything it starts, counted by the kernel.

Rlimits are per process: five children may each hold the whole memory limit, and the CPU a
child burns is not the bot's. A cgroup counts the whole tree, shared memory (``memfd``, tmpfs
pages) included. :func:`support` finds what this host offers — cgroup v1 with the ``memory``,
``pids`` and ``cpuacct`` controllers (as on our CI), or cgroup v2 with ``memory`` and ``pids``
enabled below our own group — and :meth:`SeatGroup.create` makes one group per seat under the
referee's own (so a container's limits still bound every bot). The sandbox chain enters it as
its first step (:meth:`SeatGroup.enter_argv`), before anything of the bot runs.

Where no cgroup can be made (no controllers, no permission), :func:`support` says why and the
sandbox falls back to per-process rlimits; ``play`` and ``/api/health/`` report it.

>>> isinstance(support().detail, str)
True
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

#: The v1 controllers a seat's group needs: memory and processes limited, CPU counted.
V1_CONTROLLERS = ("memory", "pids", "cpuacct")
#: Every seat group's directory name starts with this, then the referee's pid.
PREFIX = "bidel-seat-"


@dataclass(frozen=True)
class Support:
    """What this host offers: ``version`` 1 or 2 with the parent directory of seat groups per
    controller, or ``version`` 0 and why not."""

    version: int
    parents: dict[str, Path] = field(default_factory=dict)
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.version > 0


def _mounts() -> list[tuple[str, Path, str, set[str]]]:
    """(root within its hierarchy, mount point, fs type, super options) of cgroup mounts."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        before, _, after = line.partition(" - ")
        parts, fs = before.split(), after.split()
        if len(parts) < 5 or len(fs) < 3 or fs[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((parts[3], Path(parts[4]), fs[0], set(fs[2].split(","))))
    return found


def _own_groups() -> dict[str, str]:
    """Our group per controller (``""`` for v2's unified hierarchy), from /proc/self/cgroup."""
    groups = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            groups[name] = path
    return groups


def _below(mount_root: str, mount_point: Path, own: str) -> Path:
    """The directory of our own group inside a mount of its hierarchy."""
    if mount_root != "/" and own.startswith(mount_root):
        own = own[len(mount_root) :]
    elif mount_root != "/":
        own = "/"
    return mount_point / own.lstrip("/")


def _writable_dir(path: Path) -> str:
    """Why seat groups cannot be made under ``path`` ('' if they can)."""
    probe = path / f"{PREFIX}probe-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    try:
        probe.mkdir()
    except OSError as exc:
        return f"cannot create a group under {path}: {exc.strerror}"
    try:
        probe.rmdir()
    except OSError:
        pass
    return ""


@cache
def support() -> Support:
    """Detect once per process what cgroups this host gives the referee (``BIDEL_CGROUPS=off``
    makes the referee do without, as on a host that has none)."""
    if os.environ.get("BIDEL_CGROUPS", "auto") == "off":
        return Support(0, detail="turned off (BIDEL_CGROUPS=off)")
    try:
        mounts, own = _mounts(), _own_groups()
    except OSError as exc:
        return Support(0, detail=f"cgroups unreadable: {exc}")
    v1: dict[str, Path] = {}
    problems: dict[str, str] = {}
    for root, point, fs, options in mounts:
        for name in V1_CONTROLLERS:
            if fs == "cgroup" and name in options and name in own and name not in v1:
                # A container may see a read-only mount first and a writable one of its own
                # (mount_private_hierarchies) later: take the first that lets us make groups.
                candidate = _below(root, point, own[name])
                problem = _writable_dir(candidate)
                if problem:
                    problems.setdefault(name, problem)
                else:
                    v1[name] = candidate
    if len(v1) == len(V1_CONTROLLERS):
        return Support(1, v1, "cgroup v1: memory, pids and cpuacct per seat")
    if problems:
        return Support(0, detail=next(iter(problems.values())))
    for root, point, fs, _ in mounts:
        if fs == "cgroup2" and "" in own:
            parent = _below(root, point, own[""])
            try:
                enabled = set((parent / "cgroup.subtree_control").read_text().split())
                if not {"memory", "pids"} <= enabled:
                    (parent / "cgroup.subtree_control").write_text("+memory +pids")
            except OSError as exc:
                return Support(0, detail=f"cgroup v2: cannot enable memory and pids: {exc}")
            problem = _writable_dir(parent)
            if problem:
                return Support(0, detail=problem)
            return Support(2, {"unified": parent}, "cgroup v2: memory, pids and cpu per seat")
    missing = [n for n in V1_CONTROLLERS if n not in v1]
    return Support(0, detail=f"no cgroup controllers for {', '.join(missing)}")


#: Where :func:`mount_private_hierarchies` mounts the v1 controllers.
PRIVATE_ROOT = Path("/run/bidel-cgroup")


def mount_private_hierarchies() -> list[str]:
    """Mount each v1 controller the referee lacks a writable view of under
    :data:`PRIVATE_ROOT` (root with CAP_SYS_ADMIN: a runner container, whose
    ``/sys/fs/cgroup`` Docker mounts read-only; with ``--cgroupns=private`` the mount shows
    the container's own group, so its limits still bound every bot). Returns what it
    mounted; the caller then asks :func:`support` again."""
    if support().ok or os.geteuid() != 0:
        return []
    mounted = []
    for name in V1_CONTROLLERS:
        target = PRIVATE_ROOT / name
        target.mkdir(parents=True, exist_ok=True)
        if os.path.ismount(target):
            continue
        done = subprocess.run(
            ["mount", "-t", "cgroup", "-o", name, f"bidel-{name}", str(target)],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            mounted.append(name)
    support.cache_clear()
    return mounted


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class SeatGroup:
    """One seat's group: its directory per controller (v1), or its one directory (v2, under
    the key ``unified``)."""

    version: int
    dirs: dict[str, Path]
    #: The CPU counter's file, open: it is read after every move (re-read with pread).
    _cpu_file: int | None = None

    @classmethod
    def create(cls, memory_mb: int, processes: int) -> SeatGroup | None:
        """A new group limited to ``memory_mb`` (no swap) and ``processes``, or None where the
        host has no cgroups (:func:`support` says why)."""
        found = support()
        if not found.ok:
            return None
        _sweep(found)
        name = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        group = cls(found.version, {})
        try:
            for controller, parent in found.parents.items():
                (parent / name).mkdir()
                group.dirs[controller] = parent / name
            limit = str(memory_mb * 1024 * 1024)
            if found.version == 1:
                group._file("memory", "memory.limit_in_bytes").write_text(limit)
                swap = group._file("memory", "memory.memsw.limit_in_bytes")
                if swap.exists():
                    swap.write_text(limit)
                group._file("pids", "pids.max").write_text(str(processes))
            else:
                group._file("memory", "memory.max").write_text(limit)
                swap = group._file("memory", "memory.swap.max")
                if swap.exists():
                    swap.write_text("0")
                group._file("pids", "pids.max").write_text(str(processes))
        except OSError:
            group.remove()
            raise
        return group

    def enter_argv(self) -> list[str]:
        """A prefix for the sandbox chain: a shell that moves itself into the group, then
        execs the rest (so every process of the bot is born inside it)."""
        script = (
            'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
        )
        procs = [str(d / "cgroup.procs") for d in self.dirs.values()]
        return ["/bin/sh", "-c", script, "sh", *procs, "--"]

    def _file(self, controller: str, name: str) -> Path:
        return self.dirs["unified" if self.version == 2 else controller] / name

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process of the seat, living or gone."""
        try:
            if self._cpu_file is None:
                name = "cpuacct.usage" if self.version == 1 else "cpu.stat"
                self._cpu_file = os.open(self._file("cpuacct", name), os.O_RDONLY)
            text = os.pread(self._cpu_file, 4096, 0).decode()
            if self.version == 1:
                return int(text) / 1e9
            for line in text.splitlines():
                key, value = line.split()
                if key == "usage_usec":
                    return int(value) / 1e6
        except (OSError, ValueError):
            return None
        return None

    def memory_peak_mb(self) -> float | None:
        name = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        try:
            return int(self._file("memory", name).read_text()) / 2**20
        except (OSError, ValueError):
            return None

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the seat for want of memory."""
        name, key = (
            ("memory.oom_control", "oom_kill")
            if self.version == 1
            else ("memory.events", "oom_kill")
        )
        try:
            for line in self._file("memory", name).read_text().splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == key:
                    return int(parts[1]) > 0
        except (OSError, ValueError):
            return False
        return False

    def pids(self) -> list[int]:
        found: set[int] = set()
        for path in self.dirs.values():
            try:
                found.update(int(p) for p in (path / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return sorted(found)

    def kill(self, timeout: float = 10.0) -> None:
        """SIGKILL every process in the group until none is left (the pids limit bounds how
        many a fork loop can make meanwhile)."""
        deadline = time.monotonic() + timeout
        if self.version == 2:
            try:
                self._file("", "cgroup.kill").write_text("1")
            except OSError:
                pass
        while time.monotonic() < deadline:
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            _wait_any(pids, deadline)

    def remove(self) -> None:
        """Kill what is left and delete the group's directories."""
        self.kill()
        if self._cpu_file is not None:
            os.close(self._cpu_file)
            self._cpu_file = None
        for path in self.dirs.values():
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # a dying process still listed: give it a moment
                    _wait_any(self.pids(), time.monotonic() + 0.1)
        self.dirs = {}


def _wait_any(pids: list[int], deadline: float) -> None:
    """Block until one of ``pids`` has exited (its pidfd turns readable) or the deadline."""
    handles = []
    for pid in pids:
        try:
            handles.append(os.pidfd_open(pid))
        except OSError:
            return  # already gone
    try:
        if handles:
            select.select(handles, [], [], max(0.0, min(0.2, deadline - time.monotonic())))
    finally:
        for handle in handles:
            os.close(handle)


def _sweep(found: Support) -> None:
    """Remove seat groups left by referees that died (their pid is in the name)."""
    for parent in found.parents.values():
        try:
            entries = list(parent.iterdir())
        except OSError:
            continue
        for entry in entries:
            if not entry.name.startswith(PREFIX) or "probe" in entry.name:
                continue
            try:
                owner = int(entry.name[len(PREFIX) :].split("-", 1)[0])
            except ValueError:
                continue
            if owner != os.getpid() and not alive(owner):
                SeatGroup(found.version, {"stale": entry}).remove()
