"""The match runner, shared by the SDK's CLI and the platform's workers (no Django).

``run_match`` plays one match — a game to the target score, a number of games, or a fixed
number of hands; in ``duplicate`` format every game is replayed with the seats rotated through
every position on the same deals — and returns the game records extended with per-move times,
per-seat faults and captured stderr.

Faults never stop a match: the decision is made by the fallback (the lowest legal card; for a
pass, the lowest cards), and after a crash or three faults the seat is played by the fallback
for the rest of the match.

>>> result = run_match("standard", seed=1, bots=["low", "random", "low", "random"], hands=1)
>>> len(result.games), result.games[0].record["hands"][0]["plays"][0]
(1, '2C')
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack

from bots_sdk.bot import lowest, strength
from bots_sdk.builtin import make_builtin
from bots_sdk.protocol import PHASE_DECISIONS, bot_seed, clean_text
from bots_sdk.referee.participants import Participant, ParticipantError
from bots_sdk.referee.players import Answer, Fault, InProcessPlayer, Player, ProcessPlayer
from bots_sdk.sandbox import Launcher, Limits, default_launcher
from bots_sdk.view import View
from engine.cards import CARD_TEXTS, SUITS
from engine.rules import RuleSet
from engine.state import MAX_HANDS, GameState, IllegalMoveError, Phase

logger = logging.getLogger(__name__)

#: Faults after which a seat is played by the fallback for the rest of the match.
MAX_FAULTS = 3


@dataclass(frozen=True)
class TimeControl:
    """Seconds per move, plus a bank for the whole match that pays for overruns;
    ``timeout_spends_bank``: a decision that times out has used its whole allowance, bank
    included (a person's clock: one who never answers waits the bank out once, not at every
    timeout)."""

    move: float = 1.0
    bank: float = 10.0
    timeout_spends_bank: bool = False


#: A person's clock (the bots at the table keep theirs).
HUMAN_CLOCK = TimeControl(move=30.0, bank=120.0, timeout_spends_bank=True)
#: Who reaches a person's seat: the runner host's factory of :class:`PersonPlayer`.
People = Callable[[Participant], Player]


class RefereeOptions(TypedDict, total=False):
    """The keywords of :class:`RefereeConfig`, as :func:`run_match` and :func:`play_game` take
    them one by one."""

    hands: int | None
    time_control: TimeControl | None
    unsafe: bool
    limits: Limits | None
    sandbox: str | None
    launcher: Launcher | None
    people: People | None
    human_clock: TimeControl


@dataclass(frozen=True)
class RefereeConfig:
    """How the referee plays every game of a match, made once and handed down: ``hands`` (a
    hand count that ends the game; None: the rules' target), the bots' clock
    (``time_control``; None: no clock), where bot files run (a ``launcher`` already made, else
    the sandbox that ``unsafe``, ``limits`` and ``sandbox`` choose), and people's seats
    (``people`` makes their players, under ``human_clock``). Picklable when it holds no
    launcher and no people (``bidel play --jobs`` sends it to other processes)."""

    hands: int | None = None
    time_control: TimeControl | None = None
    unsafe: bool = False
    limits: Limits | None = None
    sandbox: str | None = None
    launcher: Launcher | None = None
    people: People | None = None
    human_clock: TimeControl = HUMAN_CLOCK

    @classmethod
    def of(cls, config: RefereeConfig | None, options: RefereeOptions) -> RefereeConfig:
        """``config``, or one made of ``options`` (not both)."""
        if config is not None and options:
            raise TypeError(f"give a config or its options, not both ({', '.join(options)})")
        return config if config is not None else cls(**options)

    def launcher_factory(self) -> Callable[[], Launcher]:
        """Makes the launcher when a seat first needs one (a match of built-ins needs none),
        then gives the same one."""
        made = self.launcher

        def factory() -> Launcher:
            nonlocal made
            if made is None:
                made = default_launcher(self.unsafe, self.limits, self.sandbox)
            return made

        return factory


@dataclass
class SeatResult:
    bot: str
    faults: list[dict[str, Any]] = field(default_factory=list)
    move_seconds: list[float] = field(default_factory=list)
    stderr: str = ""
    replaced: bool = False
    #: The seat's timeline: one entry per decision (:func:`decision_entry`).
    decisions: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "faults": self.faults,
            "move_ms": [round(s * 1000, 3) for s in self.move_seconds],
            "stderr": self.stderr,
            "replaced_by_fallback": self.replaced,
            "decisions": self.decisions,
        }


def decision_entry(
    state: GameState,
    decision: str,
    action: Any,
    *,
    charged: float | None,
    bank: float | None,
    log: str = "",
    fault: str = "",
    offered: float | None = None,
) -> dict[str, Any]:
    """One decision of a seat's timeline, taken before ``action`` is applied: where it was
    (``hand``, ``trick`` from 0; ``trick`` is None but in play), what was played (the bot's
    answer, or the fallback's after a fault), the clock it was charged and the bank left
    after it (milliseconds; None without a clock), what the bot wrote to stderr while
    deciding (``log``, its owner's alone: the public record drops it) and the fault's class.

    >>> from engine.state import GameState
    >>> from engine.rules import RuleSet
    >>> state = GameState(RuleSet.from_preset("standard"), seed=1)
    >>> entry = decision_entry(state, "pass", ["2C", "3C", "4C"], charged=0.0123, bank=9.5)
    >>> entry["hand"], entry["trick"], entry["decision"], entry["ms"], entry["bank_ms"]
    (0, None, 'pass', 12.3, 9500.0)
    """
    entry: dict[str, Any] = {
        "hand": state.hand_number,
        "trick": len(state.plays()) // state.rules.players if state.phase is Phase.PLAY else None,
        "decision": decision,
        "action": action,
        "ms": None if charged is None else round(charged * 1000, 3),
        "bank_ms": None if bank is None else round(bank * 1000, 3),
        # the clock the bot's view offered (its time_left): a reproduction offers the same
        "offered_ms": None if offered is None else round(offered * 1000, 3),
    }
    if log:
        entry["log"] = log
    if fault:
        entry["fault"] = fault
    return entry


@dataclass
class GameResult:
    """One game: its record, and per seat the bot name, faults, move times, stderr."""

    record: dict[str, Any]
    seats: list[SeatResult]
    rotation: int
    state: GameState
    #: True when the match's time budget ended the game after its last hand (ranked by the
    #: totals so far, as a game of a fixed hand count is).
    over_budget: bool = False

    @property
    def totals(self) -> list[int]:
        """Each seat's game total."""
        return list(self.state.totals)

    @property
    def hand_scores(self) -> list[list[int]]:
        """Per seat, what each hand (void hands left out) added to its total."""
        return hand_scores(self.state)

    def to_dict(self) -> dict[str, Any]:
        """The game record, with the seating's rotation, each seat's faults, move times and
        stderr, and the scores: ``totals`` and per-hand ``hand_scores`` (what the platform
        stores; replaying the record gives the same, which is how they are checked)."""
        return {
            **self.record,
            "rotation": self.rotation,
            "seats": [s.to_dict() for s in self.seats],
            "totals": self.totals,
            "hand_scores": self.hand_scores,
            **({"stopped": "budget"} if self.over_budget else {}),
        }


@dataclass
class MatchResult:
    rules: RuleSet
    seed: int
    bots: list[str]
    games: list[GameResult]
    duplicate: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_spec(),
            "seed": self.seed,
            "bots": [clean_text(bot, limit=None) for bot in self.bots],
            "duplicate": self.duplicate,
            "games": [g.to_dict() for g in self.games],
        }


@dataclass(frozen=True)
class GameSlot:
    """One game of a match: its deal (``game``, from 0) and how many seats along the
    participants sit (``rotation``: seat s holds participant ``(s + rotation) % n``)."""

    game: int
    rotation: int = 0


def hand_split(hands: int | None, games: int = 1) -> list[int | None]:
    """The hands of each game of a match of ``games`` games of ``hands`` hands (None: to the
    rules' target). One game stops at the engine's cap (:data:`engine.state.MAX_HANDS`), so a
    count above it is played as as many games as it takes, dealt from their own seeds.

    >>> hand_split(1000), hand_split(450), hand_split(30, games=2), hand_split(None)
    ([200, 200, 200, 200, 200], [200, 200, 50], [30, 30], [None])
    """
    if hands is None or hands <= MAX_HANDS:
        return [hands] * max(1, games)
    full, rest = divmod(hands, MAX_HANDS)
    one: list[int | None] = [MAX_HANDS for _ in range(full)]
    if rest:
        one.append(rest)
    return one * max(1, games)


def match_games(players: int, games: int = 1, duplicate: bool = False) -> list[GameSlot]:
    """The games of a match in playing order: each of ``games`` deals once or, ``duplicate``,
    once per rotation of the seats, so every participant plays every seat of the same deal.
    The one loop over games and rotations: the runner, the CLI and tournaments use it.

    >>> [(g.game, g.rotation) for g in match_games(3, games=2, duplicate=True)]
    [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    """
    rotations = range(players) if duplicate else range(1)
    return [GameSlot(game, rotation) for game in range(max(1, games)) for rotation in rotations]


T = TypeVar("T")


def seated(participants: Sequence[T], rotation: int) -> list[T]:
    """Who holds each seat, ``participants`` moved ``rotation`` seats along."""
    n = len(participants)
    return [participants[(seat + rotation) % n] for seat in range(n)]


def hand_scores(state: GameState) -> list[list[int]]:
    """Per seat, what each hand of ``state`` (void hands left out) added to its total."""
    played = [h for h in state.history if not h.void]
    return [[h.scores[seat] for h in played] for seat in range(len(state.totals))]


def without_target(ruleset: RuleSet) -> RuleSet:
    """The rules of a game that a hand count ends: the target lifted out of reach (what the
    referee plays, and what a record of such a game holds)."""
    return ruleset.with_overrides(target=10**9)


def fallback_action(state: GameState) -> list[str] | str:
    """The deterministic replacement for a missing decision."""
    legal = state.legal_actions()
    if state.phase is Phase.PASS:
        hand = state.hand_of(state.current)
        ranked = sorted(hand, key=lambda c: (strength(c), "CDHS".index(c[1])))
        return ranked[: state.rules.pass_count]
    if state.phase is Phase.PLAY:
        return lowest(legal)
    return legal[0]


class _Seat:
    def __init__(
        self, player: Player, result: SeatResult, time_control: TimeControl | None
    ) -> None:
        self.player = player
        self.result = result
        self.bank = time_control.bank if time_control else 0.0
        self.time_control = time_control
        self.fallback = False


def _player_for(
    participant: Participant,
    path: Path | None,
    seed: int,
    launcher_factory: Callable[[], Launcher],
    people: People | None,
) -> Player:
    if participant.builtin:
        return InProcessPlayer(make_builtin(participant.builtin, seed))
    if participant.human:
        if people is None:
            raise ParticipantError("a person's seat needs a runner that reaches people")
        return people(participant)
    assert path is not None
    return ProcessPlayer(path, launcher_factory())


#: What a bot's action may hold in the game's own words (cards, suits, a moon choice), in
#: capitals: a refused action made of these is quoted in public; anything else is the bot's
#: own words, which only its owner reads (:attr:`Fault.said`).
GAME_WORDS = frozenset(CARD_TEXTS) | frozenset(SUITS) | {"ADD", "SUBTRACT"}


def _in_game_words(action: Any) -> bool:
    items = action if isinstance(action, list) else [action]
    return all(isinstance(item, str) and item.upper() in GAME_WORDS for item in items)


def _validate(state: GameState, decision: str, action: Any) -> Fault | None:
    """The ``illegal`` fault of ``action``, or None when it is acceptable. Its public detail
    quotes the action only when it is made of the game's words.

    >>> from engine.rules import RuleSet
    >>> state = GameState(RuleSet.from_spec("standard"), seed=1)
    >>> _validate(state, "pass", "my hand: AS KS").detail
    'pass_cards must return a list of cards'
    >>> fault = _validate(state, "pass", ["my hand", "AS", "KS"])
    >>> fault.detail
    'sent something that is not a card'
    >>> fault.said[:22]
    "'my hand' is not a car"
    """
    try:
        problem = _problem(state, decision, action)
    except Exception as exc:  # noqa: BLE001 — the bot's action, not the match, failed
        problem = f"an unusable action ({type(exc).__name__}: {exc})"
    if problem is None:
        return None
    if decision == "pass" and not isinstance(action, list):
        return Fault("illegal", "pass_cards must return a list of cards", said=problem)
    if not _in_game_words(action):
        return Fault("illegal", "sent something that is not a card", said=problem)
    return Fault("illegal", problem)


def _problem(state: GameState, decision: str, action: Any) -> str | None:
    """Why ``action`` is not acceptable, or None."""
    if decision == "pass":
        if not isinstance(action, list) or not all(isinstance(c, str) for c in action):
            return f"pass_cards must return a list of cards, not {action!r}"
        probe = state.clone()
        try:
            for card in action:
                probe.apply(card)
        except IllegalMoveError as exc:
            return str(exc)
        if len(action) != state.rules.pass_count:
            return f"passed {len(action)} cards; the rules pass {state.rules.pass_count}"
        return None
    if not isinstance(action, str) or action not in state.legal_actions():
        return f"{action!r} is not legal here (legal: {' '.join(state.legal_actions())})"
    return None


def run_match(
    rules: str | dict[str, Any] | RuleSet,
    seed: int,
    bots: Sequence[str | Participant],
    *,
    games: int = 1,
    duplicate: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
    observer: Callable[[int, GameState], None] | None = None,
    budget: float | None = None,
    jobs: int = 1,
    config: RefereeConfig | None = None,
    **options: Unpack[RefereeOptions],
) -> MatchResult:
    """Play a match; see the module docstring. ``bots`` are participants (or, as on a
    command line, built-in names and bot files); how the referee plays is ``config`` (or its
    options given as keywords: ``hands``, ``time_control``, ``sandbox``, … see
    :class:`RefereeConfig`). Game g is dealt from ``seed + g``.
    ``observer(g, state)`` sees game g's state after every change (live viewing); what it
    raises is logged and ends its observing, never the match. ``budget``: seconds the whole
    match may take; once they are spent, each game ends with the hand in progress (its result
    says ``"stopped": "budget"``), so a match of slow bots ends with a result instead of at
    the runner's time limit. ``jobs``: games played at once, each in a process of its own (no
    observer, launcher or people then: they stay in this process)."""
    config = RefereeConfig.of(config, options)
    original = RuleSet.from_spec(rules)
    deadline = None if budget is None else time.monotonic() + budget
    participants = [Participant.parse(bot) for bot in bots]
    hands_of = hand_split(config.hands, games)
    slots = match_games(original.players, len(hands_of), duplicate)
    configs = {hands: replace(config, hands=hands) for hands in set(hands_of)}
    results: list[GameResult] = []

    def done(result: GameResult) -> None:
        results.append(result)
        if on_progress:
            on_progress(len(results), len(slots))

    if jobs > 1:
        if observer is not None or config.launcher is not None or config.people is not None:
            raise ValueError("games in other processes take no observer, launcher or people")
        # Forked from a clean server process, never from this one: a fork copies one thread
        # of a process that may have others (a host's web server, a test's) holding locks.
        with ProcessPoolExecutor(
            jobs, mp_context=multiprocessing.get_context("forkserver")
        ) as pool:
            futures = [
                pool.submit(
                    play_game,
                    original,
                    seed + slot.game,
                    participants,
                    rotation=slot.rotation,
                    deadline=deadline,
                    config=configs[hands_of[slot.game]],
                )
                for slot in slots
            ]
            for future in futures:
                done(future.result())
    else:
        for slot in slots:
            watch = None if observer is None else functools.partial(observer, slot.game)
            done(
                play_game(
                    original,
                    seed + slot.game,
                    participants,
                    rotation=slot.rotation,
                    observer=watch,
                    deadline=deadline,
                    config=configs[hands_of[slot.game]],
                )
            )
    return MatchResult(
        rules=original,
        seed=seed,
        bots=[p.label for p in participants],
        games=results,
        duplicate=duplicate,
    )


def play_game(
    rules: str | dict[str, Any] | RuleSet,
    seed: int,
    bots: Sequence[str | Participant],
    *,
    rotation: int = 0,
    observer: Callable[[GameState], None] | None = None,
    deadline: float | None = None,
    config: RefereeConfig | None = None,
    **options: Unpack[RefereeOptions],
) -> GameResult:
    """One game of a match: ``bots`` seated moved ``rotation`` seats along (seat s gets
    ``bots[(s + rotation) % n]``), dealt from ``seed``, played as ``config`` (or its options as
    keywords) says; past ``deadline`` (``time.monotonic()``) it ends when a hand does."""
    config = RefereeConfig.of(config, options)
    ruleset = RuleSet.from_spec(rules)
    if len(bots) != ruleset.players:
        raise ValueError(f"{ruleset.players} seats need {ruleset.players} bots, not {len(bots)}")
    if config.hands is not None:
        ruleset = without_target(ruleset)
    seating = seated([Participant.parse(bot) for bot in bots], rotation)
    with tempfile.TemporaryDirectory(prefix="bidel-game-") as folder:
        # (a bot given as code is written here first; a bad one raises before any start)
        sources = [
            None if p.builtin or p.human else p.source(Path(folder), n)
            for n, p in enumerate(seating)
        ]
        return _play_game(
            _Table(ruleset, seed, rotation, seating, sources), config, _Observer(observer), deadline
        )


@dataclass(frozen=True)
class _Table:
    """One game's table: its rules, deal, seating and where each bot given as code was put."""

    rules: RuleSet
    seed: int
    rotation: int
    seating: list[Participant]
    sources: list[Path | None]


def _play_game(
    table: _Table, config: RefereeConfig, observe: _Observer, deadline: float | None
) -> GameResult:
    rules, seed, rotation, seating, sources = (
        table.rules,
        table.seed,
        table.rotation,
        table.seating,
        table.sources,
    )
    hands, time_control, human_clock = config.hands, config.time_control, config.human_clock
    launcher_factory, people = config.launcher_factory(), config.people
    state = GameState(rules, seed=seed)
    over_budget = False
    seats: list[_Seat] = []
    try:  # from the first start: whatever happens, every process started is closed
        for seat, participant in enumerate(seating):
            player = _player_for(
                participant, sources[seat], bot_seed(seed, rotation, seat), launcher_factory, people
            )
            label = clean_text(participant.label, limit=None)
            clock = human_clock if participant.human else time_control
            seats.append(_Seat(player, SeatResult(bot=label), clock))
            player.spawn(seat)  # every bot loads while the next is launched
        for seat, entry in enumerate(seats):
            fault = entry.player.start(seat, rules.to_spec(), bot_seed(seed, rotation, seat))
            if fault is not None:
                _record_fault(entry, state, "start", fault)
        observe(state)
        while True:
            phase = state.phase
            if phase is Phase.GAME_OVER:
                _notify_all(state, seats, "game_end")
                break
            if phase is Phase.HAND_OVER:
                _notify_all(state, seats, "hand_end")
                finished = sum(not h.void for h in state.history)
                over_budget = deadline is not None and time.monotonic() >= deadline
                if over_budget or (hands is not None and finished >= hands):
                    _notify_all(state, seats, "game_end")
                    break
                state.next_hand()
                observe(state)
                continue
            _decide(state, seats[state.current])
            observe(state)
    finally:
        _close_all(seats)
    record = state.to_record()
    return GameResult(
        record=record,
        seats=[s.result for s in seats],
        rotation=rotation,
        state=state,
        over_budget=over_budget,
    )


class _Observer:
    """Calls an observer with the state; the first exception is logged and ends it (a live
    feed that fails must not touch the match)."""

    def __init__(self, observer: Callable[[GameState], None] | None) -> None:
        self.observer = observer

    def __call__(self, state: GameState) -> None:
        if self.observer is None:
            return
        try:
            self.observer(state)
        except Exception:  # noqa: BLE001 — logged; the match goes on unobserved
            logger.exception("the match's observer failed; it observes no more")
            self.observer = None


def _close_all(seats: list[_Seat]) -> None:
    """Close every seat (again, for one closed already: harmless), each even if closing
    another failed; then raise the first failure, if any."""
    failure: BaseException | None = None
    for entry in seats:
        try:
            text = entry.player.close()
        except BaseException as exc:  # noqa: BLE001 — re-raised once the others are closed
            failure = failure or exc
            continue
        if not entry.result.replaced:
            entry.result.stderr = text
    if failure is not None:
        raise failure


def _decide(state: GameState, seat: _Seat) -> None:
    decision = PHASE_DECISIONS[state.phase.value]
    seat_number = state.current
    action: Any = None
    asked = not seat.fallback
    charged: float | None = None
    limit: float | None = None
    log = fault = ""
    if asked:
        if seat.time_control is not None:
            limit = seat.time_control.move + seat.bank
        view = View.from_observation(state.observation(seat_number), time_left=limit)
        reply = seat.player.decide(decision, view, limit)
        if isinstance(reply, Answer):
            seat.result.move_seconds.append(reply.seconds)
            charged, log = reply.charged, reply.log
            if seat.time_control is not None:
                overrun = max(0.0, reply.charged - seat.time_control.move)
                seat.bank = max(0.0, seat.bank - overrun)
            refused = _validate(state, decision, reply.action)
            if refused is None:
                action = reply.action
            else:
                fault = "illegal"
                _record_fault(seat, state, decision, refused)
        else:
            clock = seat.time_control
            if reply.kind == "timeout" and clock is not None and clock.timeout_spends_bank:
                seat.bank = 0.0
            fault = reply.kind
            _record_fault(seat, state, decision, reply)
    if action is None:
        action = fallback_action(state)
    if asked:  # (the fallback's decisions after a seat was replaced are not the bot's)
        seat.result.decisions.append(
            decision_entry(
                state,
                decision,
                action,
                charged=charged,
                bank=seat.bank if seat.time_control is not None else None,
                log=log,
                fault=fault,
                offered=limit,
            )
        )
    if decision == "pass":
        for card in action:
            state.apply(card)
    else:
        state.apply(action)


def _record_fault(seat: _Seat, state: GameState, decision: str, fault: Fault) -> None:
    seat.result.faults.append(
        {
            **fault.to_dict(),
            "decision": decision,
            "hand": state.hand_number,
            "play": len(state.plays()) if state.phase is Phase.PLAY else None,
        }
    )
    if (
        fault.kind in ("crash", "memory")
        or len(seat.result.faults) >= MAX_FAULTS
        or seat.player.dead is not None
    ):
        if not seat.fallback:
            seat.fallback = True
            seat.result.replaced = True
            seat.result.stderr = seat.player.close()  # nothing of it runs on


def _notify_all(state: GameState, seats: list[_Seat], kind: str) -> None:
    for number, seat in enumerate(seats):
        if not seat.fallback:
            seat.player.notify(kind, View.from_observation(state.observation(number)))
