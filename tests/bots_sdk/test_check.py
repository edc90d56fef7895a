"""``bidel check BOT``: every kind of decision, each in a fresh (sandboxed where the machine
can) process, and a protocol mistake named with its message."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bots_sdk.check import GAME_SEEDS, SCENARIOS, position
from bots_sdk.protocol import PHASE_DECISIONS
from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from tests.support import PROJECT_DIR

BOTS = Path(__file__).parent / "check_bots"


def _check(bot: Path) -> subprocess.CompletedProcess[str]:
    try:
        default_launcher()
        flags: list[str] = []
    except SandboxUnavailable:
        flags = ["--unsafe-no-sandbox"]  # a development machine without a sandbox
    return subprocess.run(
        [sys.executable, "-m", "bots_sdk", "check", str(bot), *flags],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(PROJECT_DIR), "PATH": "/usr/bin:/bin"},
    )


def test_every_kind_of_decision_has_its_position() -> None:
    decisions = set()
    for scenario in SCENARIOS:
        state, _ = position(scenario)
        assert scenario.reached(state)
        decisions.add(PHASE_DECISIONS[state.phase.value])
    assert decisions == {"pass", "play", "trump", "moon"}


def test_a_good_bot_passes_every_scenario() -> None:
    done = _check(PROJECT_DIR / "bots_sdk" / "examples" / "ducker.py")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(("ok", "FAIL"))]
    assert len(lines) == len(SCENARIOS) + len(GAME_SEEDS)
    assert all(line.startswith("ok") for line in lines)
    assert "all 7 scenarios passed" in done.stdout
    for line, scenario in zip(lines, SCENARIOS, strict=False):  # seats counted from 1
        seat = position(scenario)[0].current
        assert f"  {scenario.rules}, seat {seat + 1}: " in line, line
    covered = re.search(r"all passed: 7 scenarios and 3 whole games \((\d+) hands, ", done.stdout)
    assert covered and int(covered[1]) >= 3 * 4, done.stdout  # (a game is 4 hands at the least)
    games = lines[len(SCENARIOS) :]
    for number, (line, seed) in enumerate(zip(games, GAME_SEEDS, strict=True)):
        assert f"game        standard, seed {seed}, seat {number + 1}: a whole game: " in line


def test_a_bot_that_raises_from_its_third_hand_on_is_caught_by_the_games(tmp_path: Path) -> None:
    """Every scenario is the first two hands' business: only whole games reach the third."""
    bot = tmp_path / "late.py"
    bot.write_text(
        "from bots_sdk import Bot, lowest\n\n\n"
        "class Late(Bot):\n"
        "    def pass_cards(self, view):\n"
        "        return list(view.hand[:3])\n\n"
        "    def play(self, view):\n"
        "        if view.hand_number >= 2:\n"
        "            raise ValueError('late')\n"
        "        return lowest(list(view.legal))\n"
    )
    done = _check(bot)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "all 7 scenarios passed; then 3 whole games" in done.stdout
    for seed in GAME_SEEDS:
        assert f"seed {seed}, seat {seed}: hand 3 (play): crash: ValueError: late" in done.stdout
    assert f'      |   File "{bot}", line 10, in play' in done.stdout, done.stdout
    assert "3 of 3 games faulted; covered 7 scenarios and 3 whole games (" in done.stdout


@pytest.mark.parametrize(
    ("bot", "named"),
    [
        ("wrong_id", "message 1 ('act', decision 'play'): protocol: answered message 99, not 1"),
        ("twice", "message 1 ('act', decision 'play'): answered, then wrote again unasked: "),
        ("bad_json", "message 1 ('act', decision 'play'): protocol: not a JSON object: "),
        ("wrong_seat", "message 1 ('act', decision 'play'): illegal: '3C' is not legal here"),
    ],
)
def test_a_protocol_mistake_is_found_and_its_message_named(bot: str, named: str) -> None:
    done = _check(BOTS / f"check_{bot}.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert named in done.stdout, done.stdout
    assert "scenarios failed: see docs/protocol.md" in done.stdout


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (
            "from bots_sdk import Bot\n\nclass A(Bot):\n    def play(self, view)\n",
            "cannot load: SyntaxError: expected ':' (bot.py, line 4)",
        ),
        (
            "import bots_sdk\n\nraise RuntimeError('no config file')\n",
            "cannot load: RuntimeError: no config file",
        ),
        ("x = 1\n", "must define exactly one subclass of bots_sdk.Bot (found none)"),
    ],
    ids=["syntax_error", "raises_at_import", "no_bot_class"],
)
def test_a_bot_that_cannot_load_is_named_once_and_fails(
    tmp_path: Path, code: str, words: str
) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(code)
    done = _check(bot)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert said.count(words) == 1 and said.count("cannot load") == 1, said
    assert said.startswith(f"bots_sdk: {bot}: cannot load: "), said
    assert "scenario" in said and "FAIL" not in said and "<frozen" not in said, said


def test_a_missing_bot_file_is_a_usage_error(tmp_path: Path) -> None:
    done = _check(tmp_path / "nothing.py")
    assert done.returncode == 2 and "no bot file" in done.stderr
