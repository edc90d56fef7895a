"""Hostile bots in C (built from tests/hostile/c/hostile.c, one -D flag each) against the
sandbox's walls: the same process, memory and network limits as a Python bot's, and the
match completes with a valid record and nothing left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots_sdk.builds import build
from bots_sdk.referee.runner import TimeControl, run_match
from bots_sdk.sandbox import Limits
from engine.record import verify
from tests.sandboxes import UNHURRIED, left_behind, sandbox_problem

HOSTILE_C = Path(__file__).parent / "c" / "hostile.c"

pytestmark = pytest.mark.skipif(
    bool(sandbox_problem("bubblewrap")),
    reason=f"no bubblewrap sandbox here: {sandbox_problem('bubblewrap')}",
)


@pytest.fixture(autouse=True)
def bubblewrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIDEL_BUILD_CACHE", str(tmp_path / "builds"))
    monkeypatch.setenv("BIDEL_SANDBOX", "bubblewrap")  # (the backend that runs compiled bots)


LIMITS = Limits(cpu_seconds=5, memory_mb=256)


def _hostile(tmp_path: Path, mode: str) -> Path:
    if build.toolchain("cpp").missing:
        pytest.skip("g++ is not installed here")
    folder = tmp_path / mode.lower()
    folder.mkdir()
    (folder / "hostile.c").write_text(HOSTILE_C.read_text())
    (folder / "bidel.toml").write_text(
        f'language = "cpp"\nbuild = "g++ -x c -O1 -D{mode} -o bot hostile.c"\n'
    )
    return folder


def _hostile_match(
    bot: Path, clock: TimeControl = UNHURRIED
) -> tuple[list[dict[str, object]], str]:
    result = run_match(
        "standard",
        7,
        [str(bot), "low", "random", "heuristic"],
        hands=1,
        time_control=clock,
        limits=LIMITS,
    )
    game = result.games[0]
    assert verify(game.record)["valid"], "the match must complete with a valid record"
    assert left_behind("bubblewrap") == [], "a process of the bot survived the match"
    return game.seats[0].faults, game.seats[0].stderr


def test_a_c_fork_bomb_hits_the_process_limit_and_leaves_nothing(tmp_path: Path) -> None:
    faults, stderr = _hostile_match(_hostile(tmp_path, "FORK_BOMB"))
    assert "FORK_REFUSED after" in stderr, stderr
    assert int(stderr.split("FORK_REFUSED after ")[1].split(":")[0]) < LIMITS.processes
    assert faults == []


def test_a_c_bot_allocating_without_bound_is_held_to_its_memory(tmp_path: Path) -> None:
    faults, stderr = _hostile_match(_hostile(tmp_path, "MEMORY_BOMB"))
    if "MEMORY_REFUSED after" in stderr:
        assert int(stderr.split("MEMORY_REFUSED after ")[1].split()[0]) < LIMITS.memory_mb
    else:  # killed by the kernel at the seat's cgroup limit: a memory fault
        assert [f["class"] for f in faults][:1] == ["memory"], (faults, stderr)


def test_a_c_bot_has_no_network_and_none_of_the_hosts_files(tmp_path: Path) -> None:
    faults, stderr = _hostile_match(_hostile(tmp_path, "NETWORK"))
    assert "redis: DENIED" in stderr and "interfaces: lo\n" in stderr, stderr
    assert "passwd: DENIED" in stderr
    assert faults == []


def test_a_c_bot_burning_cpu_is_stopped_by_its_clock(tmp_path: Path) -> None:
    # (a short clock: its loop without end is past it on any machine)
    faults, _ = _hostile_match(_hostile(tmp_path, "CPU_BURN"), TimeControl(0.5, 1.0))
    assert faults and faults[0]["class"] == "timeout", faults
