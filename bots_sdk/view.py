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
from collections.abc import Callable
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from bots_sdk.protocol import PHASE_DECISIONS
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


@dataclass(frozen=True, kw_only=True)
class View(Observation):
    """One seat's view of the game at a decision (or at the end of a hand or game): the
    engine's :class:`~engine.state.Observation` of the seat (every field of it, documented
    there), the decision asked for and the clock."""

    #: ``pass``, ``play``, ``trump``, ``moon`` or ``none`` (end of hand / game).
    decision: str
    #: Seconds this bot may still think on this move (move limit plus what is left of its
    #: time bank); None when the match has no clock.
    time_left: float | None = None

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
        """The view of an engine observation: its fields, the decision its phase asks for,
        and the clock."""
        return cls(
            *_observed(observation),
            decision=PHASE_DECISIONS[observation.phase],
            time_left=time_left,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (_observed(self), self.decision, self.time_left))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form sent over the bot protocol (docs/protocol.md): every field, by name."""
        data = dict(zip(_OBSERVED, _observed(self), strict=True))
        for name, encode in _TO_JSON:
            data[name] = encode(data[name])
        data["decision"] = self.decision
        data["time_left"] = self.time_left
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> View:
        """A view from its JSON form. A field with a default may be missing; one without
        ``pass_offset``, from before it was sent, gets the offset its rules give the hand."""
        values = {
            name: decode(data[name]) if decode else data[name]
            for name, _encode, decode in _CODECS
            if name in data
        }
        if "pass_offset" not in values:
            rules, hand = values["rules"], values["hand_number"]
            values["pass_offset"] = rules.pass_offset(hand) if rules.pass_count else 0
        if "phase" not in values:  # (a view from an older referee: only the decision)
            values["phase"] = _PHASES.get(values["decision"], "game_over")
        if "current_seat" not in values:
            values["current_seat"] = values["seat"] if values["legal"] else None
        return cls(**values)


def _trick_to_json(trick: list[tuple[int, str]]) -> list[list[Any]]:
    return [list(play) for play in trick]


def _trick_from_json(trick: Any) -> list[tuple[int, str]]:
    return [(int(seat), str(card)) for seat, card in trick]


def _tricks_to_json(tricks: list[Trick]) -> list[dict[str, Any]]:
    return [
        {"leader": t.leader, "plays": _trick_to_json(list(t.plays)), "winner": t.winner}
        for t in tricks
    ]


def _tricks_from_json(tricks: Any) -> list[Trick]:
    return [
        Trick(leader=t["leader"], plays=tuple(_trick_from_json(t["plays"])), winner=t["winner"])
        for t in tricks
    ]


#: How a field differs in JSON (the others are JSON already): (to JSON, from JSON).
_JSON_FORMS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "rules": (_spec_of, _rules_of),
    "trick": (_trick_to_json, _trick_from_json),
    "tricks": (_tricks_to_json, _tricks_from_json),
    "hand": (list, list),
    "legal": (list, list),
    "points_taken": (list, list),
    "totals": (list, list),
    "passed": (list, list),
    "received": (list, list),
    "cards_left": (list, list),
    "kitty": (list, list),
}
#: Per field of :class:`View`, in order: its name and its JSON conversions (None: as it is).
_CODECS: list[tuple[str, Callable[[Any], Any] | None, Callable[[Any], Any] | None]] = [
    (f.name, *(_JSON_FORMS.get(f.name) or (None, None))) for f in fields(View)
]
#: The conversions to JSON of the fields that need one (the lists are JSON as they are).
_TO_JSON = [(name, forms[0]) for name, forms in _JSON_FORMS.items() if forms[0] is not list]
#: The observation's fields, in order, and a reader of their values (as one tuple).
_OBSERVED = tuple(f.name for f in fields(Observation))
_observed: Callable[[Observation], tuple[Any, ...]] = attrgetter(*_OBSERVED)
#: The phase a decision is asked in (for a view sent without its phase).
_PHASES = {decision: phase for phase, decision in PHASE_DECISIONS.items() if decision != "none"}


def _rebuild(observed: tuple[Any, ...], decision: str, time_left: float | None) -> View:
    return View(*observed, decision=decision, time_left=time_left)
