"""The analysis of a game from one seat's information: a blunder is marked as one, a decision
is valued the same whatever the hidden cards were (as long as the seat could not tell), the
numbers add up per hand and game, and a whole record is analysed the same twice."""

from __future__ import annotations

import random

from bots_sdk.analysis import MARKS, analyse_game, analyse_pass, analyse_view
from bots_sdk.referee.runner import run_match
from bots_sdk.view import View
from engine.rules import RuleSet
from engine.state import GameState

RULES = RuleSet.from_preset("standard", pass_cycle=["hold"])
#: Seat 1 is last on a spade trick that 9S wins, holding only 3S and QS in spades (and no
#: other suit it could play): QS takes its own queen.
HANDS = [
    ["2C", "6S", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD"],
    ["3C", "QS", "3S", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH"],
    ["AC", "5S", "KD", "AD", "QH", "KH", "AH", "4C", "5C", "6C", "7C", "8C", "9C"],
    ["4S", "9S", "TC", "JC", "QC", "KC", "2S", "7S", "8S", "TS", "JS", "KS", "AS"],
]
PLAYS = ["2C", "3C", "AC", "TC", "5S", "9S", "6S"]


def _state(hands: list[list[str]]) -> GameState:
    return GameState.at_play(RULES, hands, plays=PLAYS)


def test_taking_ones_own_queen_is_a_blunder_and_ducking_is_best() -> None:
    view = View.from_observation(_state(HANDS).observation(1))
    assert view.legal == ["3S", "QS"]
    found = analyse_view(view, "QS", samples=40)
    assert found is not None
    assert found.best == "3S" and found.mark == "blunder"
    assert found.lost >= dict(MARKS)["blunder"] and found.interval[0] > 0
    assert found.expected["QS"] - found.expected["3S"] >= 10  # about the queen's 13
    ducked = analyse_view(view, "3S", samples=40)
    assert ducked is not None and ducked.mark == "" and ducked.lost == 0


def test_the_hidden_cards_change_nothing_the_seat_could_not_tell() -> None:
    # The unplayed cards of seats 0, 2 and 3 dealt again among them (each keeps its count and
    # the suits it has shown): seat 1's view is the same, and so is its analysis.
    rng = random.Random(5)
    played = set(PLAYS)
    for _ in range(3):
        others = [0, 2, 3]
        pool = [c for s in others for c in HANDS[s] if c not in played]
        rng.shuffle(pool)
        shuffled = [list(h) for h in HANDS]
        for s in others:
            kept = [c for c in HANDS[s] if c in played]
            count = len(HANDS[s]) - len(kept)
            shuffled[s] = kept + pool[:count]
            pool = pool[count:]
        a = View.from_observation(_state(HANDS).observation(1))
        b = View.from_observation(_state(shuffled).observation(1))
        assert a.to_dict() == b.to_dict() and shuffled != HANDS
        assert analyse_view(a, "QS", samples=30) == analyse_view(b, "QS", samples=30)


def test_a_game_is_analysed_the_same_twice_and_its_totals_add_up() -> None:
    game = run_match("standard", 9, ["heuristic", "random", "low", "heuristic"], hands=2)
    record = game.games[0].to_dict()
    report = analyse_game(record, seat=1, samples=12)
    assert report == analyse_game(record, seat=1, samples=12)
    assert report.decisions and {d.hand for d in report.decisions} <= {0, 1}
    for totals in report.hands:
        mine = [d for d in report.decisions if d.hand == totals.hand]
        assert totals.decisions == len(mine)
        assert abs(totals.lost - sum(d.lost for d in mine)) < 1e-6
    assert sum(report.marks.values()) == sum(1 for d in report.decisions if d.mark)
    for decision in report.decisions:
        assert decision.played in decision.expected and decision.best in decision.expected
        assert decision.lost >= 0 and decision.interval[0] <= decision.lost + 1e-9
    # random plays at seat 1: it blunders now and then; the heuristic at seat 0 less
    assert report.lost > analyse_game(record, seat=0, samples=12).lost


def test_a_deals_luck_sums_to_its_points_and_favours_the_low_cards() -> None:
    from bots_sdk.analysis import deal_luck

    rules = RuleSet.from_preset("standard", pass_cycle=["hold"])
    # Seat 0: the lowest three of every suit and the 5C: it can duck everything. Seat 3: the
    # queen of spades unguarded and high hearts.
    low = [r + s for s in "CDHS" for r in "234"] + ["5C"]
    high = ["QS", "KH", "QH", "JH", "TH", "9H", "5D", "6D", "7D", "6C", "7C", "8C", "9C"]
    rest = [r + s for s in "CDHS" for r in "23456789TJQKA" if r + s not in low + high]
    deal = [low, rest[:13], rest[13:], high]
    luck = deal_luck(rules, deal, samples=32)
    assert luck is not None and luck == deal_luck(rules, deal, samples=32)
    total = sum(luck)  # (each figure rounded to 3 places)
    assert 26 - 0.01 <= total <= 78 + 0.01  # 26 a hand; a moon shot adds 52 for the others
    assert luck[0] == min(luck) < total / 4 < max(luck)
    for seed in range(3):  # any deal: what the seats expect is what the hand hands out
        state = GameState(RuleSet.from_preset("persian"), seed=seed)
        dealt = [state.hand_of(s) for s in range(4)]
        found = deal_luck(state.rules, dealt, samples=16)
        assert found is not None and 26 - 0.01 <= sum(found) <= 78 + 0.01


def test_a_hand_that_begins_with_trumps_has_no_luck_figure() -> None:
    from bots_sdk.analysis import deal_luck

    state = GameState(RuleSet.from_preset("hokm_40"), seed=1)
    dealt = [state.hand_of(s) for s in range(state.rules.players)]
    assert deal_luck(state.rules, dealt, samples=4) is None


def test_keeping_the_top_spades_unguarded_is_a_pass_mistake_and_passing_them_is_best() -> None:
    rules = RuleSet.from_preset("standard")  # the first hand passes left
    mine = ["QS", "KS", "AS", "2C", "3C", "4C", "5C", "2D", "3D", "4D", "2H", "3H", "4H"]
    rest = [c for c in (r + s for s in "CDHS" for r in "23456789TJQKA") if c not in mine]
    random.Random(3).shuffle(rest)
    hands = [mine, rest[:13], rest[13:26], rest[26:]]
    view = View.from_observation(GameState(rules, None, deal=hands).observation(0))
    assert view.decision == "pass"
    kept = analyse_pass(view, ["2C", "3C", "4C"], samples=60)
    assert kept is not None and kept.decision == "pass" and kept.trick == 0
    assert kept.played == "2C 3C 4C" and set(kept.best.split()) == {"QS", "KS", "AS"}
    assert kept.mark in ("mistake", "blunder") and kept.interval[0] > 0, kept
    passed = analyse_pass(view, ["AS", "QS", "KS"], samples=60)
    assert passed is not None and passed.played == "QS KS AS" and passed.lost == 0
    # The hidden hands dealt otherwise: the seat sees the same, the numbers are the same.
    random.Random(4).shuffle(rest)
    other = [mine, rest[:13], rest[13:26], rest[26:]]
    again = View.from_observation(GameState(rules, None, deal=other).observation(0))
    assert analyse_pass(again, ["2C", "3C", "4C"], samples=60) == kept


def test_a_games_report_values_its_passes_too() -> None:
    game = run_match("standard", 9, ["heuristic", "low", "random", "low"], hands=2).games[0]
    report = analyse_game(game.to_dict(), seat=0, samples=8)
    passes = [d for d in report.decisions if d.decision == "pass"]
    assert [d.hand for d in passes] == [0, 1]  # left, then right: one pass a hand
    assert all(len(d.played.split()) == 3 and d.played in d.expected for d in passes)
