"""The rollout fast path (GameState.play_random) follows exactly the rules of the step path:
every hand it plays replays move by move through `apply` to the same tricks and scores."""

from __future__ import annotations

import random

import pytest

from engine.record import replay
from engine.rules import PRESETS, RuleSet, allowed_player_counts
from engine.state import GameState, Phase

CASES = [(p, n) for p in sorted(PRESETS) for n in allowed_player_counts(p)]


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_rollouts_replay_identically_through_the_step_path(preset: str, players: int) -> None:
    rules = RuleSet.from_preset(preset, players=players)
    rng = random.Random(f"{preset}/{players}")
    for seed in range(40):
        fast = GameState(rules, seed=seed)
        while True:
            fast.play_random(rng)
            if fast.phase is not Phase.HAND_OVER or len(fast.history) >= 3:
                break
            fast.next_hand()
        slow = replay(fast.to_record())
        assert slow.phase is fast.phase
        assert slow.totals == fast.totals
        for ours, theirs in zip(fast.history, slow.history, strict=True):
            assert ours.tricks == theirs.tricks  # same cards (as texts), leaders and winners
            assert (ours.points, ours.scores, ours.shooter, ours.kitty_taker, ours.void) == (
                theirs.points,
                theirs.scores,
                theirs.shooter,
                theirs.kitty_taker,
                theirs.void,
            )


def test_a_rollout_from_the_middle_of_a_trick_and_of_the_passing() -> None:
    rules = RuleSet.from_preset("standard")
    rng = random.Random(3)
    for seed in range(30):
        state = GameState(rules, seed=seed)
        for _ in range(rng.randrange(0, 12)):
            state.apply(rng.choice(state.legal_actions()))
        if state.phase is Phase.PLAY:
            for _ in range(rng.randrange(0, 20)):
                state.apply(rng.choice(state.legal_actions()))
        state.clone().play_random(rng)
        copy = state.clone()
        copy.play_random(rng)
        assert replay(copy.to_record()).history[-1].scores == copy.history[-1].scores
