"""What the replay viewer draws, computed by the engine (the page's JavaScript only draws it; it
never re-implements a rule): a finished game's frames from its record, and, while a match is
played, the frame of the hand in progress after every decision.

A hand's frame: the hands as dealt and after passing, the passes (who to, who received what),
every trick with its leader, plays, winner and the points taken so far, and once the hand is
over its points, scores, shooter and the running totals. A bystander's frame
(:func:`bystander_frame`) keeps only what someone watching the table sees: the cards played,
tricks, points and how many cards each seat holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from engine.record import replay
from engine.rules import RuleSet
from engine.state import GameState, Phase, Trick


def replay_frames(record: dict[str, Any]) -> dict[str, Any]:
    """Every hand's frame of a game record, with the table's shape and the winners."""
    state = replay(record)
    rules = RuleSet.from_spec(record["rules"])
    values = point_values(rules)
    hands_out = []
    totals = [0] * rules.players
    for number, hand in enumerate(state.history):
        totals = [t + s for t, s in zip(totals, hand.scores, strict=True)]
        result = {
            "points": list(hand.points),
            "scores": list(hand.scores),
            "shooter": hand.shooter,
            "totals": totals[:],
        }
        frame = hand_frame(
            rules, hand.hand_number, record["hands"][number], hand.tricks, values, result
        )
        frame["void"] = hand.void
        hands_out.append(frame)
    return {**table_shape(rules), "hands": hands_out, "winners": state.winners}


def table_shape(rules: RuleSet) -> dict[str, Any]:
    return {"players": rules.players, "direction": rules.direction}


def point_values(rules: RuleSet) -> dict[str, int]:
    values = {f"{r}H": v for r, v in zip("23456789TJQKA", rules.heart_points, strict=True)}
    values["QS"] = rules.queen_points
    return values


def hand_frame(
    rules: RuleSet,
    hand_number: int,
    entry: dict[str, Any],
    tricks: Sequence[Trick],
    values: dict[str, int],
    result: dict[str, Any] | None,
    current: tuple[int, Sequence[tuple[int, str]]] | None = None,
) -> dict[str, Any]:
    """One hand's frame from its record entry and its tricks; ``result`` once it is over;
    ``current`` (leader, plays) is a trick still being played."""
    n = rules.players
    deal = entry.get("deal") or [[] for _ in range(n)]
    held = [Counter(cards) for cards in deal]
    passes = entry.get("passes")
    if passes is not None and len(passes) < n:
        passes = None  # still choosing: nothing has changed hands yet
    received: list[list[str]] = [[] for _ in range(n)]
    pass_to: list[int] | None = None
    if passes:
        offset = rules.pass_offset(hand_number)
        pass_to = [(seat + offset) % n for seat in range(n)]
        for seat, cards in enumerate(passes):
            held[seat].subtract(cards)
            held[pass_to[seat]].update(cards)
            received[pass_to[seat]] = sorted(cards)
    taken = [0] * n
    tricks_out = []
    for trick in tricks:
        if trick.winner is not None:
            taken[trick.winner] += sum(values.get(card, 0) for _, card in trick.plays)
        tricks_out.append(
            {
                "leader": trick.leader,
                "plays": [list(p) for p in trick.plays],
                "winner": trick.winner,
                "taken": taken[:],
            }
        )
    if current is not None and current[1]:
        leader, plays = current
        tricks_out.append(
            {
                "leader": leader,
                "plays": [list(p) for p in plays],
                "winner": None,
                "taken": taken[:],
                "open": True,
            }
        )
    frame: dict[str, Any] = {
        "number": hand_number,
        "void": False,
        "dealt": [sorted(cards) for cards in deal],
        "hands": [sorted(c.elements()) for c in held],
        "passes": passes,
        "pass_to": pass_to,
        "received": received,
        "pass_direction": rules.pass_direction(hand_number),
        "tricks": tricks_out,
        "trump": entry.get("trump"),
        "over": result is not None,
    }
    frame |= result or {"points": None, "scores": None, "shooter": None, "totals": None}
    return frame


def live_frame(state: GameState) -> tuple[int, dict[str, Any]]:
    """The index (in the game) and frame of the hand in progress, or of the hand just over."""
    rules = state.rules
    values = point_values(rules)
    if state.phase is Phase.HAND_OVER or state.phase is Phase.GAME_OVER:
        if not state.history:
            raise ValueError("no hand has been played")
        last = state.history[-1]
        result = {
            "points": list(last.points),
            "scores": list(last.scores),
            "shooter": last.shooter,
            "totals": list(state.totals),
        }
        frame = hand_frame(rules, last.hand_number, last.to_json(), last.tricks, values, result)
        frame["void"] = last.void
        return len(state.history) - 1, frame
    entry = state.current_hand_json()
    assert entry is not None  # a hand is in progress
    seen = state.observation(state.current)
    frame = hand_frame(
        rules,
        state.hand_number,
        entry,
        seen.tricks,
        values,
        None,
        current=(seen.leader if seen.leader is not None else state.current, seen.trick),
    )
    frame["totals_before"] = list(state.totals)
    return len(state.history), frame


def bystander_frame(frame: dict[str, Any]) -> dict[str, Any]:
    """What a bystander sees of ``frame``: the cards played and what follows from them, how many
    cards each seat holds, never a card still in a hand or a pass (those stay private until the
    game ends)."""
    plays = [play for trick in frame["tricks"] for play in trick["plays"]]
    counts = [len(cards) for cards in frame["hands"]]
    for seat, _ in plays:
        counts[seat] -= 1
    return {
        **frame,
        "dealt": None,
        "hands": None,
        "passes": None,
        "received": None,
        "held": counts,  # cards still in each hand, after the plays shown
        "hidden": True,
    }
