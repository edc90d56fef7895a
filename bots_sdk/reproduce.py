"""A recorded game played again around one seat: the author's debugger.

Every seat but one replays the moves its record holds; the one seat runs a bot (the code
that played, or a changed one) given the very views and seed it had, and each of its answers
is held against the record. A game is a pure function of its rules, seed and decisions, so
the same code answers the same everywhere: ``identical`` until the first decision where the
bot now departs, which :func:`reproduce` names (hand, trick, what the record holds, what the
bot now plays).

>>> from bots_sdk.referee.runner import run_match
>>> game = run_match("standard", 3, ["low", "random", "heuristic", "low"], hands=1).games[0]
>>> reproduce(game.to_dict(), seat=2, bot="heuristic").identical
True
>>> moved = reproduce(game.to_dict(), seat=0, bot="random")
>>> moved.identical, moved.difference.seat
(False, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots_sdk.builtin import make_builtin
from bots_sdk.protocol import PHASE_DECISIONS, bot_seed
from bots_sdk.referee.participants import Participant
from bots_sdk.referee.players import Answer, Fault, InProcessPlayer, Player, ProcessPlayer
from bots_sdk.sandbox import Launcher, default_launcher
from bots_sdk.view import View
from engine.rules import RuleSet
from engine.state import GameState, Phase


class RecordError(ValueError):
    """The record cannot be played again (not a game record, or one the engine refuses)."""


@dataclass(frozen=True)
class Difference:
    """The first decision the bot now takes otherwise. ``hand``, ``trick`` and ``seat``
    count from 0 as in the record; :meth:`describe` says them from 1, for a person."""

    seat: int
    decision: str
    hand: int
    trick: int | None
    recorded: Any
    now: Any
    fault: str = ""

    def describe(self) -> str:
        where = f"hand {self.hand + 1}"
        if self.trick is not None:
            where += f", trick {self.trick + 1}"
        what = {"pass": "passes", "play": "plays", "trump": "declares", "moon": "chooses"}
        recorded = _text(self.recorded)
        if self.fault:
            return (
                f"{where}, seat {self.seat + 1} ({self.decision}): the record holds {recorded}; "
                f"the bot now faults: {self.fault}"
            )
        return (
            f"{where}, seat {self.seat + 1} ({self.decision}): the record holds {recorded}; "
            f"the bot now {what.get(self.decision, 'answers')} {_text(self.now)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "decision": self.decision,
            "hand": self.hand,
            "trick": self.trick,
            "recorded": self.recorded,
            "now": self.now,
            "fault": self.fault,
        }


@dataclass(frozen=True)
class Reproduction:
    """What playing the record again gave: ``decisions`` the bot answered as recorded
    (before the difference, if any). ``stopped``: where the record's seat stopped deciding
    (a fault handed it to the fallback), so the decisions after it were not the bot's."""

    identical: bool
    decisions: int
    difference: Difference | None = None
    stopped: str = ""
    stderr: str = ""

    def describe(self) -> str:
        if self.difference is not None:
            return (
                f"differs after {self.decisions} identical decisions: {self.difference.describe()}"
            )
        text = f"identical: {self.decisions} decisions"
        return f"{text} ({self.stopped})" if self.stopped else text

    def to_dict(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "decisions": self.decisions,
            "difference": None if self.difference is None else self.difference.to_dict(),
            "stopped": self.stopped,
        }


def _text(action: Any) -> str:
    if isinstance(action, list):
        return " ".join(str(card) for card in action) or "nothing"
    return str(action)


def _same(decision: str, recorded: Any, now: Any) -> bool:
    """A pass is the set of cards given (the order they were listed in changes nothing)."""
    if decision == "pass" and isinstance(now, list) and isinstance(recorded, list):
        return sorted(map(str, now)) == sorted(map(str, recorded))
    return bool(now == recorded)


def game_of(record: Mapping[str, Any], game: int = 0) -> Mapping[str, Any]:
    """The game record in ``record``: a game itself, or game ``game`` (from 0) of a match
    record as ``bidel play --record`` and ``bidel fetch`` write."""
    if isinstance(record.get("games"), list):
        games = record["games"]
        if not 0 <= game < len(games):
            raise RecordError(f"the match record has {len(games)} game(s); no game {game + 1}")
        record = games[game]
    if not isinstance(record, Mapping) or not isinstance(record.get("hands"), list):
        raise RecordError("not a game record: it has no 'hands'")
    return record


def _stopped_at(game: Mapping[str, Any], seat: int) -> tuple[int, int | None] | None:
    """Where the record's seat was handed to the fallback: (hand, play) of the fault that
    did it, or None when its own answers stand to the end."""
    seats = game.get("seats")
    if not isinstance(seats, list) or not 0 <= seat < len(seats):
        return None
    entry = seats[seat]
    if not isinstance(entry, Mapping) or not entry.get("replaced_by_fallback"):
        return None
    faults = [f for f in entry.get("faults") or [] if isinstance(f, Mapping)]
    if not faults:
        return None
    last = faults[-1]
    return int(last.get("hand") or 0), last.get("play")


