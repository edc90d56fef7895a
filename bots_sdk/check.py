"""``bidel check BOT``: a bot through every kind of decision, each in a fresh process, with its
protocol mistakes named precisely (the message, what was due, what came).

The scenarios are real positions reached by the engine: the pass, the first lead (the two of
clubs), a later lead, following suit, a void (any card), Hokm's trump declaration and the
moon choice. Each starts the bot as that seat (``hello``), asks one ``act``, judges the answer
by the rules, then listens a moment for anything more (a second answer to the same message
is a protocol mistake the referee would fault on the next move).

Then whole games (:data:`GAME_SEEDS`): the bot at a different seat of each, against the
built-ins, under the platform's move clock, to the end — what a bot does only from its third
hand on, or only once it has taken the queen, no single position shows. Each game's finding
says what it covered (hands, decisions), or the first fault and the bot's own traceback.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bots_sdk.protocol import PHASE_DECISIONS, bot_seed
from bots_sdk.referee.players import Answer, Fault, ProcessPlayer
from bots_sdk.referee.runner import RefereeConfig, TimeControl, _validate, run_match
from bots_sdk.sandbox import Launcher
from bots_sdk.tracebacks import own_frames
from bots_sdk.view import View
from engine.rules import RuleSet
from engine.state import GameState, Phase

#: Seconds a bot has for one decision here (the platform's move clock).
CHECK_LIMIT = 1.0
#: Seconds listened to after an answer, for a second one.
LISTEN = 0.15
#: The whole games played after the scenarios, one per seed (the bot at seat ``i + 1`` of
#: the ``i``-th): the platform's standard rules, to their target.
GAME_SEEDS = (1, 2, 3)
#: The bot's opponents in those games.
OPPONENTS = ("heuristic", "random", "low")
#: The games' clock: the platform's move time, with a bank for a slow start.
GAME_CLOCK = TimeControl(CHECK_LIMIT, 10.0)


@dataclass(frozen=True)
class Scenario:
    name: str
    rules: str
    reached: Callable[[GameState], bool]
    #: Seat 0 takes every trick it can (highest card), the others duck: reaches a moon.
    shoot: bool = False


def _play_phase(state: GameState) -> bool:
    return state.phase is Phase.PLAY


def _trick(state: GameState) -> list[tuple[int, str]]:
    return state.observation(state.current).trick


def _led_suit_held(state: GameState) -> bool:
    trick = _trick(state)
    return bool(trick) and all(c[1] == trick[0][1][1] for c in state.legal_actions())


SCENARIOS = (
    Scenario("pass", "standard", lambda s: s.phase is Phase.PASS),
    Scenario(
        "lead first",
        "standard",
        lambda s: _play_phase(s) and not _trick(s) and not s.observation(s.current).tricks,
    ),
    Scenario(
        "lead later",
        "standard",
        lambda s: _play_phase(s) and not _trick(s) and len(s.observation(s.current).tricks) >= 3,
    ),
    Scenario(
        "follow",
        "standard",
        lambda s: _play_phase(s) and _led_suit_held(s) and len(s.legal_actions()) >= 2,
    ),
    Scenario(
        "void",
        "standard",
        lambda s: _play_phase(s) and bool(_trick(s)) and not _led_suit_held(s),
    ),
    Scenario("trump", "hokm_40", lambda s: s.phase is Phase.DECLARE_TRUMP),
    Scenario("moon", "moon_choice", lambda s: s.phase is Phase.MOON_CHOICE, shoot=True),
)


def position(scenario: Scenario) -> tuple[GameState, int]:
    """The first position (by seed) where ``scenario`` holds, and its seed."""
    rules = RuleSet.from_spec(scenario.rules)
    for seed in range(5000):
        state = GameState(rules, seed=seed)
        rng = random.Random(seed)
        while state.phase not in (Phase.HAND_OVER, Phase.GAME_OVER):
            if scenario.reached(state):
                return state, seed
            legal = state.legal_actions()
            if scenario.shoot and state.phase is Phase.PLAY:
                key = "23456789TJQKA".index
                pick = max if state.current == 0 else min
                state.apply(pick(legal, key=lambda c: key(c[0])))
            else:
                state.apply(rng.choice(legal))
    raise LookupError(f"no position for {scenario.name!r}")  # (never: the tests hold it)


@dataclass(frozen=True)
class Finding:
    scenario: str
    where: str
    problem: str  # '' when the bot answered well
    said: str
    #: The bot's own traceback (a crash in a game), shown under the finding.
    frames: tuple[str, ...] = ()
    #: What a game covered: (hands, the bot's decisions); (0, 0) for a scenario.
    covered: tuple[int, int] = (0, 0)

    @property
    def ok(self) -> bool:
        return not self.problem

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        return f"{mark}  {self.scenario:<10}  {self.where}: {self.problem or self.said}"


def check_scenario(path: Path, launcher: Launcher, scenario: Scenario) -> Finding:
    """One scenario in a fresh process of the bot at ``path``."""
    state, seed = position(scenario)
    seat = state.current
    decision = PHASE_DECISIONS[state.phase.value]
    where = f"{scenario.rules}, seat {seat + 1}"  # (a person reads it: seats from 1)
    player = ProcessPlayer(path, launcher)
    try:
        fault = player.start(seat, state.rules.to_spec(), bot_seed(seed, 0, seat))
        if fault is not None:
            return Finding(scenario.name, where, f"message 'hello': {_fault(fault)}", "")
        view = View.from_observation(state.observation(seat), time_left=CHECK_LIMIT)
        reply = player.decide(decision, view, CHECK_LIMIT)
        asked = f"message {player.next_id} ('act', decision {decision!r})"
        if isinstance(reply, Fault):
            return Finding(scenario.name, where, f"{asked}: {_fault(reply)}", "")
        assert isinstance(reply, Answer)
        refused = _validate(state, decision, reply.action)
        if refused:
            return Finding(scenario.name, where, f"{asked}: {_fault(refused)}", "")
        more = player.quiet(LISTEN)
        if more:
            return Finding(
                scenario.name, where, f"{asked}: answered, then wrote again unasked: {more}", ""
            )
        said = f"{decision} {reply.action!r} in {reply.seconds * 1000:.0f} ms"
        return Finding(scenario.name, where, "", said)
    finally:
        player.close()


def _fault(fault: Fault) -> str:
    return f"{fault.kind}: {fault.owner_text()}"  # (the author's own check: all of it)


def check(
    path: Path, launcher: Launcher, scenarios: tuple[Scenario, ...] = SCENARIOS
) -> list[Finding]:
    """Every scenario, in order."""
    return [check_scenario(path, launcher, s) for s in scenarios]


def check_game(path: Path, launcher: Launcher, seed: int, seat: int) -> Finding:
    """One whole game of the bot at ``seat`` (from 0) against :data:`OPPONENTS`."""
    bots = [*OPPONENTS[:seat], str(path), *OPPONENTS[seat:]]
    config = RefereeConfig(launcher=launcher, time_control=GAME_CLOCK)
    game = run_match("standard", seed, bots, config=config).games[0]
    own = game.seats[seat]
    hands = len(game.record["hands"])
    where = f"standard, seed {seed}, seat {seat + 1}"
    if not own.faults:
        decisions = len(own.decisions)
        said = f"a whole game: {hands} hands, {decisions} decisions, no fault"
        return Finding("game", where, "", said, covered=(hands, decisions))
    first = own.faults[0]
    place = f"hand {int(first['hand']) + 1} ({first['decision']})"
    told = _fault(Fault.from_dict(first))
    more = f"; {len(own.faults)} faults in all" if len(own.faults) > 1 else ""
    return Finding(
        "game",
        where,
        f"{place}: {told}{more}",
        "",
        frames=tuple(own_frames(own.stderr)),
        covered=(hands, len(own.decisions)),
    )


def check_games(
    path: Path, launcher: Launcher, seeds: tuple[int, ...] = GAME_SEEDS
) -> list[Finding]:
    """A whole game per seed, the bot at seat ``i + 1`` of the ``i``-th."""
    players = len(OPPONENTS) + 1
    return [check_game(path, launcher, seed, i % players) for i, seed in enumerate(seeds)]
