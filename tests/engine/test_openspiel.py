"""Differential tests: the engine and OpenSpiel's Hearts agree on every legal move and on the
points of thousands of random hands, in every pass direction and with each OpenSpiel option
that maps onto ours."""

from __future__ import annotations

import random

import pytest

from engine.record import verify
from engine.rules import RuleSet
from engine.state import GameState, IllegalMoveError, Phase
from tests.engine.openspiel_reference import from_openspiel, hand_scores, legal, new_hand, pyspiel

# (OpenSpiel parameters, our overrides of `standard`)
VARIANTS = {
    "standard": ({}, {}),
    "qs_does_not_break": ({"qs_breaks_hearts": False}, {"hearts_break": "heart"}),
    "no_broken": ({"must_break_hearts": False}, {"hearts_break": "no_broken"}),
    "jd_bonus": ({"jd_bonus": True}, {"jd_bonus": -10}),
    "points_on_first_trick": ({"no_pts_on_first_trick": False}, {"no_points_first_trick": False}),
}
DIRECTIONS = ("left", "right", "across", "hold")
HANDS_PER_CASE = 250  # x 5 variants x 4 directions = 5,000 hands


def _play_hand_against_openspiel(
    rules: RuleSet, params: dict, seed: int, rng: random.Random
) -> None:
    ours = GameState(rules, seed=seed)
    deal = [ours.hand_of(s) for s in range(4)]
    theirs = new_hand(params, rules.pass_cycle[0], deal)
    while ours.phase in (Phase.PASS, Phase.PLAY):
        assert ours.current_seat == theirs.current_player()
        options = ours.legal_actions()
        assert options == legal(theirs), f"seed {seed}: legal moves differ at {ours.to_record()}"
        card = rng.choice(options)
        ours.apply(card)
        theirs.apply_action_with_legality_check(
            next(a for a in theirs.legal_actions() if from_openspiel(a) == card)
        )
    assert theirs.is_terminal()
    assert list(ours.history[-1].scores) == hand_scores(theirs), f"seed {seed}"


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_legal_moves_and_scores_agree(variant: str, direction: str) -> None:
    params, overrides = VARIANTS[variant]
    rules = RuleSet.from_preset("standard", pass_cycle=[direction], **overrides)
    rng = random.Random(f"{variant}/{direction}")
    for seed in range(HANDS_PER_CASE):
        _play_hand_against_openspiel(rules, params, seed, rng)


def test_moon_shots_agree() -> None:
    # Random play almost never shoots the moon: steer one seat to take every point.
    rules = RuleSet.from_preset("standard", pass_cycle=["hold"])
    shots = 0
    for seed in range(400):
        ours = GameState(rules, seed=seed)
        theirs = new_hand({}, "hold", [ours.hand_of(s) for s in range(4)])
        while ours.phase is Phase.PLAY:
            options = ours.legal_actions()
            assert options == legal(theirs)
            # seat 0 plays its highest card, the others their lowest: seat 0 takes a lot
            card = options[-1] if ours.current_seat == 0 else options[0]
            ours.apply(card)
            theirs.apply_action_with_legality_check(
                next(a for a in theirs.legal_actions() if from_openspiel(a) == card)
            )
        assert list(ours.history[-1].scores) == hand_scores(theirs)
        shots += ours.history[-1].shooter is not None
    assert shots > 0, "no moon shot exercised"


def _first_illegal_index(record: dict) -> int | None:
    """Where OpenSpiel's legality check first refuses the record's plays (hand 0)."""
    hand = record["hands"][0]
    theirs = new_hand({}, "left", hand["deal"])
    for seat_cards in hand["passes"]:
        for card in seat_cards:
            theirs.apply_action_with_legality_check(
                next(a for a in theirs.legal_actions() if from_openspiel(a) == card)
            )
    for index, card in enumerate(hand["plays"]):
        options = [a for a in theirs.legal_actions() if from_openspiel(a) == card]
        if not options:
            return index
        theirs.apply_action_with_legality_check(options[0])
    return None


def test_verify_finds_the_first_illegal_play_as_openspiel_does() -> None:
    rng = random.Random(11)
    rules = RuleSet.from_preset("standard")
    checked = 0
    for seed in range(300):
        state = GameState(rules, seed=seed)
        state.play_random(rng)
        record = state.to_record()
        plays = record["hands"][0]["plays"]
        j = rng.randrange(len(plays))
        k = rng.randrange(len(plays))
        plays[j], plays[k] = plays[k], plays[j]  # a mutation: two plays swapped
        expected = _first_illegal_index(record)
        result = verify(record)
        if expected is None:
            assert result["valid"], result
        else:
            assert not result["valid"]
            assert (result["hand"], result["stage"], result["index"]) == (0, "play", expected)
            checked += 1
    assert checked > 100


def test_both_engines_refuse_the_same_illegal_lead() -> None:
    # The reference is always driven through apply_action_with_legality_check (see FINDINGS).
    ours = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=1)
    state = new_hand({}, "hold", [ours.hand_of(s) for s in range(4)])
    bad = next(a for a in range(52) if a not in state.legal_actions())
    with pytest.raises(pyspiel.SpielError):
        state.apply_action_with_legality_check(bad)
    with pytest.raises(IllegalMoveError):
        GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=1).apply(
            from_openspiel(bad)
        )
