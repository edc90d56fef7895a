"""Building hands by hand for scenario tests."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping

from engine.cards import CARD_TEXTS
from engine.rules import RuleSet
from engine.state import GameState, Observation, Phase


def deal_with(
    rules: RuleSet,
    fixed: Mapping[int, list[str]],
    avoid: Mapping[int, str] | None = None,
    kitty: list[str] | None = None,
) -> tuple[list[list[str]], list[str]]:
    """A deal where seat s holds ``fixed[s]``; the other cards fill the seats in card order,
    skipping for seat s the suits in ``avoid[s]``; what is left is the kitty."""
    avoid = avoid or {}
    pool = Counter(CARD_TEXTS[i] for i in range(104) if rules._derived.deck_mask >> i & 1)
    for cards in list(fixed.values()) + [kitty or []]:
        pool.subtract(cards)
    assert all(v >= 0 for v in pool.values()), "a fixed card is not in play or listed too often"
    remaining = sorted(pool.elements())
    deal = [list(fixed.get(seat, [])) for seat in range(rules.players)]

    def eligible(card: str) -> list[int]:
        return [s for s in range(rules.players) if card[1] not in avoid.get(s, "")]

    # The most constrained cards first, each to the first eligible seat with room.
    for card in sorted(remaining, key=lambda c: (len(eligible(c)), c)):
        for seat in eligible(card):
            if len(deal[seat]) < rules.hand_size:
                deal[seat].append(card)
                remaining.remove(card)
                break
    for seat, hand in enumerate(deal):
        assert len(hand) == rules.hand_size, f"cannot fill seat {seat}"
    leftover = (kitty or []) + remaining
    assert len(leftover) == rules.kitty
    return deal, leftover


Policy = Callable[[GameState], str]


def lowest(state: GameState) -> str:
    return state.legal_actions()[0]


def play(
    state: GameState, policy: Policy = lowest, *, stop: Callable[[GameState], bool] | None = None
) -> None:
    """Apply ``policy`` until the hand ends (or ``stop`` says so)."""
    while state.phase in (Phase.PASS, Phase.PLAY, Phase.DECLARE_TRUMP):
        if stop is not None and stop(state):
            return
        state.apply(policy(state))


#: Rules that between them use every field of an observation (trumps, a kitty, cancellation).
EVERY_FIELD_PRESETS = ("standard", "hokm_40", "kitty", "cancellation")


def observations(preset: str, seed: int) -> Iterator[Observation]:
    """Every seat's observation at every step of a hand of ``preset`` played at random
    (``seed`` deals it and draws the moves), to its end."""
    rules = RuleSet.from_preset(preset)
    state = GameState(rules, seed=seed)
    rng = random.Random(seed)
    while True:
        for seat in range(rules.players):
            yield state.observation(seat)
        if state.phase in (Phase.HAND_OVER, Phase.GAME_OVER):
            return
        state.apply(rng.choice(state.legal_actions()))
