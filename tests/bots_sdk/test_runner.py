"""The match runner: formats, determinism, the clock, and faults that never stop a match.

Bot files here run with the debug launcher (a plain subprocess, same protocol), so these tests
need no sandbox; tests/bots_sdk/test_sandbox.py runs the hostile ones sandboxed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bots_sdk.referee.runner import TimeControl, bot_seed, fallback_action, play_game, run_match
from engine.record import verify
from engine.rules import RuleSet
from engine.state import GameState
from tests.sandboxes import UNHURRIED

HOSTILE = Path(__file__).parent / "hostile"
LOWEST = Path(__file__).parent / "lowest.py"  # (checked in: tests never write into tests/)


def test_a_game_to_the_target_between_built_ins() -> None:
    result = run_match("standard", 4, ["heuristic", "random", "low", "random"])
    game = result.games[0]
    assert game.state.is_game_over and max(game.state.totals) >= 100
    assert verify(game.record)["valid"]
    assert [s.bot for s in game.seats] == ["heuristic", "random", "low", "random"]
    assert all(len(s.move_seconds) > 13 for s in game.seats)


def test_fixed_number_of_hands_and_other_rules() -> None:
    result = run_match({"preset": "hokm_40"}, 2, ["low", "heuristic", "random", "low"], hands=3)
    history = [h for h in result.games[0].state.history if not h.void]
    assert len(history) == 3 and result.rules.preset == "hokm_40"
    six = run_match(RuleSet.from_preset("cancellation", players=6), 1, ["low"] * 6, hands=2)
    assert len(six.games[0].seats) == 6


def test_duplicate_rotates_seats_over_the_same_deals() -> None:
    result = run_match(
        "standard", 9, ["heuristic", "random", "low", "random"], hands=2, duplicate=True
    )
    assert [g.rotation for g in result.games] == [0, 1, 2, 3]
    deals = [[h.deal for h in g.state.history] for g in result.games]
    assert all(d == deals[0] for d in deals)
    assert [g.seats[0].bot for g in result.games] == ["heuristic", "random", "low", "random"]
    assert result.games[1].seats[3].bot == "heuristic"


def test_the_same_seed_replays_the_same_game_including_bot_files() -> None:
    first = play_game(
        "standard", 5, [str(LOWEST), "random", "montecarlo", "heuristic"], hands=2, unsafe=True
    )
    second = play_game(
        "standard", 5, [str(LOWEST), "random", "montecarlo", "heuristic"], hands=2, unsafe=True
    )
    assert first.record == second.record
    assert bot_seed(5, 0, 1) != bot_seed(5, 0, 2)


def test_bots_need_the_sandbox_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no bwrap, setpriv or prlimit on this PATH
    from bots_sdk.sandbox import SandboxUnavailable

    with pytest.raises(SandboxUnavailable, match="is not installed"):
        play_game("standard", 1, [str(LOWEST), "low", "low", "low"], hands=1)


@pytest.mark.parametrize(
    ("bot", "kind"),
    [
        ("crash", "crash"),
        ("illegal", "illegal"),
        ("stdout_flood", "protocol"),
        ("wrong_seat", "protocol"),
        ("eager", "protocol"),
        ("close_stdout", "crash"),
        ("sleeper", "timeout"),
    ],
)
def test_faults_are_classified_and_the_fallback_plays_on(bot: str, kind: str) -> None:
    # The sleeper's fault is time: a short clock, which its endless sleep is past on any
    # machine. The others' is not: a clock no busy machine runs out of first.
    clock = TimeControl(move=0.05, bank=0.05) if kind == "timeout" else UNHURRIED
    game = play_game(
        "standard",
        3,
        [str(HOSTILE / f"{bot}.py"), "low", "random", "heuristic"],
        hands=1,
        time_control=clock,
        unsafe=True,
    )
    faults = game.seats[0].faults
    assert faults and faults[0]["class"] == kind, faults
    assert {"class", "detail", "decision", "hand", "play"} <= set(faults[0])
    assert game.seats[0].replaced
    assert verify(game.record)["valid"] and len(game.state.history) == 1


def test_a_timeout_is_a_fault_but_not_the_end_of_the_bot(tmp_path: Path) -> None:
    # Its first play sleeps 0.3 s past all the time it is offered, however fast the machine
    # (charged its wall time less the referee's 0.2 s tolerance: still over), and ends before
    # the wall clock's guard (its time + 0.5 s): its next play finds it awake. Each other
    # decision has 2 s, which no busy machine's stall of a trivial play uses up.
    slow_once = tmp_path / "slow_once.py"
    slow_once.write_text(
        "import time\nfrom bots_sdk import Bot, lowest\n\n\nclass SlowOnce(Bot):\n"
        "    slept = False\n\n"
        "    def pass_cards(self, view):\n        return view.hand[:3]\n\n"
        "    def play(self, view):\n"
        "        if not self.slept:\n"
        "            self.slept = True\n"
        "            time.sleep(view.time_left + 0.3)\n"
        "        return lowest(view.legal)\n"
    )
    game = play_game(
        "standard",
        3,
        [str(slow_once), "low", "random", "heuristic"],
        hands=1,
        time_control=TimeControl(move=1.0, bank=1.0),
        unsafe=True,
    )
    faults = game.seats[0].faults
    assert [(f["class"], f["decision"]) for f in faults] == [("timeout", "play")], faults
    assert not game.seats[0].replaced  # one timeout: it plays on


def test_time_bank_pays_for_overruns(tmp_path: Path) -> None:
    thinker = tmp_path / "thinker.py"
    thinker.write_text(
        "from bots_sdk import Bot, lowest\n\n\nclass Thinker(Bot):\n"
        "    def pass_cards(self, view):\n        return view.hand[:3]\n\n"
        "    def play(self, view):\n"
        "        total = 0\n        for i in range(3_000_000):\n            total += i\n"
        "        return lowest(view.legal)\n"
    )
    game = play_game(
        "standard",
        3,
        [str(thinker), "low", "low", "low"],
        hands=1,
        time_control=TimeControl(move=0.01, bank=0.3),
        unsafe=True,
    )
    kinds = [f["class"] for f in game.seats[0].faults]
    assert kinds and set(kinds) == {"timeout"}  # the bank ran out after a few moves


def test_fallback_is_deterministic() -> None:
    state = GameState(RuleSet.from_preset("standard"), seed=1)
    assert fallback_action(state) == fallback_action(state.clone())
    assert len(fallback_action(state)) == 3


def test_stderr_is_captured_per_seat(tmp_path: Path) -> None:
    chatty = tmp_path / "chatty.py"
    chatty.write_text(
        "import sys\nfrom bots_sdk import Bot, lowest\n\n\nclass Chatty(Bot):\n"
        "    def pass_cards(self, view):\n        print('thinking about', view.hand[0])\n"
        "        return view.hand[:3]\n\n"
        "    def play(self, view):\n        return lowest(view.legal)\n"
    )
    game = play_game("standard", 3, [str(chatty), "low", "low", "low"], hands=1, unsafe=True)
    assert "thinking about" in game.seats[0].stderr  # print() goes to stderr, not the protocol
    assert game.seats[1].stderr == ""


def test_a_match_given_a_launcher_starts_its_bot_files_with_it(tmp_path: Path) -> None:
    from bots_sdk.sandbox import BuiltBot, Launch, Unsandboxed

    said = tmp_path / "said.py"
    said.write_text(
        "import os, sys\nimport engine\nfrom bots_sdk import Bot, lowest\n\n"
        "print('build', engine.BUILD.kind, os.environ.get('BIDEL_ENGINE'), file=sys.stderr)\n\n"
        "class Said(Bot):\n"
        "    def pass_cards(self, view):\n        return view.hand[:3]\n\n"
        "    def play(self, view):\n        return lowest(view.legal)\n"
    )
    started: list[int] = []

    class Pure(Unsandboxed):  # as bench/compiled_strength.py sets each bot's engine build
        def launch(self, bot: Path | BuiltBot, seat: int) -> Launch:
            started.append(seat)
            launch = super().launch(bot, seat)
            launch.env["BIDEL_ENGINE"] = "pure"
            return launch

    match = run_match("standard", 5, [str(said), "low", str(said), "low"], hands=1, launcher=Pure())
    assert sorted(started) == [0, 2]
    for seat in (0, 2):
        assert "build pure pure" in match.games[0].seats[seat].stderr


def test_one_config_plays_a_match_here_or_in_several_processes_alike() -> None:
    from bots_sdk.referee.runner import RefereeConfig

    bots = ["low", "random", "heuristic", "high"]
    here = run_match("standard", 4, bots, games=2, duplicate=True, hands=1)
    config = RefereeConfig(hands=1)
    apart = run_match("standard", 4, bots, games=2, duplicate=True, jobs=2, config=config)

    def moves(match: Any) -> list[Any]:
        return [(g.rotation, g.to_dict()["hands"], g.totals) for g in match.games]

    assert len(here.games) == 8 and moves(here) == moves(apart)
    with pytest.raises(TypeError, match="not both"):
        run_match("standard", 4, bots, config=config, hands=2)
    with pytest.raises(ValueError, match="no observer"):
        run_match("standard", 4, bots, jobs=2, observer=lambda game, state: None)
