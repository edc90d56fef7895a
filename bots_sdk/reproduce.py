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

import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from bots_sdk.bot import Bot
from bots_sdk.builtin import make_builtin
from bots_sdk.host import missing_methods
from bots_sdk.loader import BotLoadError, load_bot
from bots_sdk.protocol import DECISION_METHODS, PHASE_DECISIONS, as_sent, bot_seed
from bots_sdk.referee.participants import Participant
from bots_sdk.referee.players import Answer, Fault, InProcessPlayer, Player, ProcessPlayer
from bots_sdk.referee.runner import _validate
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
    #: The fault the record's seat made at this decision ('' where it made none).
    recorded_fault: str = ""

    def where(self) -> str:
        """The decision, as a person counts: ``hand 3, trick 1, seat 2 (play)``."""
        where = f"hand {self.hand + 1}"
        if self.trick is not None:
            where += f", trick {self.trick + 1}"
        return f"{where}, seat {self.seat + 1} ({self.decision})"

    def describe(self) -> str:
        what = {"pass": "passes", "play": "plays", "trump": "declares", "moon": "chooses"}
        if self.recorded_fault:
            held = f"the record's seat faulted here ({self.recorded_fault})"
        else:
            held = f"the record holds {_text(self.recorded)}"
        if self.fault:
            return f"{self.where()}: {held}; the bot now faults: {self.fault}"
        now = f"{what.get(self.decision, 'answers')} {_text(self.now)}"
        return f"{self.where()}: {held}; the bot now {now}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "decision": self.decision,
            "hand": self.hand,
            "trick": self.trick,
            "recorded": self.recorded,
            "now": self.now,
            "fault": self.fault,
            "recorded_fault": self.recorded_fault,
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
    #: The record's faults the bot made again, at the same decisions (its answers around
    #: them as recorded): the match is reproduced, faults and all.
    again: tuple[Difference, ...] = ()

    @property
    def faulted(self) -> bool:
        """Whether the bot is at fault in this reproduction: it faults again, or where it
        departs from the record it faults."""
        return bool(self.again) or (self.difference is not None and bool(self.difference.fault))

    def describe(self) -> str:
        if self.difference is not None:
            return (
                f"differs after {self.decisions} identical decisions: {self.difference.describe()}"
            )
        text = f"identical: {self.decisions} decisions"
        if self.again:
            first = self.again[0]
            more = f" (and {len(self.again) - 1} more)" if len(self.again) > 1 else ""
            text += f"; the bot faults again as in the match: {first.where()}: {first.fault}{more}"
        return f"{text} ({self.stopped})" if self.stopped else text

    def to_dict(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "decisions": self.decisions,
            "difference": None if self.difference is None else self.difference.to_dict(),
            "stopped": self.stopped,
            "again": [fault.to_dict() for fault in self.again],
        }


class BotRaised(Exception):
    """The bot, run in this process (``reproduce(..., here=True)``), raised at a decision:
    ``where`` is that decision (its ``fault`` the exception in one line), and the bot's own
    exception, its traceback intact for a debugger, is ``error`` (and this one's cause)."""

    def __init__(self, where: Difference, error: BaseException) -> None:
        super().__init__(where.describe())
        self.where = where
        self.error = error


