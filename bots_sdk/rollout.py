"""Rollout policies for Monte-Carlo bots: finishing a hand quickly, and plausibly.

Uniformly random play is the fastest rollout (:meth:`engine.state.GameState.play_random`),
but random opponents hand out the queen of spades by accident, which misleads the estimate.
:func:`play_ducking` finishes a hand the way a cautious player would — duck under the winning
card, dump the queen and high hearts when void, lead low — with a little randomness so that
rollouts differ. It works on the engine's masks directly.

>>> import random
>>> from engine.rules import RuleSet
>>> from engine.state import GameState
>>> state = GameState(RuleSet.from_preset("standard"), seed=4)
>>> play_ducking(state, random.Random(1))
>>> state.phase.value, sum(state.history[-1].points)
('hand_over', 26)
"""

from __future__ import annotations

import random

from engine.cards import CARD_RANK, CARD_SUIT, DECK_SIZE, card_index, indices
from engine.state import GameState, Phase

_QUEEN = card_index("QS")


def _rank(index: int) -> int:
    return CARD_RANK[index]


def choose_ducking(state: GameState, rng: random.Random, epsilon: float = 0.1) -> int:
    """The card index the ducking policy plays now."""
    legal = indices(state.legal_mask())
    if len(legal) == 1:
        return legal[0]
    if rng.random() < epsilon:
        return rng.choice(legal)
    cards = state.trick_cards
    if not cards:
        non_hearts = [c for c in legal if CARD_SUIT[c] != 2 and c % DECK_SIZE != _QUEEN] or legal
        return min(non_hearts, key=_rank)
    led = state.led_suit
    if CARD_SUIT[legal[0]] == led and all(CARD_SUIT[c] == led for c in legal):
        winning = state.win_key  # rank of the winning card (20 + rank once trumped)
        below = [c for c in legal if _rank(c) < winning]
        if below:
            if any(c % DECK_SIZE == _QUEEN for c in below):
                return next(c for c in below if c % DECK_SIZE == _QUEEN)
            return max(below, key=_rank)
        last = len(cards) == state.n - 1
        points = any(c % DECK_SIZE == _QUEEN or CARD_SUIT[c] == 2 for c in cards)
        safe = [c for c in legal if c % DECK_SIZE != _QUEEN] or legal
        return max(safe, key=_rank) if last and not points else min(safe, key=_rank)
    for c in legal:
        if c % DECK_SIZE == _QUEEN:
            return c
    hearts = [c for c in legal if CARD_SUIT[c] == 2]
    return max(hearts or legal, key=_rank)


def play_ducking(state: GameState, rng: random.Random, epsilon: float = 0.1) -> None:
    """Finish the current hand with the ducking policy (other decisions at random)."""
    while True:
        phase = state.phase
        if phase is Phase.PLAY:
            state.apply_index(choose_ducking(state, rng, epsilon))
        elif phase is Phase.HAND_OVER or phase is Phase.GAME_OVER:
            return
        else:
            state.play_random(rng)  # passing, trump, moon choice: random is fine here
            return
