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
        [sys.executable, "-m", "bots_sdk", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(PROJECT_DIR), "PATH": "/usr/bin:/bin"},
    )


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


def test_a_hand_count_above_one_games_cap_plays_every_hand() -> None:
    """One game stops at the engine's 200 hands: 1,000 hands are five games, and said so."""
    played = _sdk("play", "heuristic", "random", "low", "low", "--hands", "1000", "--no-clock")
    assert played.returncode == 0, played.stderr
    assert "1000 hands, played as 5 games of at most 200 hands" in played.stderr
    assert played.stdout.startswith("5 games, 1000 deals; per bot: ")
    rows = {line.split()[0]: line.split() for line in played.stdout.splitlines()[2:5]}
    assert [rows[bot][1:3] for bot in ("heuristic", "random", "low")] == [
        ["5", "1000"],
        ["5", "1000"],
        ["10", "2000"],  # (two seats: two games and two hands of every one)
    ]
    summary = _summary("heuristic", "low", "low", "low", "--hands", "450", "--seed", "3")
    assert summary["games"] == 3 and summary["deals"] == 450
    assert [b["hands"] for b in summary["bots"]] == [450, 1350]


def test_every_comparison_says_in_words_whether_it_is_conclusive() -> None:
    few = _summary("heuristic", "low", "low", "low", "--hands", "3", "--duplicate", "--seed", "4")
    (pair,) = few["comparisons"]
    assert few["games"] == 4 and few["seatings"] == 4 and pair["deals"] == 3
    assert not pair["conclusive"] and pair["ci95"][0] <= 0 <= pair["ci95"][1]
    assert pair["reading"].startswith(
        "inconclusive: not enough deals to tell heuristic from low (over 3 deals): try --hands "
    )
    many = _summary("heuristic", "random", "random", "random", "--hands", "100", "--seed", "5")
    (pair,) = many["comparisons"]
    assert pair["conclusive"] and pair["ci95"][1] < 0  # heuristic takes fewer points
    half = (pair["ci95"][1] - pair["ci95"][0]) / 2
    assert pair["reading"] == (
        f"heuristic is better by {-pair['mean_difference']:.2f} ± {half:.2f} points a hand "
        "(conclusive at 95%, over 100 deals)"
    )
    table = _sdk("play", "heuristic", "low", "low", "low", "--hands", "3", "--duplicate")
    assert table.stdout.startswith(
        "4 games, 3 deals, each deal played 4 times with the seats rotated (duplicate)"
    ), table.stdout
    assert ": inconclusive: not enough deals to tell heuristic from low" in table.stdout


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
        "montecarlo",
        "heuristic",
        "heuristic",
        "heuristic",
        "--hands",
        "50",
        "--duplicate",
        "--seed",
        "31",
        "--jobs",
        "2",
    )
    difference, (low, high) = _difference(summary, "montecarlo", "heuristic")
    assert difference < 0 and high < 0, summary["comparisons"]


def test_table_new_and_replay(tmp_path: Path) -> None:
    created = _sdk("new", "my_bot", cwd=tmp_path)
    assert created.returncode == 0 and (tmp_path / "my_bot.py").exists()
    assert _sdk("new", "my_bot", cwd=tmp_path).returncode == 2  # never overwrites
    record = tmp_path / "match.json"
    played = _sdk(
        "play",
        str(tmp_path / "my_bot.py"),
        "random",
        "low",
        "heuristic",
        "--hands",
        "2",
        "--unsafe-no-sandbox",
        "--record",
        str(record),
    )
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


# --- an author's mistakes: refused before play with one clear line, exit 2 ------------------

BOTS = {
    "syntax.py": "from bots_sdk import Bot\n\nclass A(Bot):\n    def play(self, view)\n",
    "nobot.py": "x = 1\n",
    "two.py": "from bots_sdk import Bot\n\nclass A(Bot):\n    pass\n\nclass B(Bot):\n    pass\n",
    "noplay.py": "from bots_sdk import Bot\n\nclass A(Bot):\n    def pass_cards(self, v):\n"
    "        return v.hand[:3]\n",
    "nopass.py": "from bots_sdk import Bot, lowest\n\nclass A(Bot):\n    def play(self, v):\n"
    "        return lowest(v.legal)\n",
    "raises.py": "from bots_sdk import Bot, lowest\n\nclass A(Bot):\n"
    "    def pass_cards(self, v):\n        return v.hand[:3]\n\n"
    "    def play(self, v):\n        if len(v.hand) < 10:\n"
    "            raise ValueError('my own bug at ' + str(len(v.hand)))\n"
    "        return lowest(v.legal)\n",
}