class HerePlayer:
    """The bot's own class, run in this process with none of the referee's guards: what it
    raises reaches the caller with its traceback (``bidel reproduce --pdb`` stops in it).
    Each view reaches it as the sandboxed host would hand it over (through the protocol's
    JSON form), its answer goes back in the protocol's shape, and what it prints goes to
    stderr (stdout is the command's own answer). A Python bot only (a ``.py``, or a ``.zip``
    with ``bot.py``); :class:`bots_sdk.loader.BotLoadError` says why not."""

    def __init__(self, path: Path, unpack_to: Path) -> None:
        self.path = path
        self.unpack_to = unpack_to
        self.name = path.name
        self.dead: Fault | None = None
        self.bot: Bot | None = None

    def spawn(self, seat: int) -> None:
        pass

    def start(self, seat: int, rules_spec: Any, seed: int) -> Fault | None:
        with contextlib.redirect_stdout(sys.stderr):
            self.bot = load_bot(str(self.path), seed=seed, extract_to=self.unpack_to)
        missing = missing_methods(self.bot, rules_spec)
        if missing:
            return Fault("crash", "does not define a method these rules call", said=missing)
        return None

    def decide(self, decision: str, view: View, limit: float | None) -> Answer | Fault:
        assert self.bot is not None
        given = View.from_dict(json.loads(json.dumps(view.to_dict())))
        started = time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):
            action = getattr(self.bot, DECISION_METHODS[decision])(given)
        return Answer(as_sent(action), time.perf_counter() - started)

    def notify(self, kind: str, view: View) -> None:
        assert self.bot is not None
        given = View.from_dict(json.loads(json.dumps(view.to_dict())))
        with contextlib.redirect_stdout(sys.stderr):
            (self.bot.on_hand_end if kind == "hand_end" else self.bot.on_game_end)(given)

    def close(self) -> str:
        return ""


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


FaultKey = tuple[int, str, "int | None"]


def _faults_of(game: Mapping[str, Any], seat: int) -> tuple[dict[FaultKey, str], FaultKey | None]:
    """The record's faults of ``seat`` by decision, ``(hand, decision, play)`` (``play``: the
    plays of the hand before it, for a ``play``; None for the others), each as its owner reads
    it; and the decision after which the fallback played for the seat (None: its own answers
    stand to the end)."""
    seats = game.get("seats")
    if not isinstance(seats, list) or not 0 <= seat < len(seats):
        return {}, None
    entry = seats[seat]
    if not isinstance(entry, Mapping):
        return {}, None
    faults: dict[FaultKey, str] = {}
    last: FaultKey | None = None
    for fault in entry.get("faults") or []:
        if not isinstance(fault, Mapping):
            continue
        play = fault.get("play")
        key = (
            int(fault.get("hand") or 0),
            str(fault.get("decision") or ""),
            play if isinstance(play, int) else None,
        )
        said = fault.get("said") or fault.get("detail") or ""
        faults.setdefault(key, f"{fault.get('class')}: {said}")
        last = key
    return faults, (last if entry.get("replaced_by_fallback") else None)


def reproduce(
    record: Mapping[str, Any],
    *,
    seat: int,
    bot: str | Path | Participant,
    launcher: Launcher | None = None,
    sandbox: str | None = None,
    unsafe: bool = False,
    here: bool = False,
    on_decision: Callable[[int], None] | None = None,
) -> Reproduction:
    """Play ``record`` (a game, or the first game of a match record) again with ``bot`` at
    ``seat`` and every other seat's recorded moves; stop at the first decision the bot takes
    otherwise. Where the record's seat faulted, the bot is asked again: faulting the same way
    is the match reproduced (:attr:`Reproduction.again`), and after a fault that handed the
    seat to the fallback nothing more is asked. ``bot``: a built-in's name or a bot file; it
    runs in the sandbox as ``bidel play`` runs it (``launcher``, or ``sandbox`` /
    ``unsafe``), or, with ``here``, a Python bot in this process: what it raises is raised
    as :class:`BotRaised` (:class:`bots_sdk.loader.BotLoadError` for a bot it cannot load)."""
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
    with tempfile.TemporaryDirectory(prefix="bidel-here-") as unpacked:
        player: Player
        if participant.builtin:
            player = InProcessPlayer(make_builtin(participant.builtin, own_seed))
        elif here:
            player = HerePlayer(Path(participant.path), Path(unpacked))
        else:
            made = launcher or default_launcher(unsafe, None, sandbox)
            player = ProcessPlayer(Path(participant.path), made)
        return _again(game, rules, state, seat, own_seed, player, on_decision)


