"""Random playouts: whole hands and games with moves drawn from a seeded ``random.Random``.

Used by tests, benchmarks and bots (Monte-Carlo rollouts). Every random choice comes from the
``rng`` passed in, so a playout is reproducible.

>>> import random
>>> from engine.rules import RuleSet
>>> state = random_game(RuleSet.from_preset("standard"), seed=3, rng=random.Random(3))
>>> state.is_game_over, max(state.totals) >= 100
(True, True)
"""

from __future__ import annotations

import random

from engine.cards import indices
from engine.rules import RuleSet
from engine.state import GameState, Phase


def play_random_action(state: GameState, rng: random.Random) -> None:
    """Apply one uniformly random legal action for the current seat.

    >>> state = GameState(RuleSet.from_preset("standard"), seed=1)
    >>> play_random_action(state, random.Random(1))
    >>> len(state.pass_lists[0])
    1
    """
    phase = state.phase
    if phase is Phase.PLAY or phase is Phase.PASS:
        state.apply_index(rng.choice(indices(state.legal_mask())))
    else:
        state.apply(rng.choice(state.legal_actions()))


def play_random_hand(state: GameState, rng: random.Random) -> None:
    """Play random actions until the current hand is over (or the game).

    Uses the state's own rollout loop (:meth:`GameState.play_random`).

    >>> state = GameState(RuleSet.from_preset("omnibus"), seed=2)
    >>> play_random_hand(state, random.Random(2))
    >>> state.phase.value, len(state.history)
    ('hand_over', 1)
    """
    state.play_random(rng)


def random_game(
    rules: RuleSet, seed: int, rng: random.Random, *, max_hands: int = 10_000
) -> GameState:
    """A whole game dealt from ``seed`` with every decision random; stops at game over.

    >>> game = random_game(RuleSet.from_preset("cancellation", players=6), 1, random.Random(1))
    >>> game.is_game_over, len(game.winners) >= 1
    (True, True)
    """
    state = GameState(rules, seed)
    while True:
        play_random_hand(state, rng)
        if state.phase is Phase.GAME_OVER:
            return state
        if len(state.history) >= max_hands:
            raise RuntimeError(f"no winner after {max_hands} hands")
        state.next_hand()
