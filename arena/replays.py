"""The frames of the replay viewer, computed by the engine from a game record (the page's
JavaScript only draws them; it never re-implements a rule)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine.record import replay
from engine.rules import RuleSet


def replay_frames(record: dict[str, Any]) -> dict[str, Any]:
    """Per hand: the hands as dealt and after passing, the passes (who to, who received
    what), every trick with its winner and the
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
        received: list[list[str]] = [[] for _ in range(rules.players)]
        pass_to: list[int] | None = None
        if passes:
            offset = rules.pass_offset(hand.hand_number)
            pass_to = [(seat + offset) % rules.players for seat in range(rules.players)]
            for seat, cards in enumerate(passes):
                held[seat].subtract(cards)
                held[pass_to[seat]].update(cards)
                received[pass_to[seat]] = sorted(cards)
        taken = [0] * rules.players
        tricks = []
        for trick in hand.tricks:
            if trick.winner is not None:
                taken[trick.winner] += sum(values.get(card, 0) for _, card in trick.plays)
            tricks.append(
                {
                    "leader": trick.leader,
                    "plays": [list(p) for p in trick.plays],
                    "winner": trick.winner,
                    "taken": taken[:],
                }
            )
        totals = [t + s for t, s in zip(totals, hand.scores, strict=True)]
        hands_out.append(
            {
                "number": hand.hand_number,
                "void": hand.void,
                "dealt": [sorted(cards) for cards in deal],
                "hands": [sorted(c.elements()) for c in held],
                "passes": passes,
                "pass_to": pass_to,
                "received": received,
                "pass_direction": rules.pass_direction(hand.hand_number),
                "tricks": tricks,
                "points": list(hand.points),
                "scores": list(hand.scores),
                "shooter": hand.shooter,
                "totals": totals[:],
            }
        )
    return {
        "players": rules.players,
        "direction": rules.direction,
        "hands": hands_out,
        "winners": state.winners,
    }
