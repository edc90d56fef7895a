"""The frames of the replay viewer, computed by the engine from a game record (the page's
JavaScript only draws them; it never re-implements a rule)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine.record import replay
from engine.rules import RuleSet


def replay_frames(record: dict[str, Any]) -> dict[str, Any]:
    """Per hand: the hands after passing, the passes, every trick with its winner and the
    points taken so far, the hand's scores; and the running totals."""
    state = replay(record)
    rules = RuleSet.from_spec(record["rules"])
    values = {f"{r}H": v for r, v in zip("23456789TJQKA", rules.heart_points, strict=True)}
    values["QS"] = rules.queen_points
    hands_out = []
    totals = [0] * rules.players
    for number, hand in enumerate(state.history):
        data = record["hands"][number]
        deal = data.get("deal") or [[] for _ in range(rules.players)]
        held = [Counter(cards) for cards in deal]
        passes = data.get("passes")
        if passes:
            offset = rules.pass_offset(hand.hand_number)
            for seat, cards in enumerate(passes):
                held[seat].subtract(cards)
                held[(seat + offset) % rules.players].update(cards)
        taken = [0] * rules.players
        tricks = []
        for trick in hand.tricks:
            if trick.winner is not None:
                taken[trick.winner] += sum(values.get(card, 0) for _, card in trick.plays)
            tricks.append({"leader": trick.leader, "plays": [list(p) for p in trick.plays],
                           "winner": trick.winner, "taken": taken[:]})  # fmt: skip
        totals = [t + s for t, s in zip(totals, hand.scores, strict=True)]
        hands_out.append(
            {
                "number": hand.hand_number,
                "void": hand.void,
                "hands": [sorted(c.elements()) for c in held],
                "passes": passes,
                "pass_direction": rules.pass_direction(hand.hand_number),
                "tricks": tricks,
                "points": list(hand.points),
                "scores": list(hand.scores),
                "shooter": hand.shooter,
                "totals": totals[:],
            }
        )
    return {"players": rules.players, "hands": hands_out, "winners": state.winners}
