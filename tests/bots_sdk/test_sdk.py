"""The SDK's pieces: views, the Bot class, loading bot files, sampling, the built-ins."""

from __future__ import annotations

import json
import random
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from bots_sdk import Bot, View
from bots_sdk.builtin import BUILTIN, make_builtin
from bots_sdk.loader import BotLoadError, load_bot
from bots_sdk.protocol import MAX_LINE, ProtocolError, decode
from bots_sdk.sampling import Simulation
from engine.rules import PRESETS, RuleSet, allowed_player_counts
from engine.state import GameState, Phase


def _views(
    preset: str, players: int, seed: int, rng: random.Random
) -> list[tuple[GameState, View]]:
    state = GameState(RuleSet.from_preset(preset, players=players), seed=seed)
    out = []
    while state.phase not in (Phase.HAND_OVER, Phase.GAME_OVER):
        seat = state.current_seat
        assert seat is not None
        out.append((state.clone(), View.from_observation(state.observation(seat))))
        state.apply(rng.choice(state.legal_actions()))
    return out


def test_view_contract_names_and_round_trip() -> None:
    state = GameState(RuleSet.from_preset("standard"), seed=3)
    view = View.from_observation(state.observation(0), time_left=1.5)
    assert view.seat == 0 and isinstance(view.rules, RuleSet)
    assert view.hand == sorted(view.hand) and view.legal == sorted(view.legal)
    assert view.time_left == 1.5 and view.decision == "pass"
    again = View.from_dict(json.loads(json.dumps(view.to_dict())))
    assert again == view
    with pytest.raises(AttributeError):
        view.seat = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("spec", "offsets"),
    [
        ("standard", [1, 3, 2, 0]),  # clockwise: left is the next seat
        ("persian", [1, 3, 2, 0]),  # counterclockwise: right is the next seat (RULES.md §7)
        ({"preset": "persian", "direction": "clockwise"}, [3, 1, 2, 0]),
        ({"preset": "standard", "pass_count": 0}, [0, 0, 0, 0]),  # nobody passes
    ],
)
def test_view_says_where_the_passes_go_and_reads_messages_without_it(
    spec: str | dict, offsets: list[int]
) -> None:
    rules = RuleSet.from_spec(spec)
    deal = GameState(rules, seed=3)
    hands = [deal.hand_of(seat) for seat in range(4)]
    for number, offset in enumerate(offsets):
        state = GameState.at_play(rules, hands, hand_number=number)
        view = View.from_observation(state.observation(2))
        assert view.pass_direction == rules.pass_cycle[number]
        assert view.pass_offset == offset and view.to_dict()["pass_offset"] == offset
        older = view.to_dict()
        del older["pass_offset"]  # a message from before the field was sent
        assert View.from_dict(json.loads(json.dumps(older))) == view


def test_views_never_show_other_hands() -> None:
    rng = random.Random(1)
    for state, view in _views("standard", 4, 2, rng)[::7]:
        text = json.dumps(view.to_dict())
        public = {card for _, card in view.trick} | {c for t in view.tricks for _, c in t.plays}
        for seat in range(4):
            if seat == view.seat:
                continue
            for card in state.hand_of(seat):
                if card not in public and card not in view.passed:
                    assert f'"{card}"' not in text


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_sampled_states_agree_with_what_the_view_knows(preset: str) -> None:
    rng = random.Random(preset)
    for players in allowed_player_counts(preset)[:2]:
        for seed in range(6):
            for state, view in _views(preset, players, seed, rng):
                if view.decision != "play":
                    continue
                sample = Simulation(view, rng).sample()
                assert sample.hand_of(view.seat) == view.hand
                assert sample.legal_actions() == view.legal
                assert sample.plays() == state.plays()
                assert [sample.hand_of(s).__len__() for s in range(players)] == view.cards_left
                # voids shown by the play are respected
                for trick in view.tricks:
                    led = trick.plays[0][1][1]
                    for seat, card in trick.plays[1:]:
                        if card[1] != led:
                            assert all(c[1] != led for c in sample.hand_of(seat))


@pytest.mark.parametrize(
    ("spec", "step"),
    [
        ("standard", 1),  # left, clockwise: the next seat
        ("persian", 1),  # right, counterclockwise: the next seat
        ({"preset": "persian", "direction": "clockwise"}, -1),  # right, clockwise: the previous
    ],
)
def test_passed_cards_are_where_they_went(spec: str | dict, step: int) -> None:
    rules = RuleSet.from_spec(spec)
    state = GameState(rules, seed=5)
    while state.phase is Phase.PASS:
        state.apply(state.legal_actions()[0])
    view = View.from_observation(state.observation(state.current_seat))
    receiver = (view.seat + step) % 4
    for _ in range(5):
        sample = Simulation(view, random.Random(_)).sample()
        assert set(view.passed) <= set(sample.hand_of(receiver))


def test_loading_bots(tmp_path: Path) -> None:
    assert set(BUILTIN) == {
        "random",
        "low",
        "heuristic",
        "montecarlo",
        "strong",
        "strong-1",
        "strong-2",
        "strong-3",
    }
    assert make_builtin("heuristic").name == "heuristic"
    good = tmp_path / "good.py"
    good.write_text(
        "from bots_sdk import Bot\n\n\nclass Good(Bot):\n"
        "    def play(self, view):\n        return view.legal[0]\n"
    )
    assert isinstance(load_bot(str(good)), Bot)
    two = tmp_path / "two.py"
    two.write_text(
        "from bots_sdk import Bot\n\n\nclass A(Bot):\n    pass\n\n\nclass B(Bot):\n    pass\n"
    )
    with pytest.raises(BotLoadError, match="exactly one subclass of bots_sdk.Bot .found A, B"):
        load_bot(str(two))
    none = tmp_path / "none.py"
    none.write_text("x = 1\n")
    with pytest.raises(BotLoadError, match="found none"):
        load_bot(str(none))
    archive = tmp_path / "bot.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(
            "bot.py",
            "from helper import pick\nfrom bots_sdk import Bot\n\n\nclass Z(Bot):\n"
            "    def play(self, view):\n        return pick(view.legal)\n",
        )
        z.writestr("helper.py", "def pick(cards):\n    return cards[0]\n")
    assert type(load_bot(str(archive), extract_to=tmp_path / "unpacked")).__name__ == "Z"
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("other.py", "")
    with pytest.raises(BotLoadError, match="no bot.py at the root"):
        load_bot(str(empty), extract_to=tmp_path / "e")
    with pytest.raises(KeyError, match="built-ins: heuristic, low, montecarlo, random"):
        make_builtin("genius")


def test_protocol_lines() -> None:
    with pytest.raises(ProtocolError, match="longer than"):
        decode(b"x" * (MAX_LINE + 1))
    with pytest.raises(ProtocolError):
        decode(b"[1, 2]")


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_built_ins_always_answer_legally(name: str) -> None:
    rng = random.Random(name)
    bot = make_builtin(name, seed=1)
    for preset in ("standard", "hokm_40", "moon_choice", "kitty", "cancellation"):
        for _, view in _views(preset, RuleSet.from_preset(preset).players, 3, rng)[::5]:
            if view.decision == "pass":
                cards = bot.pass_cards(view)
                assert len(cards) == view.rules.pass_count
                assert not Counter(cards) - Counter(view.hand)  # two copies only in Cancellation
            elif view.decision == "play":
                assert bot.play(view) in view.legal
            elif view.decision == "trump":
                assert bot.declare_trump(view) in "CDHS"
