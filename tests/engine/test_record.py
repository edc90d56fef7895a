"""The game record and `python -m engine verify`: valid records, every kind of bad one."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.record import replay, verify
from engine.rules import RuleSet
from engine.simulate import random_game
from engine.state import GameState
from tests.support import PROJECT_DIR


def _game(preset: str = "standard", seed: int = 1, **overrides: Any) -> dict[str, Any]:
    rules = RuleSet.from_preset(preset, **overrides)
    return random_game(rules, seed, random.Random(seed)).to_record()


def _cli(args: list[str], stdin: str | None = None) -> tuple[int, dict[str, Any]]:
    completed = subprocess.run(
        [sys.executable, "-m", "engine", *args],
        cwd=PROJECT_DIR,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.stderr == ""
    lines = completed.stdout.strip().splitlines()
    assert len(lines) == 1, completed.stdout
    return completed.returncode, json.loads(lines[0])


def test_a_whole_game_verifies_with_per_hand_results(tmp_path: Path) -> None:
    record = _game()
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    code, result = _cli(["verify", str(path)])
    assert code == 0
    state = replay(record)
    assert result == {
        "valid": True,
        "hands": result["hands"],
        "totals": state.totals,
        "game_over": True,
        "winners": state.winners,
        "ended_at_hand_cap": False,
    }
    assert [h["scores"] for h in result["hands"]] == [list(h.scores) for h in state.history]
    assert [h["points"] for h in result["hands"]] == [list(h.points) for h in state.history]
    running = [0, 0, 0, 0]
    for hand in result["hands"]:
        running = [a + b for a, b in zip(running, hand["scores"])]
    assert running == result["totals"]


def test_stdin_and_the_seed_alone() -> None:
    record = _game()
    for hand in record["hands"]:
        del hand["deal"]  # dealt again from the seed
    code, result = _cli(["verify", "-"], json.dumps(record))
    assert code == 0 and result["valid"] and result["game_over"]


def test_records_with_rules_objects_and_every_preset_round_trip() -> None:
    for preset in ("persian", "kitty", "hokm_40", "moon_choice", "cancellation", "omnibus"):
        record = _game(preset, seed=3, target=40)
        assert record["rules"] == {"preset": preset, "target": 40}
        assert verify(record)["valid"], preset
        assert replay(record).to_record() == record


def _lowest_game(spec: Any, seed: int) -> GameState:
    """A whole game where every seat takes its first legal action (trump C, moon add)."""
    state = GameState(RuleSet.from_spec(spec), seed=seed)
    while not state.is_game_over:
        if state.current_seat is None:
            state.next_hand()
        else:
            state.apply(state.legal_actions()[0])
    return state


@pytest.mark.parametrize(
    "spec",
    [
        "persian",
        "hokm_40",
        {"preset": "persian", "players": 3},
        {"preset": "hokm_40", "direction": "clockwise"},
        {"preset": "standard", "direction": "counterclockwise"},
    ],
)
def test_a_game_records_its_direction_and_verifies(spec: Any, tmp_path: Path) -> None:
    state = _lowest_game(spec, seed=6)
    record = state.to_record()
    assert record["rules"] == spec  # a preset's own direction is not repeated; an override is
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    code, result = _cli(["verify", str(path)])
    assert code == 0 and result["valid"] and result["game_over"]
    assert result["totals"] == state.totals and result["winners"] == state.winners
    assert replay(json.loads(path.read_text())).to_record() == record
    # Read the other way round, the passes reach other seats: the same record is another game.
    rules = RuleSet.from_spec(spec)
    other = "clockwise" if rules.direction == "counterclockwise" else "counterclockwise"
    flipped = {**record, "rules": rules.with_overrides(direction=other).to_spec()}
    again = verify(flipped)
    assert not again["valid"] or again["totals"] != state.totals


def test_a_missing_pass_is_named_by_where_it_goes() -> None:
    for spec, words in [
        ("persian", "hand 0 passes right (to the next seat)"),
        (
            {"preset": "persian", "direction": "clockwise"},
            "hand 0 passes right (to the previous seat)",
        ),
        ("standard", "hand 0 passes left (to the next seat)"),
    ]:
        result = _invalid({"rules": spec, "seed": 1, "hands": [{"plays": ["2C"]}]})
        assert result["stage"] == "pass" and result["error"].startswith(words), result["error"]


def _invalid(record: Any) -> dict[str, Any]:
    result = verify(record)
    assert result["valid"] is False
    assert set(result) == {"valid", "hand", "stage", "index", "seat", "error"}
    return result


def test_an_illegal_play_is_named_with_hand_index_and_seat() -> None:
    record = _game(pass_cycle=["hold"])
    hand = record["hands"][1]
    state = GameState(RuleSet.from_spec(record["rules"]), deal=hand["deal"])
    for card in hand["plays"][:5]:
        state.apply(card)
    seat = state.current_seat
    wrong = next(c for c in state.hand_of((seat + 1) % 4))  # a card seat doesn't hold
    hand["plays"][5] = wrong
    result = _invalid(record)
    assert (result["hand"], result["stage"], result["index"], result["seat"]) == (
        1,
        "play",
        5,
        seat,
    )
    assert result["error"] == f"seat {seat} cannot play {wrong}: not in hand"


def test_playing_on_after_the_game_is_over_is_invalid() -> None:
    record = _game()
    extra = copy.deepcopy(record["hands"][-1])
    record["hands"].append(extra)
    result = _invalid(record)
    assert result["stage"] == "record" and result["hand"] == len(record["hands"]) - 1
    assert "the game was over" in result["error"]


def test_too_many_plays_in_a_hand() -> None:
    record = _game()
    record["hands"][0]["plays"].append("2C")
    result = _invalid(record)
    assert (result["hand"], result["stage"], result["index"]) == (0, "play", 52)


@pytest.mark.parametrize(
    ("mutate", "stage", "message"),
    [
        (lambda r: r["hands"][0]["plays"].__setitem__(3, "ZZ"), "play", "'ZZ' is not a card"),
        (lambda r: r["hands"][0]["deal"][2].__setitem__(0, "1X"), "deal", "'1X' is not a card"),
        (lambda r: r["hands"][0]["deal"][1].pop(), "deal", "seat 1 was dealt 12 cards"),
        (
            lambda r: r["hands"][0]["deal"][1].__setitem__(0, r["hands"][0]["deal"][0][0]),
            "deal",
            "dealt more often",
        ),
        (lambda r: r["hands"][0]["passes"][2].pop(), "pass", "seat 2 must pass 3 cards, not 2"),
        (
            lambda r: r["hands"][0]["passes"][1].__setitem__(0, r["hands"][0]["deal"][0][0]),
            "pass",
            "not in hand",
        ),
        (
            lambda r: r["hands"][3].__setitem__("passes", [["2C"]] * 4),
            "pass",
            "hold hand: nobody passes",
        ),
        (lambda r: r["hands"][0].__setitem__("moon", "add"), "moon", "nobody has a moon choice"),
        (
            lambda r: r["hands"][0].__setitem__("trump", "S"),
            "trump",
            "these rules declare no trump",
        ),
        (
            lambda r: r.__setitem__("rules", {"preset": "standard", "players": 9}),
            "rules",
            "9 players need cancellation",
        ),
        (lambda r: r.__setitem__("hands", "many"), "record", "'hands' must be a list"),
        (lambda r: r.__setitem__("seed", "x"), "record", "'seed' must be an integer"),
    ],
)
def test_bad_records_get_a_clear_error(mutate: Any, stage: str, message: str) -> None:
    record = _game()
    mutate(record)
    result = _invalid(record)
    assert result["stage"] == stage
    assert message in result["error"]


def test_hokm_needs_the_trump() -> None:
    record = _game("hokm_40", seed=2)
    del record["hands"][0]["trump"]
    result = _invalid(record)
    assert result["stage"] == "trump" and "needs the hakem's 'trump'" in result["error"]


def test_malformed_json_never_gets_a_traceback(tmp_path: Path) -> None:
    for text, stage in [
        ("{not json", "json"),
        ("[]", "record"),
        ('"standard"', "record"),
        ("", "json"),
    ]:
        code, result = _cli(["verify", "-"], text)
        assert code == 1 and result["valid"] is False and result["stage"] == stage, text
    code, result = _cli(["verify", str(tmp_path / "missing.json")])
    assert code == 1 and result["stage"] == "json" and "cannot read" in result["error"]
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    code, result = _cli(["verify", str(tmp_path / "binary.json")])
    assert code == 1 and result["stage"] == "json"


def test_an_unfinished_game_is_valid_and_not_over() -> None:
    record = _game()
    record["hands"] = record["hands"][:2]
    record["hands"][1]["plays"] = record["hands"][1]["plays"][:10]
    result = verify(record)
    assert result["valid"] and result["game_over"] is False and result["winners"] == []
    assert result["hands"][1]["complete"] is False


def test_unfinished_hand_followed_by_another_is_invalid() -> None:
    record = _game()
    record["hands"][0]["plays"] = record["hands"][0]["plays"][:10]
    result = _invalid(record)
    assert result["stage"] == "record" and "hand 0 is not finished" in result["error"]