@pytest.mark.parametrize(
    ("bot", "words"),
    [
        ("nosuch.py", "nosuch.py: no such file, and not a built-in (random, low,"),
        ("syntax.py", "syntax.py: cannot load: SyntaxError: expected ':' (syntax.py, line 4)"),
        ("nobot.py", "nobot.py: must define exactly one subclass of bots_sdk.Bot (found none)"),
        ("two.py", "two.py: must define exactly one subclass of bots_sdk.Bot (found A, B)"),
        ("noplay.py", "noplay.py: cannot load: noplay.py: A does not define play(self, view)"),
        ("nopass.py", "A does not define pass_cards(self, view), and these rules pass cards"),
    ],
)
def test_a_bot_that_cannot_load_is_refused_before_play(
    tmp_path: Path, bot: str, words: str
) -> None:
    for name, text in BOTS.items():
        (tmp_path / name).write_text(text)
    done = _sdk(
        "play", bot, "low", "low", "low", "--hands", "1", "--unsafe-no-sandbox", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"bots_sdk: {bot}: ") and words in done.stderr, done.stderr
    assert "games" not in done.stderr and done.stdout == ""  # nothing was played
    assert "/bot/" not in done.stderr and "bots_sdk/host.py" not in done.stderr


def test_a_syntax_error_shows_the_authors_line(tmp_path: Path) -> None:
    (tmp_path / "syntax.py").write_text(BOTS["syntax.py"])
    done = _sdk("play", "syntax.py", "low", "low", "low", "--unsafe-no-sandbox", cwd=tmp_path)
    assert "  |     def play(self, view)" in done.stderr and "<frozen" not in done.stderr


