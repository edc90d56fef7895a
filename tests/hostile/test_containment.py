"""Hostile bots against the sandbox's budgets and walls: one clock and one memory per bot
(children, memfd and tmpfs included), no kernel or file state between seats or matches,
nothing left when the referee is killed. Each runs on every local backend this host has."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bots_sdk.referee.runner import GameResult, TimeControl, run_match
from bots_sdk.sandbox import Limits, cgroups
from engine.record import verify
from tests.sandboxes import UNHURRIED, processes_of, sandbox_problem, seat_uids
from tests.support import DEADLINE, wait_until

BOTS = Path(__file__).parent / "bots"
PROJECT = Path(__file__).resolve().parents[2]
OLD = PROJECT / "tests" / "bots_sdk" / "hostile"
LIMITS = Limits(cpu_seconds=5, memory_mb=256)


@pytest.fixture(params=["bubblewrap", "namespaces"], autouse=True)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    problem = sandbox_problem(request.param)
    if problem:
        pytest.skip(f"no {request.param} sandbox here: {problem}")
    monkeypatch.setenv("BIDEL_SANDBOX", request.param)
    return str(request.param)


requires_cgroups = pytest.mark.skipif(
    not cgroups.support().ok,
    reason=f"per-bot budgets need cgroups, which this host lacks: {cgroups.support().detail}",
)


def _match(
    bots: list[str], *, hands: int = 1, clock: TimeControl = UNHURRIED, seed: int = 7
) -> GameResult:
    result = run_match(
        "standard",
        seed,
        bots,
        hands=hands,
        time_control=clock,
        limits=LIMITS,
    )
    game = result.games[0]
    assert verify(game.record)["valid"], "the match must complete with a valid record"
    assert processes_of(seat_uids(os.getpid())) == [], "a process of a bot survived the match"
    return game


def _bot(name: str) -> str:
    return str(BOTS / f"{name}.py")


def _report(game: GameResult, seat: int, word: str) -> list[str]:
    return [line for line in game.seats[seat].stderr.splitlines() if line.startswith(word)]


def test_children_computing_while_the_bot_waits_are_charged_to_its_clock() -> None:
    # A clock small beside the wall clock's guard (its limit + 0.5 s): by the time the guard
    # runs out, children that got a tenth of a core between them have used more than the
    # limit, so the fault names their CPU however loaded the host is (at 0.1 s and a 0.2 s
    # bank they needed three fifths of a core, and on a busy host once got less).
    game = _match([_bot("children_cpu"), "low", "random", "heuristic"], clock=TimeControl(0.05, 0))
    faults = game.seats[0].faults
    # On a loaded host a decision may first run out of wall time before its children have
    # had the CPU; the clock then charges them at the next: some timeout counts them.
    timeouts = [f for f in faults if f["class"] == "timeout" and "all its processes" in f["detail"]]
    assert timeouts, faults
    detail = timeouts[0]["detail"]  # "used X s of CPU (all its processes), allowed Y s"
    used = float(detail.split("used ")[1].split(" s")[0])
    allowed = float(detail.split("allowed ")[1].split(" s")[0])
    assert used > allowed  # while the bot process itself only slept
    assert game.seats[0].replaced


@pytest.fixture
def without_cgroups(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The referee as on a host with no cgroups: rlimits per process, and the clock summed
    over the bot's PID namespace."""
    monkeypatch.setenv("BIDEL_CGROUPS", "off")
    cgroups.support.cache_clear()
    yield
    monkeypatch.delenv("BIDEL_CGROUPS")
    cgroups.support.cache_clear()


def test_without_cgroups_the_clock_still_counts_every_process(without_cgroups: None) -> None:
    assert not cgroups.support().ok
    # (the clock small beside the wall guard, as above: the children's CPU is named however
    # loaded the host)
    game = _match([_bot("children_cpu"), "low", "random", "heuristic"], clock=TimeControl(0.05, 0))
    timeouts = [f for f in game.seats[0].faults if f["class"] == "timeout"]
    assert any("all its processes" in f["detail"] for f in timeouts), game.seats[0].faults


def test_sleeping_past_its_time_is_a_timeout_though_it_uses_no_cpu() -> None:
    # It sleeps 0.35 s past its time at every decision: charged its wall time less the
    # referee's 0.2 s tolerance, it is over on any machine; a busy one may only make the
    # referee stop waiting first (its guard, 0.5 s past the time): a timeout too.
    game = _match([_bot("near_deadline"), "low", "random", "heuristic"], clock=TimeControl(0.5, 1))
    faults = game.seats[0].faults
    assert faults and all(f["class"] == "timeout" for f in faults), faults
    assert "wall time" in faults[0]["detail"] or "no answer" in faults[0]["detail"]
    assert game.seats[0].replaced  # three faults: the fallback plays on


@requires_cgroups
def test_children_cannot_hold_more_memory_together_than_the_bot_may() -> None:
    game = _match([_bot("memory_children"), "low", "random", "heuristic"])
    held = _report(game, 0, "HELD")
    assert held, game.seats[0].stderr
    count = int(held[0].split()[1])
    assert count * 100 < LIMITS.memory_mb, f"{count} children held 100 MB each"


@requires_cgroups
def test_memory_in_anonymous_files_is_counted() -> None:
    game = _match([_bot("memfd_hoard"), "low", "random", "heuristic"])
    reached = [int(line.split()[1]) for line in _report(game, 0, "MEMFD") if "STOPPED" not in line]
    assert reached, game.seats[0].stderr
    assert max(reached) * 8 <= LIMITS.memory_mb, f"held {max(reached) * 8} MB in memfd files"


def test_tmp_caps_files_and_bytes() -> None:
    game = _match([_bot("tmp_filler"), "low", "random", "heuristic"])
    files = _report(game, 0, "FILES")
    size = _report(game, 0, "BYTES_MB")
    assert files and size, game.seats[0].stderr
    assert int(files[0].split()[1]) <= LIMITS.tmp_files
    assert int(size[0].split()[1]) <= LIMITS.tmp_mb


def test_no_kernel_or_file_state_passes_between_seats_or_matches() -> None:
    first = _match([_bot("stash"), _bot("stash"), "low", "random"])
    second = _match([_bot("stash"), "low", _bot("stash"), "random"], seed=8)
    for game, seats in ((first, (0, 1)), (second, (0, 2))):
        for seat in seats:
            stderr = game.seats[seat].stderr
            assert "FOUND" not in stderr, stderr
            assert "DENIED keyring" in stderr or "STASHED keyring" not in stderr, stderr
    assert "STASHED keyring" not in first.seats[0].stderr  # the keyring calls are refused


def test_killing_the_referee_leaves_no_process_of_its_bots(backend: str) -> None:
    referee = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bots_sdk",
            "play",
            str(OLD / "daemon.py"),
            str(OLD / "sleeper.py"),
            "low",
            "low",
            "--no-clock",
            "--hands",
            "1",
            "--sandbox",
            backend,
        ],
        cwd=PROJECT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
        start_new_session=False,
    )
    uids = seat_uids(referee.pid)
    try:
        # seat 0 leaves a daemon in a session of its own at its pass; seat 1 then sleeps at
        # its first play, with no clock: the referee waits on it when it is killed
        wait_until(lambda: len(processes_of(uids)) >= 3, "the bots to start", interval=0.05)
    finally:
        referee.send_signal(signal.SIGKILL)
        referee.wait(timeout=DEADLINE)
    try:
        wait_until(lambda: not processes_of(uids), "the bots to go with their referee")
    except AssertionError as failure:
        raise AssertionError(f"{failure}; still running: {processes_of(uids)}") from None
