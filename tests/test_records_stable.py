"""The records a seed gives do not change with the code's shape: these digests were taken
before the SDK and the arena were reorganised into rooms, and every later move of code must
give the same records, move for move (the engine's moves, scores and rules of each game; the
seats' times vary and are left out).

A digest that changes means a game changed: a rule, a built-in's play, the seeding or the
record's form. That is a change of behaviour, to make on purpose (and say so), never by a
refactoring.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from bots_sdk.referee.runner import run_match

CASES = {
    "standard": (11, ["heuristic", "low", "random", "montecarlo"], "fa9e5e0bea4aea03"),
    "persian": (12, ["low", "random", "heuristic", "high"], "c9c99450537a5d83"),
    "hokm_40": (5, ["heuristic", "random", "low", "heuristic"], "ea0c408a1693421c"),
    "omnibus": (7, ["random", "heuristic", "low", "random"], "c047205cd581832d"),
    "black_lady_54": (3, ["heuristic", "montecarlo", "random", "low"], "b08e325aed858e1b"),
}


@pytest.mark.parametrize("preset", sorted(CASES))
def test_a_seed_gives_the_same_records_as_before_the_reorganisation(preset: str) -> None:
    seed, bots, digest = CASES[preset]
    result = run_match(preset, seed, bots, hands=2)
    games = [{k: v for k, v in game.to_dict().items() if k != "seats"} for game in result.games]
    assert games and all(game["hands"] for game in games)
    found = hashlib.sha256(json.dumps(games, sort_keys=True).encode()).hexdigest()[:16]
    assert found == digest, f"{preset}: the records changed"
