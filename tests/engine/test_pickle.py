"""Engine values cross process boundaries (``bidel play --jobs`` hands rules to a process
pool): each pickles and comes back equal, in the compiled build as in the pure one
(tests/engine/test_builds.py runs this module on both)."""

from __future__ import annotations

import pickle
import random

import pytest

from engine.rules import PRESETS, RuleSet
from engine.state import GameState


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_rules_pickle_and_come_back_equal_and_working(preset: str) -> None:
    rules = RuleSet.from_preset(preset)
    again = pickle.loads(pickle.dumps(rules))
    assert again == rules and again.to_spec() == rules.to_spec()
    assert again.deck_mask == rules.deck_mask and again.total_points == rules.total_points


def test_a_state_mid_hand_pickles_and_plays_on_exactly_as_the_original() -> None:
    state = GameState(RuleSet.from_preset("standard"), seed=11)
    for _ in range(12 + 9):  # the passes, then nine cards
        state.apply(state.legal_actions()[0])
    again = pickle.loads(pickle.dumps(state))
    assert again.to_record() == state.to_record()
    assert again.observation(2) == state.observation(2)
    state.play_random(random.Random(5))
    again.play_random(random.Random(5))
    assert again.to_record() == state.to_record() and again.totals == state.totals


def test_observations_hand_records_and_tricks_pickle_equal() -> None:
    state = GameState(RuleSet.from_preset("persian", players=5), seed=3)
    state.play_random(random.Random(3))
    hand = state.history[-1]
    for value in (state.observation(1), hand, hand.tricks[0]):
        assert pickle.loads(pickle.dumps(value)) == value
