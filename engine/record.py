"""The game record: the JSON form of a whole game, and the referee that checks one.

A record is ``{"rules": ..., "seed": ..., "hands": [...]}``; each hand has ``deal`` (cards of
seat 0..n-1 before passing; absent: dealt from the seed), ``kitty`` (when cards are set aside),
``trump`` (Hokm), ``passes`` (cards each seat gave away; absent on a hold hand), ``plays``
(every card in order) and ``moon`` (the shooter's choice, when the rules let him choose).
``void: true`` marks a hand abandoned for a redeal. Unknown fields are ignored.

:func:`verify` replays a record through the engine and returns one JSON-ready result:

>>> hold = {"preset": "standard", "pass_cycle": ["hold"]}
>>> result = verify({"rules": hold, "seed": 1, "hands": [{"plays": ["AS"]}]})
>>> result["valid"], result["hand"], result["stage"], result["index"], result["seat"]
(False, 0, 'play', 0, 0)
>>> result["error"]
'seat 0 must lead 2C to the first trick'
>>> verify({"rules": hold, "seed": 1, "hands": [{"plays": ["2C"]}]})["hands"]
[{'points': [0, 0, 0, 0], 'scores': [0, 0, 0, 0], 'complete': False}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.rules import RulesError, RuleSet
from engine.state import DealError, GameState, IllegalMoveError, Phase


class _Invalid(ValueError):
    def __init__(
        self,
        stage: str,
        error: str,
        *,
        hand: int | None = None,
        index: int | None = None,
        seat: int | None = None,
    ) -> None:
        super().__init__(error)
        self.result = {
            "valid": False,
            "hand": hand,
            "stage": stage,
            "index": index,
            "seat": seat,
            "error": error,
        }


def invalid(stage: str, error: str, **where: int | None) -> dict[str, Any]:
    """The result shape of an invalid record (also for unreadable input).

    >>> invalid("json", "not valid JSON")["stage"]
    'json'
    """
    return _Invalid(stage, error, **where).result


def replay(record: Any) -> GameState:
    """The state reached by a record; raises ``ValueError`` (with the verify message) if invalid.

    >>> state = replay({"rules": "standard", "seed": 5, "hands": []})
    >>> state.phase.value, state.hand_number
    ('pass', 0)
    """
    state, _ = _replay(record)
    return state


def verify(record: Any) -> dict[str, Any]:
    """Referee ``record``: its per-hand points and scores, totals and winners, or the first
    rule it breaks (hand, stage, index within that stage, seat, and the rule).

    >>> verify({"rules": "standard", "hands": []})["error"]
    'the record has no hands and no seed to deal from'
    """
    try:
        state, hands = _replay(record)
    except _Invalid as exc:
        return exc.result
    return {
        "valid": True,
        "hands": hands,
        "totals": list(state.totals),
        "game_over": state.is_game_over,
        "winners": list(state.winners),
        "ended_at_hand_cap": state.ended_at_hand_cap,
    }


def _replay(record: Any) -> tuple[GameState, list[dict[str, Any]]]:
    if not isinstance(record, Mapping):
        raise _Invalid("record", "a game record is a JSON object with 'rules' and 'hands'")
    try:
        rules = RuleSet.from_spec(record.get("rules", "standard"))
    except (RulesError, TypeError) as exc:
        raise _Invalid("rules", str(exc)) from None
    seed = record.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise _Invalid("record", f"'seed' must be an integer, not {seed!r}")
    hands = record.get("hands")
    if not isinstance(hands, list):
        raise _Invalid("record", "'hands' must be a list of hands")

    state: GameState | None = None
    results: list[dict[str, Any]] = []
    for number, hand in enumerate(hands):
        if not isinstance(hand, Mapping):
            raise _Invalid("record", f"hand {number} must be an object", hand=number)
        if state is not None:
            if state.phase is Phase.GAME_OVER:
                raise _Invalid(
                    "record",
                    f"the game was over after hand {number - 1}; hand {number} should not exist",
                    hand=number,
                )
            if state.phase is not Phase.HAND_OVER:
                raise _Invalid(
                    "record",
                    f"hand {number - 1} is not finished but the record goes on",
                    hand=number - 1,
                )
        deal, kitty = hand.get("deal"), hand.get("kitty")
        try:
            if state is None:
                state = GameState(rules, seed, deal=deal, kitty=kitty)
            else:
                state.next_hand(deal, kitty)
        except DealError as exc:
            raise _Invalid("deal", str(exc), hand=number, index=exc.seat, seat=exc.seat) from None
        _replay_hand(state, number, hand)
        results.append(_hand_result(state))
    if state is None:
        if seed is None:
            raise _Invalid("record", "the record has no hands and no seed to deal from")
        state = GameState(rules, seed)
    return state, results


def _replay_hand(state: GameState, number: int, hand: Mapping[str, Any]) -> None:
    rules = state.rules
    # Trump
    trump = hand.get("trump")
    if state.phase is Phase.DECLARE_TRUMP:
        if trump is None:
            if _empty(hand.get("passes")) and _empty(hand.get("plays")):
                return  # the record stops before the hakem declared
            raise _Invalid(
                "trump", f"hand {number} needs the hakem's 'trump'", hand=number, seat=state.current
            )
        seat = state.current
        try:
            state.apply(trump)
        except IllegalMoveError as exc:
            raise _Invalid("trump", str(exc), hand=number, index=0, seat=seat) from None
    elif trump is not None:
        raise _Invalid("trump", f"hand {number}: these rules declare no trump", hand=number)

    # Passes
    passes = hand.get("passes")
    if state.phase is Phase.PASS:
        direction = _pass_named(rules, state.hand_number)
        if _empty(passes):
            if _empty(hand.get("plays")):
                return
            raise _Invalid(
                "pass", f"hand {number} passes {direction}: 'passes' is missing", hand=number
            )
        # A record may stop in the middle of passing (a game in progress); once it has
        # plays, every seat's passes must be complete.
        complete = not _empty(hand.get("plays"))
        if (
            not isinstance(passes, list)
            or len(passes) > rules.players
            or (complete and len(passes) != rules.players)
        ):
            raise _Invalid(
                "pass",
                f"hand {number} passes {direction}: list the cards of {rules.players} seats",
                hand=number,
            )
        for seat, cards in enumerate(passes):
            if not isinstance(cards, list):
                raise _Invalid(
                    "pass", f"seat {seat}'s passes must be a list of cards", hand=number, seat=seat
                )
            partial = len(cards) < rules.pass_count and not complete and seat == len(passes) - 1
            if len(cards) != rules.pass_count and not partial:
                raise _Invalid(
                    "pass",
                    f"seat {seat} must pass {rules.pass_count} cards, not {len(cards)}",
                    hand=number,
                    index=min(len(cards), rules.pass_count),
                    seat=seat,
                )
            for index, card in enumerate(cards):
                try:
                    state.apply(card, seat=seat)
                except IllegalMoveError as exc:
                    raise _Invalid("pass", str(exc), hand=number, index=index, seat=seat) from None
        if state.phase is Phase.PASS:
            return  # the record stops during passing
    elif not _empty(passes):
        raise _Invalid("pass", f"hand {number} is a hold hand: nobody passes", hand=number)

    # Plays
    plays = hand.get("plays", [])
    if not isinstance(plays, list):
        raise _Invalid("play", f"hand {number}: 'plays' must be a list of cards", hand=number)
    for index, card in enumerate(plays):
        if state.phase is not Phase.PLAY:
            raise _Invalid("play", _why_no_play(state, number), hand=number, index=index)
        seat = state.current
        try:
            state.apply(card)
        except IllegalMoveError as exc:
            raise _Invalid("play", str(exc), hand=number, index=index, seat=seat) from None

    # The moon choice
    moon = hand.get("moon")
    if state.phase is Phase.MOON_CHOICE:
        if moon is not None:
            seat = state.current
            try:
                state.apply(moon)
            except IllegalMoveError as exc:
                raise _Invalid("moon", str(exc), hand=number, index=0, seat=seat) from None
    elif moon is not None:
        raise _Invalid("moon", f"hand {number}: nobody has a moon choice to make", hand=number)

    void = hand.get("void", False)
    if void and not (state.history and state.history[-1].void and state.phase is Phase.HAND_OVER):
        raise _Invalid(
            "play", f"hand {number} is marked void but its deal was playable", hand=number
        )


def _pass_named(rules: RuleSet, hand_number: int) -> str:
    """The pass as the rules name it and where it goes in play order ("right (to the next
    seat)"): which side is which depends on the rules' direction."""
    named = rules.pass_direction(hand_number)
    offset = rules.pass_offset(hand_number)
    if named in ("left", "right"):
        return f"{named} (to the {'next' if offset == 1 else 'previous'} seat)"
    return named


def _why_no_play(state: GameState, number: int) -> str:
    if state.phase is Phase.HAND_OVER and state.history[-1].void:
        return (
            f"hand {number} is void: the leader holds only hearts before they are broken (redeal)"
        )
    if state.phase is Phase.MOON_CHOICE:
        return f"hand {number} is over: seat {state.current} must choose the moon first"
    return f"hand {number} is over: every card has been played"


def _empty(value: Any) -> bool:
    return (
        value is None
        or value == []
        or (isinstance(value, list) and all(isinstance(v, list) and not v for v in value))
    )


def _hand_result(state: GameState) -> dict[str, Any]:
    if state.phase in (Phase.HAND_OVER, Phase.GAME_OVER):
        last = state.history[-1]
        result: dict[str, Any] = {"points": list(last.points), "scores": list(last.scores)}
        if last.void:
            result["void"] = True
        if last.shooter is not None:
            result["shooter"] = last.shooter
        if last.kitty_taker is not None:
            result["kitty_taker"] = last.kitty_taker
        return result
    return {"points": state.points_taken(), "scores": [0] * state.n, "complete": False}
