"""The ``strong`` built-in: legal on every rule set and table size, repeatable for a seed,
within a tiny clock, and no blunder where one is plain."""

from __future__ import annotations

import random

import pytest

from bots_sdk.builtin.strong import Deals, StrongBot, choices
from bots_sdk.sampling import Simulation
from bots_sdk.view import View
from engine.rules import PRESETS, RuleSet, allowed_player_counts
from engine.state import GameState


def _play_game(rules: RuleSet, seed: int, bots: list[StrongBot], hands: int = 50) -> list[str]:
    """A game to its end (or ``hands`` hands), every decision checked legal; the plays."""
    state = GameState(rules, seed=seed)
    plays: list[str] = []
    while True:
        while state.current_seat is not None:
            seat = state.current_seat
            view = View.from_observation(state.observation(seat))
            bot = bots[seat]
            if view.decision == "pass":
                chosen = bot.pass_cards(view)
                assert len(chosen) == rules.pass_count
                assert len(set(chosen)) == len(chosen) or rules.cancellation
                assert all(card in view.hand for card in chosen)
                for card in chosen:
                    state.apply(card)
            elif view.decision == "play":
                card = bot.play(view)
                assert card in view.legal, (rules.preset, view.legal, card)
                plays.append(card)
                state.apply(card)
            elif view.decision == "trump":
                suit = bot.declare_trump(view)
                assert suit in view.legal
                state.apply(suit)
            else:
                choice = bot.choose_moon(view)
                assert choice in view.legal
                state.apply(choice)
        if state.is_game_over or len(state.history) >= hands:
            return plays
        state.next_hand()


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_plays_whole_games_legally_on_every_preset(preset: str) -> None:
    rules = RuleSet.from_preset(preset).with_overrides(target=40)
    bots = [StrongBot(seed=seat, budget=6) for seat in range(rules.players)]
    _play_game(rules, seed=7, bots=bots)
    assert sum(bot.fallbacks for bot in bots) == 0  # every play with a choice was searched


@pytest.mark.parametrize("preset", ["standard", "persian", "kitty", "hokm_40", "cancellation"])
def test_plays_legally_at_every_table_size(preset: str) -> None:
    for players in allowed_player_counts(preset):
        rules = RuleSet.from_preset(preset, players=players)
        bots = [StrongBot(seed=seat, budget=4) for seat in range(players)]
        _play_game(rules, seed=players, bots=bots, hands=1)
        assert sum(bot.fallbacks for bot in bots) == 0


def test_same_seed_and_budget_play_the_same_game() -> None:
    rules = RuleSet.from_preset("standard")

    def game() -> list[str]:
        bots = [StrongBot(seed=11 + seat, budget=30) for seat in range(4)]
        return _play_game(rules, seed=3, bots=bots, hands=2)

    assert game() == game()


def _opening_view(time_left: float | None = None) -> View:
    state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=2)
    state.apply("2C")
    observation = state.observation(state.current)
    return View.from_observation(observation, time_left=time_left)


def test_a_tiny_clock_skips_the_search() -> None:
    view = _opening_view(time_left=0.001)
    bot = StrongBot(seed=1, budget=10_000)
    assert bot.play(view) in view.legal
    assert bot.last_rollouts == 0


def test_a_short_clock_trims_the_budget() -> None:
    view = _opening_view(time_left=0.05)
    bot = StrongBot(seed=1, budget=10_000)
    assert bot.play(view) in view.legal
    assert 0 < bot.last_rollouts <= 100


def test_a_clock_in_seconds_searches_at_least_once() -> None:
    view = _opening_view()
    bot = StrongBot(seed=1, think=0.0)
    assert bot.play(view) in view.legal
    assert bot.last_rollouts >= len(choices(view))


def _at_play(hands: list[list[str]], plays: list[str], keep_out: dict[int, str]) -> GameState:
    """A standard hand (no passing) from these partial hands, filled up to 13 cards each in
    card order (a seat never given a suit of ``keep_out``), after ``plays``."""
    used = {card for hand in hands for card in hand}
    rest = [r + s for s in "CDHS" for r in "23456789TJQKA" if r + s not in used]
    for seat, hand in enumerate(hands):
        while len(hand) < 13:
            card = next(c for c in rest if c[1] not in keep_out.get(seat, ""))
            rest.remove(card)
            hand.append(card)
    rules = RuleSet.from_preset("standard", pass_cycle=["hold"])
    return GameState.at_play(rules, hands, plays=plays)


def _spade_trick() -> GameState:
    """Seat 1 is last on a spade trick that 9S wins, holding only 3S and QS in spades."""
    hands = [["2C", "6S"], ["3C", "QS", "3S"], ["AC", "5S"], ["4C", "9S"]]
    plays = ["2C", "3C", "AC", "4C", "5S", "9S", "6S"]
    return _at_play(hands, plays, keep_out={1: "S"})


def test_does_not_take_its_own_queen_of_spades() -> None:
    view = View.from_observation(_spade_trick().observation(1))
    assert view.legal == ["3S", "QS"]
    bot = StrongBot(seed=5, budget=60)
    assert bot.play(view) == "3S"
    assert bot.last_rollouts > 0


