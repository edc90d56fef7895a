"""Hand scores and the end of the game: the moon and its variants, the JD bonus, point
values, the target and the three tie-breaks."""

from __future__ import annotations

import random

import pytest

from engine.record import verify
from engine.rules import RuleSet
from engine.state import GameState, HandRecord, Phase
from tests.engine.helpers import play


def _shooter_policy(state: GameState) -> str:
    # Seat 0 plays its highest card, everybody else the lowest: seat 0 takes nearly all.
    options = state.legal_actions()
    return max(options, key=_strength) if state.current_seat == 0 else min(options, key=_strength)


def _strength(card: str) -> int:
    return "23456789TJQKA".index(card[0])


def _moon_seed(rules: RuleSet) -> int:
    for seed in range(2000):
        state = GameState(rules, seed=seed)
        play(state, _shooter_policy)
        if state.phase is Phase.MOON_CHOICE or state.history[-1].shooter is not None:
            return seed
    raise AssertionError("no moon shot found")


def _moon_hand(preset: str, **overrides: object) -> tuple[GameState, HandRecord | None]:
    rules = RuleSet.from_preset(preset, pass_cycle=["hold"], **overrides)
    state = GameState(rules, seed=_moon_seed(RuleSet.from_preset("standard", pass_cycle=["hold"])))
    play(state, _shooter_policy)
    return state, (state.history[-1] if state.history else None)


def _each(shooter: int, value: int, others: int) -> list[int]:
    return [value if seat == shooter else others for seat in range(4)]


SHOOTER = 3  # who shoots in the hand _moon_seed finds


def test_moon_adds_to_the_others() -> None:
    _, hand = _moon_hand("standard")
    assert hand is not None and hand.shooter == SHOOTER
    assert list(hand.points) == _each(SHOOTER, 26, 0)
    assert list(hand.scores) == _each(SHOOTER, 0, 26)


def test_moon_subtract() -> None:
    _, hand = _moon_hand("moon_subtract")
    assert hand is not None and list(hand.scores) == _each(SHOOTER, -26, 0)


def test_moon_off_scores_the_points() -> None:
    _, hand = _moon_hand("standard", moon="off")
    assert hand is not None and hand.shooter is None
    assert list(hand.scores) == _each(SHOOTER, 26, 0)


@pytest.mark.parametrize(("choice", "value", "others"), [("add", 0, 26), ("subtract", -26, 0)])
def test_moon_choice_is_the_shooters_decision(choice: str, value: int, others: int) -> None:
    scores = _each(SHOOTER, value, others)
    state, hand = _moon_hand("moon_choice")
    assert hand is None and state.phase is Phase.MOON_CHOICE
    assert state.current_seat == SHOOTER and state.legal_actions() == ["add", "subtract"]
    state.apply(choice)
    assert list(state.history[-1].scores) == scores and state.totals == scores
    record = state.to_record()
    assert record["hands"][0]["moon"] == choice
    assert verify(record)["hands"][0]["scores"] == scores
    del record["hands"][0]["moon"]
    assert verify(record)["hands"][0].get("complete") is False  # still waiting for the choice


def test_moon_amount_setting() -> None:
    _, hand = _moon_hand("standard", moon_points=13)
    assert hand is not None and list(hand.scores) == _each(SHOOTER, 0, 13)


def test_black_lady_54_moon_gives_the_others_26_not_45() -> None:
    _, hand = _moon_hand("black_lady_54", hearts_break="heart_or_queen", only_hearts_lead="allow")
    assert hand is not None and list(hand.points) == _each(SHOOTER, 45, 0)
    assert list(hand.scores) == _each(SHOOTER, 0, 26)


def test_omnibus_jack_of_diamonds_and_the_moon() -> None:
    state, hand = _moon_hand("omnibus")
    assert hand is not None and hand.shooter == SHOOTER  # the JD is not needed to shoot
    jd_taker = next(s for s, mask in enumerate(state.taken) if mask >> _index("JD") & 1)
    expected = _each(SHOOTER, 0, 26)
    expected[jd_taker] -= 10
    assert list(hand.scores) == expected


def _index(card: str) -> int:
    from engine.cards import card_index

    return card_index(card)


