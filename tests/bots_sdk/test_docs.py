"""docs/bots.md, executed: its commands run as written (in a scratch folder), its bot plays
without a fault, and its simulation example, put in a bot, plays without one too."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support import PROJECT_DIR

GUIDE = (PROJECT_DIR / "docs" / "bots.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", GUIDE, flags=re.S)


def _blocks(language: str) -> list[str]:
    return [text for lang, text in BLOCKS if lang == language]


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(PROJECT_DIR), "PATH": "/usr/bin:/bin"}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def _commands() -> list[list[str]]:
    """Every `python -m bots_sdk …` line of the guide's shell blocks (comments dropped), with
    a long match cut to two hands."""
    lines = [
        line.split("#", 1)[0].strip()
        for block in _blocks("sh")
        for line in block.splitlines()
        if line.strip().startswith("python -m bots_sdk")
    ]
    commands = [shlex.split(re.sub(r"--hands \d+", "--hands 2", line)) for line in lines]
    return [[sys.executable, *argv[1:]] for argv in commands]


def test_the_guides_commands_run_as_written(tmp_path: Path) -> None:
    commands = _commands()
    assert len(commands) >= 3, commands  # new, a first play, the duplicate match
    for argv in commands:
        if argv[3] in ("play", "check") and "--unsafe-no-sandbox" not in argv:
            argv.append("--unsafe-no-sandbox")  # (the sandbox's own tests are elsewhere)
        done = _run(argv, tmp_path)
        assert done.returncode == 0, (argv, done.stderr[-2000:])


def test_the_guides_bot_and_its_simulation_play_without_a_fault(tmp_path: Path) -> None:
    python = _blocks("python")
    bot, simulation = python[0], python[1]
    (tmp_path / "my_bot.py").write_text(bot)
    (tmp_path / "sim_bot.py").write_text(
        "from bots_sdk import Bot\n\n\nclass SimBot(Bot):\n"
        "    def pass_cards(self, view):\n        return view.hand[:3]\n\n"
        + textwrap.indent(simulation, "    ")
    )
    for name in ("my_bot.py", "sim_bot.py"):
        done = _run(
            [
                sys.executable,
                "-m",
                "bots_sdk",
                "play",
                name,
                "low",
                "random",
                "heuristic",
                "--hands",
                "1",
                "--unsafe-no-sandbox",
            ],
            tmp_path,
        )
        assert done.returncode == 0, (name, done.stderr[-2000:])  # (a fault would exit 1)
        assert "pts/hand" in done.stdout
