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
    taken = [0] * rules.players
    done = [_trick_out(trick.leader, trick.plays, trick.winner, values, taken) for trick in tricks]
    return _frame(_hand_base(rules, hand_number, entry), done, current, taken, entry, result)


def _hand_base(rules: RuleSet, hand_number: int, entry: dict[str, Any]) -> dict[str, Any]:
    """What a hand's frames share once its passes are known: the deal, the hands after
    passing, the passes."""
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
    return {
        "number": hand_number,
        "void": False,
        "dealt": [sorted(cards) for cards in deal],
        "hands": [sorted(c.elements()) for c in held],
        "passes": passes,
        "pass_to": pass_to,
        "received": received,
        "pass_direction": rules.pass_direction(hand_number),
    }


def _trick_out(
    leader: int,
    plays: Sequence[tuple[int, str]],
    winner: int | None,
    values: dict[str, int],
    taken: list[int],
) -> dict[str, Any]:
    """A completed trick's part of a frame; adds its points to ``taken`` (the hand's so far)."""
    if winner is not None:
        taken[winner] += sum(values.get(card, 0) for _, card in plays)
    return {
        "leader": leader,
        "plays": [list(p) for p in plays],
        "winner": winner,
        "taken": taken[:],
    }


def _frame(
    base: dict[str, Any],
    done: list[dict[str, Any]],
    current: tuple[int, Sequence[tuple[int, str]]] | None,
    taken: list[int],
    entry: dict[str, Any],
    result: dict[str, Any] | None,
) -> dict[str, Any]:
    tricks_out = done
    if current is not None and current[1]:
        leader, plays = current
        tricks_out = [
            *done,
            {
                "leader": leader,
                "plays": [list(p) for p in plays],
                "winner": None,
                "taken": taken[:],
                "open": True,
            },
        ]
    frame = {**base, "tricks": tricks_out, "trump": entry.get("trump"), "over": result is not None}
    frame |= result or {"points": None, "scores": None, "shooter": None, "totals": None}
    return frame


def live_frame(state: GameState) -> tuple[int, dict[str, Any]]:
    """The index (in the game) and frame of the hand in progress, or of the hand just over."""
    return LiveFrames()(state)


class LiveFrames:
    """:func:`live_frame` for the successive states of one game, each frame built from what
    the hand's earlier ones already worked out (the hands after passing, the tricks played
    out): a live feed asks for one after every decision. The frames share those parts:
    read them, never change them."""

    def __init__(self) -> None:
        self._values: dict[str, int] | None = None
        self._key: tuple[Any, ...] | None = None
        self._base: dict[str, Any] = {}
        self._done: list[dict[str, Any]] = []
        self._taken: list[int] = []

    def __call__(self, state: GameState) -> tuple[int, dict[str, Any]]:
        rules = state.rules
        if self._values is None:
            self._values = point_values(rules)
        values = self._values
        if state.phase is Phase.HAND_OVER or state.phase is Phase.GAME_OVER:
            return _finished_frame(state, values)
        entry = state.current_hand_json()
        assert entry is not None  # a hand is in progress
        passes = entry.get("passes")
        key = (
            len(state.history),  # (a hand played again after a void one is a new hand)
            state.hand_number,
            entry["deal"],
            passes if passes is not None and len(passes) >= rules.players else None,
        )
        if key != self._key:
            self._key = key
            self._base = _hand_base(rules, state.hand_number, entry)
            self._done, self._taken = [], [0] * rules.players
        for trick in state.completed_tricks(len(self._done)):
            self._done.append(
                _trick_out(trick.leader, trick.plays, trick.winner, values, self._taken)
            )
        plays = state.open_trick()
        current = (plays[0][0], plays) if plays else None
        frame = _frame(self._base, self._done[:], current, self._taken, entry, None)
        frame["totals_before"] = list(state.totals)
        return len(state.history), frame


def _finished_frame(state: GameState, values: dict[str, int]) -> tuple[int, dict[str, Any]]:
    if not state.history:
        raise ValueError("no hand has been played")
    last = state.history[-1]
    result = {
        "points": list(last.points),
        "scores": list(last.scores),
        "shooter": last.shooter,
        "totals": list(state.totals),
    }
    frame = hand_frame(state.rules, last.hand_number, last.to_json(), last.tricks, values, result)
    frame["void"] = last.void
    return len(state.history) - 1, frame


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