def _asked(player: Player, where: Difference, ask: Callable[[], Any]) -> Any:
    """``ask()`` of the bot; what a bot run here raises is :class:`BotRaised` at ``where``."""
    if not isinstance(player, HerePlayer):
        return ask()
    try:
        return ask()
    except BotLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 — the bot's own exception, handed on whole
        said = f"crash: {type(exc).__name__}: {exc}"
        raise BotRaised(replace(where, fault=said), exc) from exc


def _again(
    game: Mapping[str, Any],
    rules: RuleSet,
    state: GameState,
    seat: int,
    own_seed: int,
    player: Player,
    on_decision: Callable[[int], None] | None,
) -> Reproduction:
    hands = game["hands"]
    faults, stopped = _faults_of(game, seat)
    clock = iter(_offered(game, seat))  # the time_left each of its views showed, in order
    decisions = 0
    again: list[Difference] = []
    done = False  # (the fallback played for the seat from here)
    try:
        player.spawn(seat)
        started = Difference(seat, "start", 0, None, "a bot that starts", None)
        fault = _asked(player, started, partial(player.start, seat, rules.to_spec(), own_seed))
        if fault is not None:
            failed = replace(started, fault=fault.owner_text())
            return Reproduction(False, 0, failed, stderr=player.close())
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
                if current == seat and not done:
                    key = (number, decision, plays if decision == "play" else None)
                    trick = plays // rules.players if decision == "play" else None
                    was = faults.get(key, "")
                    here = Difference(seat, decision, number, trick, recorded, None, "", was)
                    offered = next(clock, None)
                    view = View.from_observation(state.observation(seat), offered)
                    limit = None if isinstance(player, HerePlayer) else patience(offered)
                    answer = _asked(player, here, partial(player.decide, decision, view, limit))
                    if isinstance(answer, Fault):
                        now = replace(here, fault=f"{answer.kind}: {answer.owner_text()}")
                        if not was:
                            return Reproduction(False, decisions, now, stderr=player.close())
                        again.append(now)
                    else:
                        assert isinstance(answer, Answer)
                        refused = _validate(state, decision, answer.action) if was else None
                        if refused is not None:  # illegal again, where it was
                            again.append(replace(here, fault=f"illegal: {refused.owner_text()}"))
                        elif was or not _same(decision, recorded, answer.action):
                            now = replace(here, now=answer.action)
                            return Reproduction(False, decisions, now, stderr=player.close())
                        else:
                            decisions += 1
                            if on_decision is not None:
                                on_decision(decisions)
                    done = key == stopped
                _apply(state, decision, recorded, current)
                if decision == "play":
                    plays += 1
            if state.phase is Phase.HAND_OVER and not done:  # (as the referee tells)
                view = View.from_observation(state.observation(seat))
                ended = Difference(seat, "hand_end", number, None, "", None)
                _asked(player, ended, partial(player.notify, "hand_end", view))
        if not done:
            view = View.from_observation(state.observation(seat))
            ended = Difference(seat, "game_end", len(hands) - 1, None, "", None)
            _asked(player, ended, partial(player.notify, "game_end", view))
    except (RecordError, BotRaised, BotLoadError):
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
    return Reproduction(True, decisions, None, note, stderr=player.close(), again=tuple(again))


#: Seconds a bot is waited for at one decision when its record shows no clock.
PATIENCE = 60.0


def patience(offered: float | None) -> float:
    """How long a bot run in its process is waited for at a decision where its view offered
    ``offered`` seconds: far longer than it had (a slower machine changes no answer), yet a
    bot that never answered in the match (a loop that timed out) is stopped, its timeout
    fault made again, instead of the reproduction waiting on it.

    >>> patience(1.5), patience(None)
    (5.0, 60.0)
    """
    return PATIENCE if offered is None else 2 * max(offered, 0.0) + 2.0


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
