"""A match as a self-contained job: everything a runner needs to play it — rules, seed, clock,
limits, each seat as a built-in's name or a bot's code with its sha256 — and nothing else: no
database, no secret, no other user's data. The runner plays it with :func:`run_job` and sends
back the :class:`JobResult` with the job's claim token, which the platform checks before it
stores anything (a stale or repeated result changes nothing).

>>> job = Job(kind="match", ref=1, claim="t", rules="standard", seed=5, hands=1,
...           seats=(Participant.of_builtin("low"),) * 4)
>>> Job.from_dict(job.to_dict()) == job
True
>>> result = run_job(job)
>>> result.ok, result.claim, len(result.game["seats"])
(True, 't', 4)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bots_sdk.protocol import clean_text
from bots_sdk.referee.frames import LiveFrames, bystander_frame, table_shape
from bots_sdk.referee.participants import Participant, ParticipantError
from bots_sdk.referee.players import PersonLimits
from bots_sdk.referee.runner import HUMAN_CLOCK, People, TimeControl, run_match
from bots_sdk.sandbox import Limits, SandboxUnavailable
from engine.rules import RulesError
from engine.state import GameState

#: The job format's version: a runner refuses jobs of another.
JOB_VERSION = 1
#: Why a job produced no game: the bot's code did not arrive intact, the runner cannot
#: sandbox, the job is malformed, or the runner itself failed.
CAUSES = ("code", "sandbox", "job", "platform")


class JobError(ValueError):
    """A job that cannot be played as given."""


@dataclass(frozen=True)
class Job:
    """One game to play: a platform match (``kind="match"``, ``ref`` its id) or a new
    version's validation (``kind="validation"``, ``ref`` the version's id)."""

    kind: str
    ref: int
    claim: str
    rules: Any
    seed: int
    seats: tuple[Participant, ...]
    hands: int | None = None
    move: float = TimeControl.move
    bank: float = TimeControl.bank
    limits: Limits = field(default_factory=Limits)
    #: Who may watch it live: "" (nobody: no feed), "all" (every hand, a bot match) or
    #: "bystander" (only what a bystander sees: a game with a person at the table).
    live: str = ""
    #: A person's seats' clock (the bots keep ``move`` and ``bank``), and how long a person
    #: may be away or think in all (:class:`bots_sdk.referee.players.PersonLimits`): the platform's
    #: settings, so that a runner needs none.
    person_clock: TimeControl = HUMAN_CLOCK
    person: PersonLimits = field(default_factory=PersonLimits)
    #: Whether a person's seats get the coach's hint with each question
    #: (:class:`bots_sdk.referee.players.PersonPlayer`).
    coach: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": JOB_VERSION,
            "kind": self.kind,
            "ref": self.ref,
            "claim": self.claim,
            "rules": self.rules,
            "seed": self.seed,
            "hands": self.hands,
            "move": self.move,
            "bank": self.bank,
            "limits": {
                "memory_mb": self.limits.memory_mb,
                "processes": self.limits.processes,
                "tmp_mb": self.limits.tmp_mb,
            },
            "seats": [s.to_dict() for s in self.seats],
            "live": self.live,
            "person": {
                "move": self.person_clock.move,
                "bank": self.person_clock.bank,
                "away": self.person.away,
                "game": self.person.game,
                "coach": self.coach,
            },
        }

    @classmethod
    def from_dict(cls, data: Any) -> Job:
        if not isinstance(data, dict) or data.get("version") != JOB_VERSION:
            raise JobError(f"not a version {JOB_VERSION} job")
        try:
            limits = {
                k: int(v)
                for k, v in dict(data.get("limits") or {}).items()
                if k in ("memory_mb", "processes", "tmp_mb")
            }
            return cls(
                kind=str(data["kind"]),
                ref=int(data["ref"]),
                claim=str(data["claim"]),
                rules=data["rules"],
                seed=int(data["seed"]),
                hands=None if data.get("hands") is None else int(data["hands"]),
                move=float(data.get("move", TimeControl.move)),
                bank=float(data.get("bank", TimeControl.bank)),
                limits=Limits(**limits),
                seats=tuple(Participant.from_dict(s) for s in data["seats"]),
                live=_audience(data.get("live", "")),
                **_person(data.get("person") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise JobError(f"malformed job: {exc}") from None


def _person(data: dict[str, Any]) -> dict[str, Any]:
    """A job's person settings (any left out: the defaults), as :class:`Job`'s fields."""
    seconds = {k: float(data[k]) for k in ("move", "bank", "away", "game") if k in data}
    if any(not (0 if k == "bank" else 0.001) <= v < math.inf for k, v in seconds.items()):
        raise ValueError(f"a person's seconds must be positive and finite: {seconds}")
    clock = TimeControl(
        move=seconds.get("move", HUMAN_CLOCK.move),
        bank=seconds.get("bank", HUMAN_CLOCK.bank),
        timeout_spends_bank=True,
    )
    limits = PersonLimits(
        away=seconds.get("away", PersonLimits.away), game=seconds.get("game", PersonLimits.game)
    )
    coach = data.get("coach", False)
    if not isinstance(coach, bool):
        raise ValueError(f"coach must be true or false, not {coach!r}")
    return {"person_clock": clock, "person": limits, "coach": coach}


def _audience(value: Any) -> str:
    if value not in LIVE_AUDIENCES:
        raise ValueError(f"live must be one of {LIVE_AUDIENCES}, not {value!r}")
    return str(value)


#: The audiences of a live feed (see :attr:`Job.live`).
LIVE_AUDIENCES = ("", "all", "bystander")


@dataclass(frozen=True)
class JobResult:
    """What a runner sends back: the game (``ok``), or why there is none (``cause`` one of
    :data:`CAUSES`, ``error`` a line for people)."""

    kind: str
    ref: int
    claim: str
    ok: bool
    game: dict[str, Any] | None = None
    cause: str = ""
    error: str = ""
    runner: str = ""
    #: A match's luck of the deal: per hand, each seat's expected points from its cards
    #: (:func:`bots_sdk.analysis.deal_luck`; None for a hand it does not value).
    luck: list[list[float] | None] | None = None
    #: An analysis job's report (:meth:`bots_sdk.analysis.Report.to_dict`).
    report: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "ref": self.ref,
            "claim": self.claim,
            "ok": self.ok,
            "game": self.game,
            "cause": self.cause,
            "error": self.error,
            "runner": self.runner,
            "luck": self.luck,
            "report": self.report,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobResult:
        return cls(
            kind=str(data["kind"]),
            ref=int(data["ref"]),
            claim=str(data["claim"]),
            ok=bool(data["ok"]),
            game=data.get("game"),
            cause=str(data.get("cause", "")),
            error=str(data.get("error", "")),
            runner=str(data.get("runner", "")),
            luck=data.get("luck"),
            report=data.get("report"),
        )


def live_observer(
    audience: str, publish: Callable[[dict[str, Any]], None]
) -> Callable[[int, GameState], None]:
    """An observer for :func:`run_match` that publishes the table, then the frame of the hand
    in progress after every change (redacted for a bystander)."""
    seen: dict[str, Any] = {}
    frames: dict[int, LiveFrames] = {}

    def observe(game: int, state: GameState) -> None:
        if "table" not in seen:
            seen["table"] = True
            publish({"type": "table", **table_shape(state.rules), "audience": audience})
        hand, frame = frames.setdefault(game, LiveFrames())(state)
        if audience == "bystander":
            frame = bystander_frame(frame)
        publish({"type": "frame", "game": game, "hand": hand, "frame": frame})

    return observe


def run_job(
    job: Job,
    *,
    unsafe: bool = False,
    sandbox: str | None = None,
    runner: str = "",
    publish: Callable[[dict[str, Any]], None] | None = None,
    people: People | None = None,
    budget: float | None = None,
) -> JobResult:
    """Play ``job``; never raises for a bad job, a bad bot or a missing sandbox: the result
    says why there is no game. ``publish`` receives the live feed's events when the job asks
    for one (:attr:`Job.live`), and is closed (``publish.close()``, if it has one) before this
    returns; ``people`` reaches its persons' seats, if it has any; ``budget``: the seconds the
    match may take (:func:`bots_sdk.referee.runner.run_match`), None for no bound."""
    observer = None
    if job.live and publish is not None:
        observer = live_observer(job.live, publish)
    result = _run_job(job, unsafe, sandbox, runner, observer, people, budget)
    if observer is not None and publish is not None:
        end: dict[str, Any] = {"type": "end", "ok": result.ok}
        if result.ok and result.game and job.live == "all":
            end["winners"] = result.game.get("winners")
        publish(end)
    close = getattr(publish, "close", None)
    if close is not None:  # a publisher that sends in the background: the rest, now
        close()
    return result


def _run_job(
    job: Job,
    unsafe: bool,
    sandbox: str | None,
    runner: str,
    observer: Callable[[int, GameState], None] | None,
    people: People | None,
    budget: float | None = None,
) -> JobResult:

    def failed(cause: str, error: str) -> JobResult:
        return JobResult(
            job.kind,
            job.ref,
            job.claim,
            False,
            cause=cause,
            error=clean_text(error, 2000),
            runner=runner,
        )

    try:
        result = run_match(
            job.rules,
            seed=job.seed,
            bots=job.seats,
            hands=job.hands,
            time_control=TimeControl(move=job.move, bank=job.bank),
            unsafe=unsafe,
            limits=job.limits,
            sandbox=sandbox,
            observer=observer,
            people=people,
            human_clock=job.person_clock,
            budget=budget,
        )
    except ParticipantError as exc:
        return failed("code", str(exc))
    except SandboxUnavailable as exc:
        return failed("sandbox", f"cannot sandbox bots on this runner: {exc}")
    except (RulesError, ValueError) as exc:
        return failed("job", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 — the runner's own failure, reported, retried
        return failed("platform", f"{type(exc).__name__}: {exc}")
    return JobResult(
        job.kind, job.ref, job.claim, True, game=result.games[0].to_dict(), runner=runner
    )
