"""Properties that hold for every preset and player count, under random play (hypothesis)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import CARD_TEXTS
from engine.record import replay, verify
from engine.rules import PRESETS, RuleSet, allowed_player_counts
from engine.simulate import random_game
from engine.state import GameState, Phase

CASES = [(p, n) for p in sorted(PRESETS) for n in allowed_player_counts(p)]


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_every_preset_plays_to_game_over(preset: str, players: int) -> None:
    rules = RuleSet.from_preset(preset, players=players)
    state = random_game(rules, seed=players, rng=random.Random(preset))
    assert state.is_game_over and state.legal_actions() == [] and state.current_seat is None
    assert max(state.totals) >= rules.target
    assert state.winners and all(state.totals[w] == min(state.totals) for w in state.winners)
    result = verify(state.to_record())
    assert result["valid"] and result["game_over"] and result["totals"] == state.totals
    assert result["winners"] == state.winners


def _check_step(state: GameState) -> None:
    rules = state.rules
    masks = [*state.hands, *state.taken, state.carry]
    masks.append(sum(1 << c for c in state.trick_cards))
    if state.kitty_taker is None:
        masks.append(state.kitty)
    union = 0
    for mask in masks:
        assert not union & mask, "a card is in two places"
        union |= mask
    assert union == rules._derived.deck_mask, "the deck is not conserved"
    if state.phase in (Phase.PASS, Phase.PLAY, Phase.DECLARE_TRUMP, Phase.MOON_CHOICE):
        legal = state.legal_actions()
        assert legal, "no legal move before the end"
        assert legal == sorted(set(legal))
    else:
        assert state.legal_actions() == []


def _check_passes_arrived(state: GameState) -> None:
    """Each seat's passed cards are what the seat its rules name received: left is the next
    seat clockwise and the previous one counterclockwise; right the other way round."""
    rules, n = state.rules, state.n
    hand = state.history[-1]
    named = rules.pass_direction(hand.hand_number)
    clockwise = rules.direction == "clockwise"
    step = {"left": 1 if clockwise else -1, "right": -1 if clockwise else 1, "across": n // 2}
    if hand.passes is None:
        assert named == "hold" or rules.pass_count == 0
        return
    for seat in range(n):
        to = (seat + step[named]) % n
        passed = state.observation(seat).passed
        assert passed == sorted(CARD_TEXTS[c] for c in hand.passes[seat])
        assert state.observation(to).received == passed, (named, rules.direction, seat, to)
        assert state.observation(seat).pass_offset == (to - seat) % n


@settings(max_examples=60, deadline=None)
@given(
    case=st.sampled_from(CASES),
    seed=st.integers(min_value=0, max_value=2**63),
    moves=st.integers(min_value=0, max_value=2**32),
    direction=st.sampled_from(["clockwise", "counterclockwise"]),
)
def test_invariants_at_every_step(
    case: tuple[str, int], seed: int, moves: int, direction: str
) -> None:
    preset, players = case
    rules = RuleSet.from_preset(preset, players=players, direction=direction)
    rng = random.Random(moves)
    state = GameState(rules, seed=seed)
    for _ in range(3):
        while state.phase not in (Phase.HAND_OVER, Phase.GAME_OVER):
            _check_step(state)
            state.apply(rng.choice(state.legal_actions()))
        _check_step(state)
        _check_passes_arrived(state)
        hand = state.history[-1]
        if not hand.void:
            untaken = state.carry | (state.kitty if hand.kitty_taker is None else 0)
            assert sum(hand.points) + state._points(untaken) == rules.total_points
        if state.phase is Phase.GAME_OVER:
            break
        state.next_hand()
    record = state.to_record()
    again = replay(record)
    assert again.to_record() == record and again.totals == state.totals
    assert again.phase is state.phase


@settings(max_examples=40, deadline=None)
@given(
    case=st.sampled_from([c for c in CASES if c[0] != "cancellation"]),
    seed=st.integers(min_value=0, max_value=2**32),
    shift=st.integers(min_value=1, max_value=6),
)
def test_rotating_the_seats_rotates_the_result(
    case: tuple[str, int], seed: int, shift: int
) -> None:
    # Duplicate format: the same deal with every hand moved `shift` seats along, each seat
    # playing a policy of its own cards only, gives the same hand moved `shift` seats along.
    preset, players = case
    rules = RuleSet.from_preset(preset, players=players)
    base = GameState(rules, seed=seed)
    deal = [base.hand_of(s) for s in range(players)]
    kitty = [c for c in base.to_record()["hands"][0].get("kitty", [])]
    rotated_deal = [deal[(s - shift) % players] for s in range(players)]
    rotated = GameState(rules, deal=rotated_deal, kitty=kitty)
    for game in (base, rotated):
        while game.phase not in (Phase.HAND_OVER, Phase.GAME_OVER):
            options = game.legal_actions()
            game.apply("S" if game.phase is Phase.DECLARE_TRUMP else options[0])
    a, b = base.history[-1], rotated.history[-1]
    assert a.void == b.void
    assert [b.points[(s + shift) % players] for s in range(players)] == list(a.points)
    assert [b.scores[(s + shift) % players] for s in range(players)] == list(a.scores)