def reproduce(
    record: Mapping[str, Any],
    *,
    seat: int,
    bot: str | Path | Participant,
    launcher: Launcher | None = None,
    sandbox: str | None = None,
    unsafe: bool = False,
    on_decision: Callable[[int], None] | None = None,
) -> Reproduction:
    """Play ``record`` (a game, or the first game of a match record) again with ``bot`` at
    ``seat`` and every other seat's recorded moves; stop at the first decision the bot takes
    otherwise. ``bot``: a built-in's name or a bot file; it runs in the sandbox as ``bidel
    play`` runs it (``launcher``, or ``sandbox`` / ``unsafe``)."""
    game = game_of(record)
    try:
        rules = RuleSet.from_spec(game.get("rules", "standard"))
        seed = game["seed"]
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise RecordError("the record's 'seed' is not an integer")
        hands = game["hands"]
        first = hands[0] if hands else {}
        state = GameState(rules, seed, deal=first.get("deal"), kitty=first.get("kitty"))
    except RecordError:
        raise
    except (KeyError, ValueError, TypeError) as exc:
        raise RecordError(f"the record cannot be played again: {exc}") from None
    if not 0 <= seat < rules.players:
        raise RecordError(f"these rules seat {rules.players}; there is no seat {seat + 1}")
    rotation = int(game.get("rotation") or 0)
    participant = Participant.parse(str(bot) if isinstance(bot, Path) else bot)
    own_seed = bot_seed(seed, rotation, seat)
    player: Player
    if participant.builtin:
        player = InProcessPlayer(make_builtin(participant.builtin, own_seed))
    else:
        made = launcher or default_launcher(unsafe, None, sandbox)
        player = ProcessPlayer(Path(participant.path), made)
    stopped = _stopped_at(game, seat)
    clock = iter(_offered(game, seat))  # the time_left each of its views showed, in order
    decisions = 0
    try:
        player.spawn(seat)
        fault = player.start(seat, rules.to_spec(), own_seed)
        if fault is not None:
            return Reproduction(
                False,
                0,
                Difference(seat, "start", 0, None, "a bot that starts", None, fault.owner_text()),
                stderr=player.close(),
            )
        for number, hand in enumerate(hands):
            if number > 0:
                state.next_hand(hand.get("deal"), hand.get("kitty"))
            plays = 0
            while state.phase not in (Phase.HAND_OVER, Phase.GAME_OVER):
                decision = PHASE_DECISIONS[state.phase.value]
                current = state.current
                recorded = _recorded(hand, decision, current, plays)
                if recorded is None:
                    raise RecordError(
                        f"hand {number + 1}: the record holds no {decision} for seat {current + 1}"
                    )
                if current == seat and (
                    stopped is None or (number, plays) < (stopped[0], stopped[1] or 0)
                ):
                    trick = plays // rules.players if decision == "play" else None
                    view = View.from_observation(state.observation(seat), next(clock, None))
                    answer = player.decide(decision, view, None)
                    if isinstance(answer, Fault):
                        difference = Difference(
                            seat,
                            decision,
                            number,
                            trick,
                            recorded,
                            None,
                            f"{answer.kind}: {answer.owner_text()}",
                        )
                        return Reproduction(False, decisions, difference, stderr=player.close())
                    assert isinstance(answer, Answer)
                    if not _same(decision, recorded, answer.action):
                        difference = Difference(
                            seat, decision, number, trick, recorded, answer.action
                        )
                        return Reproduction(False, decisions, difference, stderr=player.close())
                    decisions += 1
                    if on_decision is not None:
                        on_decision(decisions)
                _apply(state, decision, recorded, current)
                if decision == "play":
                    plays += 1
            if state.phase is Phase.HAND_OVER:  # (as the referee tells: a game's end alone)
                player.notify("hand_end", View.from_observation(state.observation(seat)))
        player.notify("game_end", View.from_observation(state.observation(seat)))
    except RecordError:
        player.close()
        raise
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        player.close()
        raise RecordError(f"the record cannot be played again: {exc}") from None
    note = ""
    if stopped is not None:
        note = (
            f"the record's seat was replaced by the fallback in hand {stopped[0] + 1}: "
            "its moves after that were not the bot's"
        )
    return Reproduction(True, decisions, None, note, stderr=player.close())


def _offered(game: Mapping[str, Any], seat: int) -> list[float | None]:
    """The clock (seconds) the seat's view offered at each of its decisions, from its
    timeline (``offered_ms``); [] for a record without one (the views then show none)."""
    seats = game.get("seats")
    entry = seats[seat] if isinstance(seats, list) and seat < len(seats) else None
    steps = entry.get("decisions") if isinstance(entry, Mapping) else None
    if not isinstance(steps, list):
        return []
    offered = [s.get("offered_ms") if isinstance(s, Mapping) else None for s in steps]
    return [ms / 1000 if isinstance(ms, (int, float)) else None for ms in offered]


def _recorded(hand: Mapping[str, Any], decision: str, seat: int, plays: int) -> Any:
    """The record's answer to ``decision`` of ``seat`` in ``hand`` (None: it has none)."""
    if decision == "pass":
        passes = hand.get("passes") or []
        return list(passes[seat]) if seat < len(passes) else None
    if decision == "play":
        cards = hand.get("plays") or []
        return cards[plays] if plays < len(cards) else None
    return hand.get({"trump": "trump", "moon": "moon"}.get(decision, decision))


def _apply(state: GameState, decision: str, action: Any, seat: int) -> None:
    if decision == "pass":
        for card in action:
            state.apply(card, seat=seat)
    else:
        state.apply(action)
