"""A sandbox's processes as /proc shows them: where the init and the bot are, their CPU,
waiting for them to go. Linux only, standard library only."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def reported_pids(info_fd: int, deadline: float) -> tuple[int | None, int | None]:
    """The sandbox's init (bwrap's ``child-pid``) and the bot, its child."""
    data = b""
    while b"}" not in data and time.monotonic() < deadline:
        ready, _, _ = select.select([info_fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(info_fd, 4096)
        if not chunk:
            break
        data += chunk
    try:
        init = int(json.loads(data)["child-pid"])
    except (ValueError, KeyError):
        return None, None
    return init, child_of(init, deadline)


def child_of(pid: int, deadline: float) -> int | None:
    """The first child of ``pid``, waiting for it to be forked (until ``deadline``)."""
    while time.monotonic() < deadline:
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return None
        if children:
            return int(children[0])
        select.select([], [], [], 0.002)  # forked right after: a short wait
    return None


def wait_gone(pids: list[int], deadline: float) -> None:
    """Block until each process has exited (a pidfd turns readable), or the deadline."""
    for pid in pids:
        try:
            handle = os.pidfd_open(pid)
        except (ProcessLookupError, OSError):
            continue
        try:
            select.select([handle], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(handle)


def reap(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait for ``process`` to exit (its pidfd, not ``Popen.wait``'s polling, whose growing
    sleeps outlast a bot that exits at once) or ``timeout``; reap it if it has."""
    if process.returncode is None:  # (not reaped: its pid is still its own)
        wait_gone([process.pid], time.monotonic() + timeout)
    try:
        process.wait(timeout=0)
    except subprocess.TimeoutExpired:
        pass


def tree_cpu(init: int) -> float | None:
    """CPU of the sandbox's init and every process below it (utime + stime + what each
    reaped). The init is PID 1 of the bot's PID namespace, so every process of the bot is
    below it, orphans included, and none can leave. Read from /proc/*/stat (world-readable:
    no ptrace right needed, unlike /proc/*/ns)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(f) for f in fields[11:15]) / _CLOCK_TICKS
    if init not in times:
        return None
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0.0, [init]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0.0)
        todo += children.get(pid, [])
    return total


def process_cpu(pid: int) -> float | None:
    """CPU of one process (utime + stime), None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
