"""What a bot sees when asked to act: a frozen, typed ``View`` of its own seat.

Card lists are sorted card texts (``"2C"`` .. ``"TS"``). A view never contains another seat's
hidden cards: it is built from the engine's per-seat observation.

>>> from engine.rules import RuleSet
>>> from engine.state import GameState
>>> view = View.from_observation(GameState(RuleSet.from_preset("standard"), seed=1).observation(2))
>>> view.seat, view.decision, len(view.hand), view.legal == view.hand
(2, 'pass', 13, False)
>>> View.from_dict(view.to_dict()) == view
True
>>> view.pass_direction, view.pass_offset  # standard is clockwise: left is the next seat
('left', 1)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from engine.rules import RuleSet
from engine.state import Observation, Trick

# A match sends the same rules with every view: build each RuleSet (and its spec) once.
_SPECS: dict[RuleSet, Any] = {}
_RULES: dict[str, RuleSet] = {}


def _spec_of(rules: RuleSet) -> Any:
    spec = _SPECS.get(rules)
    if spec is None:
        spec = _SPECS[rules] = rules.to_spec()
    return spec


def _rules_of(spec: Any) -> RuleSet:
    key = json.dumps(spec, sort_keys=True)
    rules = _RULES.get(key)
    if rules is None:
        rules = _RULES[key] = RuleSet.from_spec(spec)
    return rules


#: The decision a view asks for, by engine phase.
DECISIONS = {
    "pass": "pass",
    "play": "play",
    "declare_trump": "trump",
    "moon_choice": "moon",
    "hand_over": "none",
    "game_over": "none",
}


@dataclass(frozen=True)
class View:
    """One seat's view of the game at a decision (or at the end of a hand or game)."""

    #: This bot's seat, 0..players-1 (seats play in increasing order).
    seat: int
    #: The rules of the match.
    rules: RuleSet
    #: The cards in this bot's hand, sorted.
    hand: list[str]
    #: The actions allowed now, sorted: cards to pass or play, suits, or ``add``/``subtract``.
    legal: list[str]
    #: ``pass``, ``play``, ``trump``, ``moon`` or ``none`` (end of hand / game).
    decision: str
    #: The trick so far: (seat, card) in play order.
    trick: list[tuple[int, str]]
    #: Every completed trick of this hand.
    tricks: list[Trick]
    #: Card points each seat has taken this hand (a hidden kitty not counted).
    points_taken: list[int]
    #: Game totals before this hand.
    totals: list[int]
    #: ``left``, ``right``, ``across`` or ``hold``, as the rules name it (which seat is on the
    #: left depends on ``rules.direction``).
    pass_direction: str
    #: Seats onward in play order the passed cards go: this bot's go to seat
    #: ``(seat + pass_offset) % players``; 0 on a hold hand.
    pass_offset: int
    #: The cards this bot passed, and those it received (after the exchange).
    passed: list[str]
    received: list[str]
    hearts_broken: bool
    #: Hokm: the trump suit (``C D H S``) once declared, and the hakem's seat.
    trump: str | None
    hakem: int | None
    #: Hand number, 0-based (a redealt hand keeps its number).
    hand_number: int
    #: Cards each seat still holds.
    cards_left: list[int]
    kitty_size: int = 0
    kitty_taker: int | None = None
    #: At the end of a hand: what it added to each total.
    scores: list[int] | None = None
    #: Seconds this bot may still think on this move (move limit plus what is left of its
    #: time bank); None when the match has no clock.
    time_left: float | None = None
    #: The seat that leads the current trick (None outside play).
    leader: int | None = None
    kitty: list[str] = field(default_factory=list)

    @property
    def players(self) -> int:
        """Number of seats."""
        return self.rules.players

    @property
    def led_suit(self) -> str | None:
        """The suit of the card that led the current trick."""
        return self.trick[0][1][1] if self.trick else None

    @classmethod
    def from_observation(cls, observation: Observation, time_left: float | None = None) -> View:
        """The view of an engine observation."""
        return cls(
            seat=observation.seat,
            rules=observation.rules,
            hand=observation.hand,
            legal=observation.legal,
            decision=DECISIONS[observation.phase],
            trick=observation.trick,
            tricks=observation.tricks,
            points_taken=observation.points_taken,
            totals=observation.totals,
            pass_direction=observation.pass_direction,
            pass_offset=observation.pass_offset,
            passed=observation.passed,
            received=observation.received,
            hearts_broken=observation.hearts_broken,
            trump=observation.trump,
            hakem=observation.hakem,
            hand_number=observation.hand_number,
            cards_left=observation.cards_left,
            kitty_size=observation.kitty_size,
            kitty_taker=observation.kitty_taker,
            scores=observation.scores,
            time_left=time_left,
            leader=observation.leader,
            kitty=observation.kitty,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form sent over the bot protocol (docs/protocol.md)."""
        return {
            "seat": self.seat,
            "rules": _spec_of(self.rules),
            "hand": self.hand,
            "legal": self.legal,
            "decision": self.decision,
            "trick": [list(play) for play in self.trick],
            "tricks": [
                {"leader": t.leader, "plays": [list(p) for p in t.plays], "winner": t.winner}
                for t in self.tricks
            ],
            "points_taken": self.points_taken,
            "totals": self.totals,
            "pass_direction": self.pass_direction,
            "pass_offset": self.pass_offset,
            "passed": self.passed,
            "received": self.received,
            "hearts_broken": self.hearts_broken,
            "trump": self.trump,
            "hakem": self.hakem,
            "hand_number": self.hand_number,
            "cards_left": self.cards_left,
            "kitty_size": self.kitty_size,
            "kitty_taker": self.kitty_taker,
            "scores": self.scores,
            "time_left": self.time_left,
            "leader": self.leader,
            "kitty": self.kitty,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> View:
        """A view from its JSON form (one without ``pass_offset``, from before it was sent,
        gets the offset its rules give the hand)."""
        rules = _rules_of(data["rules"])
        hand_number = data["hand_number"]
        pass_offset = data.get("pass_offset")
        if pass_offset is None:
            pass_offset = rules.pass_offset(hand_number) if rules.pass_count else 0
        return cls(
            seat=data["seat"],
            rules=rules,
            hand=list(data["hand"]),
            legal=list(data["legal"]),
            decision=data["decision"],
            trick=[(int(s), str(c)) for s, c in data["trick"]],
            tricks=[
                Trick(
                    leader=t["leader"],
                    plays=tuple((int(s), str(c)) for s, c in t["plays"]),
                    winner=t["winner"],
                )
                for t in data["tricks"]
            ],
            points_taken=list(data["points_taken"]),
            totals=list(data["totals"]),
            pass_direction=data["pass_direction"],
            pass_offset=pass_offset,
            passed=list(data["passed"]),
            received=list(data["received"]),
            hearts_broken=bool(data["hearts_broken"]),
            trump=data["trump"],
            hakem=data["hakem"],
            hand_number=hand_number,
            cards_left=list(data["cards_left"]),
            kitty_size=data.get("kitty_size", 0),
            kitty_taker=data.get("kitty_taker"),
            scores=data.get("scores"),
            time_left=data.get("time_left"),
            leader=data.get("leader"),
            kitty=list(data.get("kitty", [])),
        )
