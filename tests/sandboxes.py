"""Helpers for tests that run bots in the sandbox: which backends this host has, which
processes of a referee's seats are still alive, and the clock of a test not about time (no
Django)."""

from __future__ import annotations

import os
from pathlib import Path

from bots_sdk.referee.runner import TimeControl
from bots_sdk.sandbox import BACKENDS, Bubblewrap, SandboxUnavailable

#: A bot's clock in a test whose verdict is not about time: one no stall of a busy host runs
#: out (a memory bomb's allocations once cost 0.175 s of CPU at its pass; a numpy bot's
#: container once answered nothing for 6.5 s mid-hand), so the fault seen is the one the bot
#: commits, never a timeout. A test of the clock itself gives its bot a short clock and a
#: behaviour far past it (a loop or a sleep without end), so that its verdict is the same on
#: any machine.
UNHURRIED = TimeControl(move=5.0, bank=60.0)


def sandbox_problem(backend: str = "bubblewrap") -> str:
    """Why ``backend`` cannot sandbox bots on this host ('' when it can)."""
    try:
        BACKENDS[backend].check()
    except SandboxUnavailable as exc:
        return str(exc)
    return ""


def seat_uids(referee_pid: int | None = None) -> range:
    """The sandbox uids of every seat of a referee (this process by default)."""
    pid = os.getpid() if referee_pid is None else referee_pid
    base = Bubblewrap().base_uid + (pid % 4000) * 16
    return range(base, base + 16)


def processes_of(uids: range) -> list[int]:
    """Live processes (zombies, dead and waiting to be reaped, aside) running as ``uids``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if int(fields["Uid"].split()[0]) in uids and not fields["State"].strip()[0] == "Z":
                pids.append(int(entry.name))
    return pids


def backends_under_test() -> list[str]:
    """The backends a sandbox test module runs on: the local ones; or only Docker inside
    tests/bots_sdk/test_docker.py's private mount namespace (``BIDEL_DOCKER_SUITE=1``), where
    the engine is reached through ``DOCKER_HOST`` alone and shares no path with the referee."""
    if os.environ.get("BIDEL_DOCKER_SUITE") == "1":
        return ["docker"]
    return ["bubblewrap", "namespaces"]


def backend_problem(backend: str) -> str:
    return sandbox_problem(backend)


def left_behind(backend: str, referee_pid: int | None = None) -> list[str]:
    """What a referee's bots left running: processes of its seats' uids, or, for the Docker
    backend, containers of this referee that its warm pool does not hold."""
    if backend != "docker":
        return [str(pid) for pid in processes_of(seat_uids(referee_pid))]
    from bots_sdk.sandbox import containers

    pool = containers.pool()
    pool.settle()
    waiting = {cid for queue in pool.ready.values() for cid in queue}
    mine = containers.client().api.containers(
        all=True, filters={"label": f"bidel.owner={containers.owner()}"}
    )
    return [f"{c['Id'][:12]} ({c['Status']})" for c in mine if c["Id"] not in waiting]
