"""`bidel replay`: each hand's deal and passes with the seats named as the record names them
(``play --record``'s form here; the platform's two forms in tests/arena/test_replay_download.py),
and a reader that stops reading (`bidel replay FILE | head`) ends it quietly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support import PROJECT_DIR

BIDEL = Path(sys.executable).parent / "bidel"  # (installed with the project: make install)
ENV = {"PYTHONPATH": str(PROJECT_DIR), "PATH": "/usr/bin:/bin"}


def _bidel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIDEL), *args], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=300, env=ENV
    )


def _played(record: Path, *bots: str, hands: int) -> dict[str, Any]:
    played = _bidel("play", *bots, "--hands", str(hands), "--record", str(record))
    assert played.returncode == 0, played.stderr
    return dict(json.loads(record.read_text()))


def _hands(shown: str) -> list[list[str]]:
    """The replay's lines, hand by hand (each list starts at its "Hand N" line)."""
    hands: list[list[str]] = []
    for line in shown.splitlines():
        if line.startswith("Hand "):
            hands.append([])
        if hands:
            hands[-1].append(line)
    return hands


def test_replay_shows_each_seats_deal_and_what_it_passed_to_whom(tmp_path: Path) -> None:
    record = tmp_path / "match.json"
    game = _played(record, "heuristic", "random", "low", "random", hands=4)["games"][0]
    shown = _bidel("replay", str(record))
    assert shown.returncode == 0, shown.stderr
    labels = ["1:heuristic", "2:random", "3:low", "4:random"]
    hands = _hands(shown.stdout)
    assert [lines[0] for lines in hands] == ["Hand 1", "Hand 2", "Hand 3", "Hand 4"]
    # the standard cycle: left (the next seat), right (the previous), across, hold
    assert [lines[5] for lines in hands] == [
        "  passing left",
        "  passing right",
        "  passing across",
        "  no passing (hold)",
    ]
    for number, (lines, entry) in enumerate(zip(hands, game["hands"], strict=True)):
        dealt = [line.split() for line in lines if line.startswith("  dealt ")]
        assert [words[1] for words in dealt] == labels
        assert [sorted(words[2:]) for words in dealt] == [sorted(d) for d in entry["deal"]]
        passed = [line.split() for line in lines if line.startswith("  passed ")]
        if number == 3:
            assert passed == [] and "passes" not in entry
            continue
        offset = (1, 3, 2)[number]
        assert [words[1] for words in passed] == labels
        assert [sorted(words[2:5]) for words in passed] == [sorted(p) for p in entry["passes"]]
        assert [words[5:] for words in passed] == [
            ["->", labels[(seat + offset) % 4]] for seat in range(4)
        ]


def test_replay_names_seats_from_the_match_bots_when_the_games_seats_are_gone(
    tmp_path: Path,
) -> None:
    record = tmp_path / "match.json"
    data = _played(record, "low", "random", "heuristic", "low", hands=1)
    data["games"][0]["rotation"] = 1  # as the second game of a --duplicate match seats them
    for game in data["games"]:
        del game["seats"]
    record.write_text(json.dumps(data))
    shown = _bidel("replay", str(record))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == "Seats: 1:random  2:heuristic  3:low  4:low"
    del data["bots"]
    record.write_text(json.dumps(data))
    unnamed = _bidel("replay", str(record)).stdout.splitlines()
    assert unnamed[0] == "Seats: seat 1  seat 2  seat 3  seat 4"
    assert unnamed[2].startswith("  dealt  seat 1  ")
    assert unnamed[10].startswith("  passed seat 4  ")


def test_replay_into_a_pipe_closed_early_ends_quietly(tmp_path: Path) -> None:
    record = tmp_path / "long.json"
    _played(record, "low", "random", "low", "random", hands=200)
    # ~270 kB of replay: far more than the pipe and both ends' buffers hold, so the replay is
    # still writing (blocked on the full pipe) when its reader leaves, as under `| head`.
    with subprocess.Popen(
        [str(BIDEL), "replay", str(record)],
        cwd=PROJECT_DIR,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as replaying:
        assert replaying.stdout is not None and replaying.stderr is not None
        head = [replaying.stdout.readline() for _ in range(3)]
        replaying.stdout.close()
        stderr = replaying.stderr.read()
        status = replaying.wait(timeout=60)
    assert head[0].startswith("Seats: 1:low  2:random") and head[1].startswith("Hand 1")
    for loud in ("Traceback", "BrokenPipeError", "Exception ignored", "Broken pipe"):
        assert loud not in stderr, stderr
    assert status == 141  # as a command SIGPIPE ended: 128 + 13
