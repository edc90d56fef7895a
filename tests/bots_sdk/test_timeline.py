"""A seat's timeline (bots_sdk.referee.runner.decision_entry): one entry per decision, with the time
charged, the bank left and what the bot wrote to stderr while deciding — the same fields in a
local ``bidel play --record`` as in a match the platform stores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sandboxes import sandbox_problem
from tests.support import PROJECT_DIR, child_env

#: Writes to stderr in some decisions only: those where it holds an odd number of cards.
BOT = """
import sys

from bots_sdk import Bot, lowest


class Odd(Bot):
    def pass_cards(self, view):
        print("passing", file=sys.stderr)
        return list(view.hand[-3:])

    def play(self, view):
        if len(view.hand) % 2:
            print(f"holding {len(view.hand)} cards", file=sys.stderr)
        return lowest(list(view.legal))
"""


def test_a_local_record_holds_each_decisions_clock_and_lines(tmp_path: Path) -> None:
    problem = sandbox_problem()
    if problem:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")
    (tmp_path / "odd.py").write_text(BOT)
    done = subprocess.run(
        [sys.executable, "-m", "bots_sdk", "play", "odd.py", "low", "random", "low"]
        + ["--hands", "2", "--record", "r.json", "--move-time", "2", "--time-bank", "20"],
        cwd=tmp_path,
        env=child_env({"PYTHONPATH": str(PROJECT_DIR)}),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    game = json.loads((tmp_path / "r.json").read_text())["games"][0]
    steps = game["seats"][0]["decisions"]
    assert [(s["hand"], s["decision"]) for s in steps] == [
        (hand, decision) for hand in (0, 1) for decision in ["pass"] + ["play"] * 13
    ]
    bank = 20_000.0  # (ms: the clock of the command line, --move-time 2, --time-bank 20)
    for step in steps:
        # What a decision was charged, and the bank it left: less what went past the move's
        # 2 s (none, unless a busy machine stalled the bot; then the bank paid for it).
        assert step["ms"] >= 0 and step["offered_ms"] == pytest.approx(2000 + bank), step
        bank = max(0.0, bank - max(0.0, step["ms"] - 2000))
        assert step["bank_ms"] == pytest.approx(bank, abs=0.01), step
        if step["decision"] == "pass":
            assert step["log"] == "passing\n" and step["trick"] is None
            continue
        held = 13 - step["trick"]
        assert step.get("log", "") == (f"holding {held} cards\n" if held % 2 else "")
    # the built-ins' timelines: every decision, nothing written
    assert all("log" not in s for s in game["seats"][1]["decisions"])
    assert len(game["seats"][1]["decisions"]) == 28
