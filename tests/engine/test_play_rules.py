"""Hand-built scenarios for the rules of play: leading, following, the first trick, hearts."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from engine.record import verify
from engine.rules import RuleSet
from engine.state import GameState, IllegalMoveError, Phase
from tests.engine.helpers import EVERY_FIELD_PRESETS, deal_with, lowest, observations, play

HOLD = {"pass_cycle": ["hold"]}
HEARTS_2_TO_K = ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"]


def test_the_two_of_clubs_leads_and_nothing_else() -> None:
    rules = RuleSet.from_preset("standard", **HOLD)
    deal, _ = deal_with(rules, {2: ["2C", "AS"]})
    state = GameState(rules, deal=deal)
    assert state.phase is Phase.PLAY and state.current_seat == 2
    assert state.legal_actions() == ["2C"]
    with pytest.raises(IllegalMoveError, match="seat 2 must lead 2C to the first trick"):
        state.apply("AS")
    with pytest.raises(IllegalMoveError, match="it is seat 2's turn, not seat 1's"):
        state.apply("2C", seat=1)


def test_players_must_follow_suit() -> None:
    rules = RuleSet.from_preset("standard", **HOLD)
    deal, _ = deal_with(rules, {0: ["2C"], 1: ["3C", "AD"]})
    state = GameState(rules, deal=deal)
    state.apply("2C")
    with pytest.raises(IllegalMoveError, match="seat 1 must follow clubs"):
        state.apply("AD")
    with pytest.raises(IllegalMoveError, match="seat 1 cannot play KS: not in hand"):
        state.apply("KS")
    assert "3C" in state.legal_actions() and all(c.endswith("C") for c in state.legal_actions())


def test_no_points_on_the_first_trick_unless_nothing_else() -> None:
    rules = RuleSet.from_preset("standard", **HOLD)
    # Seat 1 has no clubs but a spade; seat 2 has only hearts and the queen of spades.
    deal, _ = deal_with(
        rules, {0: ["2C"], 1: ["AH", "2S"], 2: HEARTS_2_TO_K + ["QS"]}, avoid={1: "C", 2: "CDS"}
    )
    state = GameState(rules, deal=deal)
    state.apply("2C")
    assert "AH" not in state.legal_actions()
    with pytest.raises(IllegalMoveError, match="no hearts or QS on the first trick"):
        state.apply("AH")
    state.apply("2S")
    assert state.legal_actions() == sorted(HEARTS_2_TO_K + ["QS"])  # forced: any card
    hearts_first = RuleSet.from_preset("standard", first_trick_forced="hearts_first", **HOLD)
    state = GameState(hearts_first, deal=deal)
    state.apply("2C")
    state.apply("2S")
    assert state.legal_actions() == sorted(HEARTS_2_TO_K)


def _break_with_queen(preset: str) -> GameState:
    """Seat 1, void in clubs... the queen of spades falls on trick 2; seat 0 then leads."""
    rules = RuleSet.from_preset(preset, **HOLD)
    deal, _ = deal_with(
        rules,
        {0: ["2C", "AC", "KC", "2H"], 1: ["3C", "QS", "2D"], 2: ["4C", "5C"], 3: ["6C", "7C"]},
        avoid={1: "C", 2: "C", 3: "C"},
    )
    state = GameState(rules, deal=deal)
    for card in ["2C", "3C", "4C", "6C"]:  # trick 1: seat 3 wins with 6C
        state.apply(card)
    for card in ["7C", "AC", "QS", "5C"]:  # trick 2: seat 3 leads 7C, seat 0 wins, QS falls
        state.apply(card)
    assert state.current_seat == 0 and state.points_taken()[0] == 13
    return state


def test_the_queen_breaks_hearts_in_standard() -> None:
    state = _break_with_queen("standard")
    assert state.hearts_broken and "2H" in state.legal_actions()


def test_only_a_heart_breaks_hearts_in_persian() -> None:
    state = _break_with_queen("persian")
    assert not state.hearts_broken and "2H" not in state.legal_actions()
    with pytest.raises(IllegalMoveError, match="seat 0 cannot lead hearts: hearts are not broken"):
        state.apply("2H")


def test_no_broken_lets_hearts_lead_at_once() -> None:
    state = _break_with_queen("no_broken")
    assert "2H" in state.legal_actions()


def _only_hearts_leader(preset: str) -> GameState:
    # Seat 0 wins the first trick with AC and then holds nothing but hearts.
    rules = RuleSet.from_preset(preset, **HOLD)
    deal, _ = deal_with(rules, {0: ["AC"] + HEARTS_2_TO_K, 1: ["2C"]})
    state = GameState(rules, seed=9, deal=deal)
    play(state, lowest, stop=lambda s: s.current_seat == 0 and not s.trick_cards)
    return state


def test_a_leader_with_only_hearts_may_lead_one() -> None:
    state = _only_hearts_leader("standard")
    assert state.phase is Phase.PLAY and state.legal_actions() == sorted(HEARTS_2_TO_K)


def test_only_hearts_to_lead_voids_the_deal_under_redeal() -> None:
    state = _only_hearts_leader("persian")
    assert state.phase is Phase.HAND_OVER
    void = state.history[-1]
    assert void.void and void.scores == (0, 0, 0, 0) and state.totals == [0, 0, 0, 0]
    assert len(void.plays) == 4
    state.next_hand()
    assert (state.hand_number, state.attempt) == (0, 1)  # the same hand, dealt again
    assert state.rules.pass_direction(state.hand_number) == "hold"
    record = state.to_record()
    assert record["hands"][0]["void"] is True
    assert verify(record)["valid"]
    assert verify(record)["hands"][0]["void"] is True


def test_observation_shows_only_the_seats_own_cards() -> None:
    rules = RuleSet.from_preset("standard")
    state = GameState(rules, seed=4)
    for _ in range(12):
        state.apply(state.legal_actions()[0])  # every seat passes
    for _ in range(6):
        state.apply(state.legal_actions()[0])
    played = {card for _, card in state.observation(0).trick} | {
        card for trick in state.observation(0).tricks for _, card in trick.plays
    }
    for seat in range(4):
        seen = json.dumps(state.observation(seat).to_dict())
        for other in range(4):
            if other == seat:
                continue
            for card in state.hand_of(other):
                received = card in state.observation(seat).passed
                assert f'"{card}"' not in seen or card in played or received, (seat, card)
        assert state.observation(seat).hand == state.hand_of(seat)
    assert state.observation(state.current_seat).legal == state.legal_actions()
    assert state.observation((state.current_seat + 1) % 4).legal == []


def test_observation_to_dict_lists_every_field_in_order() -> None:
    """``to_dict`` spells its fields out for speed: the same as the generic conversion."""
    for preset in EVERY_FIELD_PRESETS:
        for view in observations(preset, seed=3):
            expected = {f.name: getattr(view, f.name) for f in dataclasses.fields(view)}
            expected["rules"] = view.rules.to_spec()
            expected["trick"] = [list(p) for p in view.trick]
            expected["tricks"] = [
                {"leader": t.leader, "plays": [list(p) for p in t.plays], "winner": t.winner}
                for t in view.tricks
            ]
            data = view.to_dict()
            assert list(data) == list(expected) and data == expected


def test_the_rules_spec_is_a_fresh_copy_each_time() -> None:
    rules = RuleSet.from_preset("standard", players=5, pass_cycle=["left"])
    spec = rules.to_spec()
    assert isinstance(spec, dict)
    spec["pass_cycle"].append("right")
    spec["target"] = 1
    assert rules.to_spec() == {"preset": "standard", "players": 5, "pass_cycle": ["left"]}


def _receivers(rules: RuleSet, hands: int) -> list[list[int]]:
    """Per hand, for each seat s: how many seats onward in play order s's passed cards
    arrived (found in the receivers' observations), or [] on a hold hand."""
    state = GameState(rules, seed=11)
    n = rules.players
    found: list[list[int]] = []
    while len(found) < hands:
        play(state, lowest, stop=lambda s: s.phase is not Phase.PASS)
        views = [state.observation(seat) for seat in range(n)]
        offsets = []
        for seat, view in enumerate(views):
            if view.passed:
                to = next(r for r in range(n) if views[r].received == view.passed)
                offsets.append((to - seat) % n)
                assert view.pass_offset == (to - seat) % n  # what the seat is told
            else:
                assert view.pass_offset == 0
        play(state, lowest)
        if not state.history[-1].void:  # (a redeal replays the same hand number)
            found.append(offsets)
        state.next_hand()
    return found


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # Counterclockwise (RULES.md §7): right is the next player, left the previous one.
        ("persian", [[1] * 4, [3] * 4, [2] * 4, []]),
        ({"preset": "persian", "players": 3}, [[1] * 3, [2] * 3, []]),
        ({"preset": "persian", "players": 5}, [[1] * 5, [4] * 5]),
        ("black_lady_40", [[1] * 4, [3] * 4, [2] * 4, []]),
        # Clockwise, as before: left is the next player.
        ("standard", [[1] * 4, [3] * 4, [2] * 4, []]),
        ({"preset": "standard", "players": 3}, [[1] * 3, [2] * 3]),
        # Either preset with the other direction: its first pass goes to the previous player.
        ({"preset": "persian", "direction": "clockwise"}, [[3] * 4, [1] * 4, [2] * 4, []]),
        ({"preset": "standard", "direction": "counterclockwise"}, [[3] * 4, [1] * 4]),
    ],
)
def test_passes_arrive_at_the_seat_the_direction_names(
    spec: str | dict, expected: list[list[int]]
) -> None:
    assert _receivers(RuleSet.from_spec(spec), len(expected)) == expected


def test_persian_with_players_3_keeps_passing_to_the_next_player_first() -> None:
    rules = RuleSet.from_preset("persian").with_players(3)
    assert (rules.direction, rules.pass_cycle) == ("counterclockwise", ("right", "left", "hold"))
    assert _receivers(rules, 3) == [[1] * 3, [2] * 3, []]


def test_clone_is_independent() -> None:
    state = GameState(RuleSet.from_preset("standard"), seed=8)
    copy = state.clone()
    copy.apply(copy.legal_actions()[0])
    assert state.current_seat == 0 and state.pass_lists[0] == []
    assert copy.to_record() != state.to_record()

    copy.play_random(random.Random(1))
    assert state.phase is Phase.PASS and copy.phase in (Phase.HAND_OVER, Phase.GAME_OVER)


def test_clone_copies_every_slot() -> None:
    state = GameState(RuleSet.from_preset("hokm_40"), seed=3)
    state.apply("H")
    copy = state.clone()
    # (compiled with mypyc, the class lists its fields in __mypyc_attrs__, not __slots__)
    names = getattr(GameState, "__slots__", None) or GameState.__mypyc_attrs__
    assert len(names) >= 39
    for name in names:
        assert getattr(copy, name) == getattr(state, name), name