@pytest.mark.parametrize("preset", ["standard", "black_lady_54", "black_lady_40", "omnibus"])
def test_points_match_the_cards_taken(preset: str) -> None:
    rules = RuleSet.from_preset(preset)
    values = {f"{r}H": v for r, v in zip("23456789TJQKA", rules.heart_points)} | {
        "QS": rules.queen_points
    }
    rng = random.Random(preset)
    for seed in range(200):
        state = GameState(rules, seed=seed)
        state.play_random(rng)
        hand = state.history[-1]
        if hand.void:
            continue
        taken = [[] for _ in range(4)]
        for trick in hand.tricks:
            taken[trick.winner].extend(card for _, card in trick.plays)
        points = [sum(values.get(c, 0) for c in cards) for cards in taken]
        assert list(hand.points) == points
        assert sum(points) == rules.total_points
        if hand.shooter is None:
            bonus = [rules.jd_bonus * ("JD" in cards) for cards in taken]
            assert list(hand.scores) == [p + b for p, b in zip(points, bonus)]


def _game_until(rules: RuleSet, wanted, seeds: int = 3000) -> GameState:
    """A game (random play, seeded) in which `wanted(state)` becomes true after some hand."""
    for seed in range(seeds):
        state = GameState(rules, seed=seed)
        rng = random.Random(seed)
        while True:
            state.play_random(rng)
            if state.phase is Phase.MOON_CHOICE:
                break
            if wanted(state):
                return state
            if state.phase is Phase.GAME_OVER:
                break
            state.next_hand()
    raise AssertionError("no such game")


def _tied_low(state: GameState) -> bool:
    low = min(state.totals)
    return state.totals.count(low) > 1


def test_game_ends_when_a_total_reaches_the_target() -> None:
    rules = RuleSet.from_preset("standard", target=30)
    state = _game_until(rules, lambda s: s.phase is Phase.GAME_OVER and not _tied_low(s))
    assert max(state.totals) >= 30
    assert state.winners == [state.totals.index(min(state.totals))]
    assert all(max(h_totals) < 30 for h_totals in _running_totals(state)[:-1])
    with pytest.raises(Exception, match="the game is over"):
        state.next_hand()


def _running_totals(state: GameState) -> list[list[int]]:
    totals, out = [0] * state.n, []
    for hand in state.history:
        totals = [t + s for t, s in zip(totals, hand.scores)]
        out.append(totals)
    return out


def test_extra_hand_breaks_a_tie() -> None:
    rules = RuleSet.from_preset("standard", target=20)
    state = _game_until(
        rules, lambda s: s.phase is Phase.HAND_OVER and max(s.totals) >= 20 and _tied_low(s)
    )
    assert state.winners == []  # tied at the target: play on
    state.next_hand()
    assert state.phase is not Phase.GAME_OVER


def test_shared_win_on_a_tie() -> None:
    rules = RuleSet.from_preset("standard", target=20, tie_break="shared")
    state = _game_until(rules, lambda s: s.phase is Phase.GAME_OVER and _tied_low(s))
    low = min(state.totals)
    assert (
        state.winners == [s for s in range(4) if state.totals[s] == low] and len(state.winners) > 1
    )


def test_highest_diamond_breaks_a_tie() -> None:
    rules = RuleSet.from_preset("standard", target=20, tie_break="highest_diamond")
    state = _game_until(rules, lambda s: s.phase is Phase.GAME_OVER and _tied_low(s))
    low = min(state.totals)
    tied = [s for s in range(4) if state.totals[s] == low]
    assert len(state.winners) == 1 and state.winners[0] in tied
    last = state.history[-1]
    best = {
        s: max(
            (
                "23456789TJQKA".index(c[0])
                for t in last.tricks
                if t.winner == s
                for _, c in t.plays
                if c[1] == "D"
            ),
            default=-1,
        )
        for s in tied
    }
    assert best[state.winners[0]] == max(best.values()) > -1


def test_highest_diamond_falls_back_to_an_extra_hand() -> None:
    rules = RuleSet.from_preset("standard", target=20, tie_break="highest_diamond")
    state = _game_until(
        rules, lambda s: s.phase is Phase.HAND_OVER and max(s.totals) >= 20 and _tied_low(s)
    )
    assert state.winners == []