def test_a_bot_that_raises_in_play_shows_its_traceback_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "raises.py").write_text(BOTS["raises.py"])
    argv = ("play", "raises.py", "low", "low", "low", "--hands", "1", "--unsafe-no-sandbox")
    done = _sdk(*argv, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert (
        "raises.py: 1 fault(s); the first, crash (hand 1, play): ValueError: my own bug at 9"
        in done.stderr
    )
    assert '  |   File "' in done.stderr and 'raises.py", line 9, in play' in done.stderr
    assert "  | ValueError: my own bug at 9" in done.stderr and "host.py" not in done.stderr
    assert "pts/hand" in done.stdout  # the match was played and summarised
    assert _sdk(*argv, "--allow-faults", cwd=tmp_path).returncode == 0


def test_new_takes_a_name_or_a_path_and_refuses_bad_names(tmp_path: Path) -> None:
    assert _sdk("new", "my_bot2.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "my_bot2.py").exists() and not (tmp_path / "my_bot2.py.py").exists()
    assert "class MyBot2(Bot)" in (tmp_path / "my_bot2.py").read_text()
    (tmp_path / "bots").mkdir()
    assert _sdk("new", "bots/ducker", cwd=tmp_path).returncode == 0
    assert (tmp_path / "bots" / "ducker.py").exists()
    bad = _sdk("new", "bad name", cwd=tmp_path)
    assert bad.returncode == 2 and "must be a Python identifier" in bad.stderr
    assert not list(tmp_path.glob("bad*"))
    assert _sdk("new", "nowhere/x", cwd=tmp_path).returncode == 2


def test_replay_names_the_seats_counts_from_1_and_refuses_bad_input(tmp_path: Path) -> None:
    record = tmp_path / "match.json"
    played = _sdk(
        "play", "heuristic", "random", "low", "random", "--hands", "2", "--record", str(record)
    )
    assert played.returncode == 0, played.stderr
    shown = _sdk("replay", str(record))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "Seats: 1:heuristic  2:random  3:low  4:random"
    assert lines[1] == "Hand 1" and "Hand 2" in lines and "Hand 0" not in lines
    assert "trick  1: " in shown.stdout and "trick 13: " in shown.stdout
    for argv, words in (
        ((str(record), "--game", "99"), "--game 99: "),
        ((str(tmp_path / "nosuch.json"),), "cannot read"),
        ((str(tmp_path / "my_bot.py"),), "cannot read"),
    ):
        bad = _sdk("replay", *argv)
        assert bad.returncode == 2 and words in bad.stderr and "Traceback" not in bad.stderr
    (tmp_path / "junk.json").write_text("{not json")
    junk = _sdk("replay", str(tmp_path / "junk.json"))
    assert junk.returncode == 2 and "is not a JSON record" in junk.stderr


def test_engine_verify_accepts_what_play_record_writes(tmp_path: Path) -> None:
    record = tmp_path / "match.json"
    assert (
        _sdk(
            "play",
            "low",
            "random",
            "low",
            "random",
            "--hands",
            "2",
            "--duplicate",
            "--record",
            str(record),
        ).returncode
        == 0
    )
    verified = subprocess.run(
        [sys.executable, "-m", "engine", "verify", str(record)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
    )
    result = json.loads(verified.stdout)
    assert verified.returncode == 0 and result["valid"] is True, result
    assert len(result["games"]) == 4 and all(game["valid"] for game in result["games"])
    data = json.loads(record.read_text())
    data["games"][2]["hands"][0]["plays"][0] = "QS"  # one game tampered with
    record.write_text(json.dumps(data))
    tampered = subprocess.run(
        [sys.executable, "-m", "engine", "verify", str(record)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
    )
    assert tampered.returncode == 1 and json.loads(tampered.stdout)["error"].startswith("game 3:")


def test_the_bidel_command_has_a_version_verify_and_lists_the_built_ins(tmp_path: Path) -> None:
    bidel = Path(sys.executable).parent / "bidel"  # (installed with the project: make install)
    assert bidel.exists(), "the project's console script `bidel` is not installed"
    version = subprocess.run([str(bidel), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("bidel SDK ")
    helped = subprocess.run([str(bidel), "--help"], capture_output=True, text=True).stdout
    assert "random, low, heuristic, montecarlo" in " ".join(helped.split())
    record = tmp_path / "m.json"
    argv = [str(bidel), "play", "low", "random", "low", "heuristic", "--hands", "1", "--record"]
    played = subprocess.run([*argv, str(record)], capture_output=True, text=True)
    assert played.returncode == 0, played.stderr
    checked = subprocess.run([str(bidel), "verify", str(record)], capture_output=True, text=True)
    assert checked.returncode == 0 and json.loads(checked.stdout)["valid"] is True


def test_analyse_a_record_file_marks_the_seats_plays_as_the_library_does(tmp_path: Path) -> None:
    from bots_sdk.analysis import analyse_game

    record = tmp_path / "match.json"
    played = _sdk(
        "play", "heuristic", "random", "low", "heuristic", "--hands", "1", "--record", str(record)
    )
    assert played.returncode == 0, played.stderr
    said = _sdk("analyse", str(record), "--seat", "2", "--samples", "10", "--json")
    assert said.returncode == 0, said.stderr
    document = json.loads(said.stdout)
    expected = analyse_game(json.loads(record.read_text()), seat=1, samples=10).to_dict()
    assert document == json.loads(json.dumps(expected))  # the same numbers
    text = _sdk("analyse", str(record), "--seat", "2", "--samples", "10")
    assert text.returncode == 0 and f"seat 2: {len(document['decisions'])} decisions" in text.stdout
    assert text.stdout.splitlines()[-1].startswith("game: ")
    for argv, words in (
        ((str(record),), "which seat?"),
        ((str(record), "--seat", "9"), "no seat 9"),
        ((str(tmp_path / "nosuch.json"), "--seat", "1"), "not a match id"),
        ((str(record), "--seat", "1", "--samples", "1"), "at least 2"),
    ):
        bad = _sdk("analyse", *argv)
        assert bad.returncode == 2 and words in bad.stderr, bad.stderr
        assert "Traceback" not in bad.stderr