def test_gives_the_queen_away_when_void() -> None:
    # Seat 2 wins the first trick and leads AD; seat 1, void in diamonds, holds the queen.
    hands = [
        ["2C", *[r + "D" for r in "23456789TJQK"]],
        ["3C", "QS", *[r + "H" for r in "23456789TJQ"]],
        ["AC", "AD", *[r + "S" for r in "23456789TJ"], "KS"],
        ["4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "KH", "AH", "AS"],
    ]
    state = _at_play(hands, ["2C", "3C", "AC", "4C", "AD", "KC", "2D"], keep_out={})
    view = View.from_observation(state.observation(1))
    assert "QS" in view.legal
    bot = StrongBot(seed=2, budget=60)
    assert bot.play(view) == "QS"
    assert bot.last_rollouts > 0


def test_cards_with_nothing_unseen_between_are_one_choice() -> None:
    # Seat 1 follows 2C from 7C 8C 9C JC; TC is another seat's: 7C stands for 7C-9C.
    state = _at_play([["2C"], ["7C", "8C", "9C", "JC"], ["TC"], []], ["2C"], keep_out={1: "C"})
    view = View.from_observation(state.observation(1))
    assert view.legal == ["7C", "8C", "9C", "JC"]
    assert choices(view) == ["7C", "JC"]
    # The queen is worth points, the jack not: never one choice.
    assert choices(View.from_observation(_spade_trick().observation(1))) == ["3S", "QS"]


def test_deals_keep_what_the_view_shows() -> None:
    rules = RuleSet.from_preset("standard")
    state = GameState(rules, seed=9)
    while state.current_seat is not None and state.phase.value == "pass":
        seat = state.current_seat
        view = View.from_observation(state.observation(seat))
        chosen = StrongBot(seed=seat).pass_cards(view)
        for card in chosen:
            state.apply(card)
    rng = random.Random(4)
    for _ in range(20):  # into the hand, so that some seats show voids
        state.apply(state.legal_actions()[rng.randrange(len(state.legal_actions()))])
    seat = state.current
    view = View.from_observation(state.observation(seat))
    receiver = (seat + view.pass_offset) % 4
    held = [c for c in view.passed if c not in state.plays()]
    deals = Deals(view, Simulation(view, random.Random(1)).sample())
    voids = {
        s: {
            t.plays[0][1][1]
            for t in view.tricks
            for p, c in t.plays
            if p == s and c[1] != t.plays[0][1][1]
        }
        for s in range(4)
    }
    for _ in range(30):
        guess = deals.deal(rng)
        assert guess.hand_of(seat) == view.hand
        assert [len(guess.hand_of(s)) for s in range(4)] == view.cards_left
        assert set(held) <= set(guess.hand_of(receiver))
        for s, suits in voids.items():
            assert not any(card[1] in suits for card in guess.hand_of(s))


# --- passing ----------------------------------------------------------------------------------


def _pass_view(preset: str, hands: list[list[str]] | None = None, seed: int = 1) -> View:
    rules = RuleSet.from_preset(preset)
    state = GameState(rules, seed=seed) if hands is None else GameState(rules, deal=hands)
    assert state.phase.value == "pass"
    return View.from_observation(state.observation(state.current))


def test_a_pass_is_searched_the_same_for_a_seed() -> None:
    view = _pass_view("standard", seed=4)
    bot = StrongBot(seed=3, budget=20, pass_budget=400)
    passed = bot.pass_cards(view)
    assert len(passed) == 3 and set(passed) <= set(view.hand)
    assert 0 < bot.last_rollouts <= 400
    assert StrongBot(seed=3, budget=20, pass_budget=400).pass_cards(view) == passed


def test_a_bare_queen_of_spades_is_passed() -> None:
    # Seat 0 holds the queen with the king and ace of spades and no low spade to guard her.
    hands = [
        ["QS", "KS", "AS", "2C", "3C", "4C", "5C", "6C", "2D", "3D", "4D", "5D", "2H"],
        ["2S", "3S", "4S", "5S", "7C", "8C", "9C", "6D", "7D", "8D", "3H", "4H", "5H"],
        ["6S", "7S", "8S", "9S", "TC", "JC", "9D", "TD", "JD", "6H", "7H", "8H", "9H"],
        ["TS", "JS", "QC", "KC", "AC", "QD", "KD", "AD", "TH", "JH", "QH", "KH", "AH"],
    ]
    bot = StrongBot(seed=1, budget=20, pass_budget=600)
    assert "QS" in bot.pass_cards(_pass_view("standard", hands))


@pytest.mark.parametrize("preset", ["kitty", "cancellation"])
def test_where_samples_cannot_be_dealt_the_heuristic_passes(preset: str) -> None:
    # (A kitty's cards, or a second deck's twins, would need constraints the pass search
    # does not deal: the heuristic's pass stands.)
    from bots_sdk.builtin.heuristic import HeuristicBot

    view = _pass_view(preset)
    bot = StrongBot(seed=1, budget=20, pass_budget=400)
    assert bot.pass_cards(view) == HeuristicBot(seed=1).pass_cards(view)
    assert bot.last_rollouts == 0 and bot.fallbacks == 0


def test_a_pass_budget_of_zero_passes_as_the_heuristic() -> None:
    from bots_sdk.builtin.heuristic import HeuristicBot

    view = _pass_view("persian", seed=2)
    assert StrongBot(seed=1, pass_budget=0).pass_cards(view) == HeuristicBot().pass_cards(view)
