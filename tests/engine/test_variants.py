"""Scenarios for the variants OpenSpiel lacks: player counts, the kitty, Hokm, Cancellation."""

from __future__ import annotations

import random

import pytest

from engine.cards import card_index
from engine.rules import RuleSet
from engine.state import GameState, IllegalMoveError, Phase, Trick
from tests.engine.helpers import deal_with, lowest, play

RANKS = "23456789TJQKA"


@pytest.mark.parametrize(("players", "first"), [(3, "2C"), (5, "3C"), (6, "2C"), (7, "2C")])
def test_the_lowest_club_in_play_leads(players: int, first: str) -> None:
    rules = RuleSet.from_preset("standard", players=players)
    for seed in range(20):
        state = GameState(rules, seed=seed)
        while state.phase is Phase.PASS:
            state.apply(state.legal_actions()[0])
        holder = next(s for s in range(players) if first in state.hand_of(s))
        assert state.current_seat == holder and state.legal_actions() == [first]


def test_kitty_lowest_club_in_hands_leads_when_2c_is_set_aside() -> None:
    rules = RuleSet.from_preset("kitty", pass_cycle=["hold"])
    deal, kitty = deal_with(rules, {1: ["3C"]}, kitty=["2C", "AS", "AH", "KH"])
    state = GameState(rules, deal=deal, kitty=kitty)
    assert state.current_seat == 1 and state.legal_actions() == ["3C"]


def _expected_kitty_taker(rule: str, tricks: list[Trick]) -> int | None:
    points = lambda t: any(c[1] == "H" or c == "QS" for _, c in t.plays)  # noqa: E731
    hearts = lambda t: any(c[1] == "H" for _, c in t.plays)  # noqa: E731
    if rule == "first_trick":
        return tricks[0].winner
    if rule == "last_trick":
        return tricks[-1].winner
    test = points if rule == "first_points_trick" else hearts
    return next((t.winner for t in tricks if test(t)), None)


@pytest.mark.parametrize(
    "rule", ["first_points_trick", "first_trick", "last_trick", "first_heart_trick"]
)
def test_who_takes_the_kitty(rule: str) -> None:
    rules = RuleSet.from_preset("kitty", kitty_taker=rule)
    rng = random.Random(rule)
    for seed in range(150):
        state = GameState(rules, seed=seed)
        state.play_random(rng)
        hand = state.history[-1]
        taker = _expected_kitty_taker(rule, hand.tricks)
        assert hand.kitty_taker == taker
        kitty_points = sum(
            rules.heart_points[RANKS.index(c[0])] if c[1] == "H" else 13 if c == "QS" else 0
            for c in state.to_record()["hands"][0]["kitty"]
        )
        if taker is not None and hand.shooter is None:
            won = [
                sum(
                    rules.heart_points[RANKS.index(c[0])] if c[1] == "H" else 13 if c == "QS" else 0
                    for t in hand.tricks
                    if t.winner == s
                    for _, c in t.plays
                )
                for s in range(4)
            ]
            won[taker] += kitty_points
            assert list(hand.points) == won
        assert sum(hand.points) == 26


def test_the_queen_alone_does_not_give_the_kitty_under_first_heart_trick() -> None:
    rules = RuleSet.from_preset("kitty", kitty_taker="first_heart_trick", pass_cycle=["hold"])
    deal, kitty = deal_with(
        rules,
        {0: ["2C", "AC", "KC"], 1: ["3C", "QS"], 2: ["4C", "5C"], 3: ["6C", "7C"]},
        avoid={1: "C", 2: "C", 3: "C"},
        kitty=["2H", "3H", "4H", "5H"],
    )
    state = GameState(rules, deal=deal, kitty=kitty)
    for card in ["2C", "3C", "4C", "6C", "7C", "AC", "QS", "5C"]:
        state.apply(card)
    assert state.points_taken()[0] == 13 and state.kitty_taker is None
    observation = state.observation(1)
    assert observation.kitty == [] and observation.kitty_size == 4


def test_hokm_hakem_declares_and_trumps_win() -> None:
    rules = RuleSet.from_preset("hokm_40", pass_cycle=["hold"])
    # Seat 2 holds 2C (the first hakem); seat 3 has no diamonds but a small spade.
    deal, _ = deal_with(rules, {2: ["2C"], 0: ["AD", "AC"], 1: ["KD"], 3: ["2S"]}, avoid={3: "D"})
    state = GameState(rules, deal=deal)
    assert state.phase is Phase.DECLARE_TRUMP and state.current_seat == 2 and state.hakem == 2
    assert state.legal_actions() == ["C", "D", "H", "S"]
    with pytest.raises(IllegalMoveError, match="must declare a trump suit"):
        state.apply("X")
    state.apply("S")
    assert state.observation(0).trump == "S"
    play(state, lowest, stop=lambda s: s.tricks_done == 1)  # the clubs trick
    trick = state.trick_log[0]
    leader = trick[2]
    assert leader is not None
    # Force a diamond lead from seat 0 when it next leads: find a trick with a trump on a
    # led diamond in the rest of the hand, under random play, and check its winner.
    rng = random.Random(5)
    checked = 0
    for seed in range(300):
        game = GameState(rules, seed=seed)
        game.apply(rng.choice(["C", "D", "H", "S"]))
        game.play_random(rng)
        for t in game.history[-1].tricks:
            led = t.plays[0][1][1]
            trump = "CDHS"[game.history[-1].trump]
            trumps = [(RANKS.index(c[0]), s) for s, c in t.plays if c[1] == trump]
            follows = [(RANKS.index(c[0]), s) for s, c in t.plays if c[1] == led]
            expected = max(trumps)[1] if trumps else max(follows)[1]
            assert t.winner == expected
            checked += bool(trumps) and led != trump
    assert checked > 100


