"""OpenSpiel's Hearts as a reference for the `standard` family of rules (a test helper).

OpenSpiel numbers cards rank*4 + suit (suits C D H S, rank 0 = two), deals card k of 52 to
seat k % 4 after a first chance action for the pass direction (0 none, 1 left, 2 across,
3 right), and keeps `apply_action` unchecked: use `apply_action_with_legality_check`.
"""

from __future__ import annotations

from typing import Any

import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is not installed (pip install --no-deps open_spiel==2.0.2)"
)

RANKS = "23456789TJQKA"
SUITS = "CDHS"
PASS_ACTIONS = {"hold": 0, "left": 1, "across": 2, "right": 3}


def to_openspiel(card: str) -> int:
    return RANKS.index(card[0]) * 4 + SUITS.index(card[1])


def from_openspiel(action: int) -> str:
    return RANKS[action // 4] + SUITS[action % 4]


def new_hand(params: dict[str, Any], direction: str, deal: list[list[str]]) -> Any:
    """An OpenSpiel state after the pass direction and our deal."""
    game = pyspiel.load_game("hearts", params)
    state = game.new_initial_state()
    state.apply_action_with_legality_check(PASS_ACTIONS[direction])
    for j in range(13):
        for seat in range(4):
            state.apply_action_with_legality_check(to_openspiel(deal[seat][j]))
    return state


def legal(state: Any) -> list[str]:
    return sorted(from_openspiel(a) for a in state.legal_actions())


def hand_scores(state: Any) -> list[int]:
    """What the hand adds to each total (after the moon and the JD bonus)."""
    return [26 - int(r) for r in state.returns()]
