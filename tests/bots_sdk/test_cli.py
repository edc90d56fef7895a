"""`python -m bots_sdk`: play (table and --json), replay, new — and the built-ins' strength
in the duplicate format: heuristic beats random and low, montecarlo beats heuristic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import PROJECT_DIR


def _sdk(*args: str, cwd: Path = PROJECT_DIR) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bots_sdk", *args], cwd=cwd, capture_output=True, text=True,
        timeout=600, env={"PYTHONPATH": str(PROJECT_DIR), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def _summary(*args: str) -> dict[str, Any]:
    completed = _sdk("play", *args, "--json", "--no-clock")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def _difference(summary: dict[str, Any], a: str, b: str) -> tuple[float, list[float]]:
    pair = next(p for p in summary["comparisons"] if {p["a"], p["b"]} == {a, b})
    sign = 1 if pair["a"] == a else -1
    low, high = pair["ci95"]
    return sign * pair["mean_difference"], sorted([sign * low, sign * high])


def test_json_summary_fields() -> None:
    summary = _summary("heuristic", "random", "low", "random", "--hands", "4", "--seed", "2")
    assert [b["name"] for b in summary["bots"]] == ["heuristic", "random", "low"]
    for bot in summary["bots"]:
        assert {"name", "games", "hands", "mean_points", "ci95", "wins", "faults"} <= set(bot)
        assert set(bot["faults"]) == {"timeout", "crash", "illegal", "protocol", "memory"}
    assert summary["bots"][1]["games"] == 2  # random holds two seats


@pytest.mark.parametrize(
    ("strong", "weak", "seed"), [("heuristic", "random", 21), ("heuristic", "low", 22)]
)
def test_heuristic_beats_random_and_low(strong: str, weak: str, seed: int) -> None:
    summary = _summary(
        strong, weak, weak, weak, "--hands", "40", "--duplicate", "--seed", str(seed), "--jobs", "2"
    )
    difference, (low, high) = _difference(summary, strong, weak)
    assert difference < 0 and high < 0, summary["comparisons"]  # fewer points, CI below zero


def test_montecarlo_beats_heuristic() -> None:
    summary = _summary(
        "montecarlo", "heuristic", "heuristic", "heuristic", "--hands", "50", "--duplicate",
        "--seed", "31", "--jobs", "2",
    )  # fmt: skip
    difference, (low, high) = _difference(summary, "montecarlo", "heuristic")
    assert difference < 0 and high < 0, summary["comparisons"]


def test_table_new_and_replay(tmp_path: Path) -> None:
    created = _sdk("new", "my_bot", cwd=tmp_path)
    assert created.returncode == 0 and (tmp_path / "my_bot.py").exists()
    assert _sdk("new", "my_bot", cwd=tmp_path).returncode == 2  # never overwrites
    record = tmp_path / "match.json"
    played = _sdk(
        "play", str(tmp_path / "my_bot.py"), "random", "low", "heuristic", "--hands", "2",
        "--unsafe-no-sandbox", "--record", str(record),
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert "pts/hand" in played.stdout and "my_bot.py" in played.stdout
    assert "2/2" not in played.stdout and "1/1 games" in played.stderr  # progress on stderr
    replay = _sdk("replay", str(record))
    assert replay.returncode == 0 and "trick 13" in replay.stdout and "Totals" in replay.stdout


def test_bad_arguments_are_clear() -> None:
    wrong = _sdk("play", "low", "low", "--hands", "1")
    assert wrong.returncode == 2 and "these rules seat 4 bots; 2 given" in wrong.stderr
    bad_rules = _sdk("play", "low", "low", "low", "low", "--rules", "nonsense")
    assert bad_rules.returncode == 2 and "unknown preset 'nonsense'" in bad_rules.stderr