@pytest.mark.parametrize(
    ("spec", "step"),
    [
        # hokm_40 plays counterclockwise (RULES.md §7): the player to the right of the QS's
        # taker is the next one in play order.
        ("hokm_40", 1),
        ({"preset": "hokm_40", "players": 3}, 1),
        ({"preset": "hokm_40", "players": 5}, 1),
        # The other reading, clockwise: the player to the right plays before the taker.
        ({"preset": "hokm_40", "direction": "clockwise"}, -1),
        ({"preset": "hokm_40", "players": 5, "direction": "clockwise"}, -1),
    ],
)
def test_next_hakem_sits_to_the_right_of_the_queen_taker(spec: str | dict, step: int) -> None:
    rules = RuleSet.from_spec(spec)
    n = rules.players
    rng = random.Random(2)
    checked = 0
    for seed in range(50):
        state = GameState(rules, seed=seed)
        declared = state.hakem  # this hand's hakem, before any card
        state.play_random(rng)
        if state.phase is not Phase.HAND_OVER or state.history[-1].void:
            continue
        queen = card_index("QS")
        taker = next(s for s, m in enumerate(state.taken) if m >> queen & 1)
        assert state.history[-1].hakem == declared  # the hand keeps its own hakem
        state.next_hand()
        assert state.hakem == (taker + step) % n and state.current_seat == state.hakem
        checked += 1
    assert checked > 30


def test_cancellation_identical_cards_cancel_and_carry_over() -> None:
    rules = RuleSet.from_preset("cancellation", players=6, pass_cycle=["hold"])
    # Hand 0 is dealt by seat 0, so seat 1 leads. Seats 1 and 2 hold every diamond.
    deal, kitty = deal_with(
        rules,
        {1: ["9D", "AD", "3D", "AH"], 2: ["9D", "2D", "4D"]},
        avoid={0: "D", 3: "D", 4: "D", 5: "D"},
    )
    state = GameState(rules, deal=deal, kitty=kitty)
    assert state.current_seat == 1
    with pytest.raises(IllegalMoveError, match="no hearts or QS on the first trick"):
        state.apply("AH")  # the first lead may be anything but a heart or the QS
    state.apply("9D")
    state.apply("9D")
    for _ in range(4):
        state.apply(state.legal_actions()[0])  # seats 3, 4, 5, 0 have no diamonds
    assert state.trick_log[0][2] is None  # both nines cancelled: nobody wins
    assert state.current_seat == 1 and state.carry.bit_count() == 6  # same leader again
    state.apply("AD")
    state.apply("2D")
    for _ in range(4):
        state.apply(state.legal_actions()[0])
    assert state.trick_log[1][2] == 1 and state.carry == 0
    assert state.taken[1].bit_count() == 12  # both tricks


def test_cancellation_highest_uncancelled_card_wins() -> None:
    rules = RuleSet.from_preset("cancellation", players=6, pass_cycle=["hold"])
    deal, kitty = deal_with(
        rules, {1: ["5D", "KS"], 2: ["KD"], 3: ["KD"], 4: ["6D"]}, avoid={0: "D", 5: "D"}
    )
    state = GameState(rules, deal=deal, kitty=kitty)
    for card in ["5D", "KD", "KD", "6D"]:
        state.apply(card)
    state.apply(state.legal_actions()[0])
    state.apply(state.legal_actions()[0])
    assert state.trick_log[0][2] == 4  # the kings cancel; 6D beats 5D


def test_cancellation_leader_rotates_with_the_dealer() -> None:
    rules = RuleSet.from_preset("cancellation", players=7)
    state = GameState(rules, seed=3)
    rng = random.Random(3)
    for hand in range(3):
        while state.phase is Phase.PASS:
            state.apply(rng.choice(state.legal_actions()))
        assert state.current_seat == (hand + 1) % 7
        state.play_random(rng)
        state.next_hand()


def test_cancellation_points_add_up_with_cards_left_on_the_table() -> None:
    rules = RuleSet.from_preset("cancellation", players=6)
    rng = random.Random(4)
    lost = 0
    for seed in range(200):
        state = GameState(rules, seed=seed)
        state.play_random(rng)
        hand = state.history[-1]
        untaken = state.carry | (state.kitty if hand.kitty_taker is None else 0)
        assert sum(hand.points) + state._points(untaken) == 52
        lost += bool(untaken)
    assert lost > 0
