"""A match as a self-contained job: everything a runner needs to play it — rules, seed, clock,
limits, each seat as a built-in's name or a bot's code with its sha256 — and nothing else: no
database, no secret, no other user's data. The runner plays it with :func:`run_job` and sends
back the :class:`JobResult` with the job's claim token, which the platform checks before it
stores anything (a stale or repeated result changes nothing).

>>> job = Job(kind="match", ref=1, claim="t", rules="standard", seed=5, hands=1,
...           seats=(Seat.builtin_seat("low"),) * 4)
>>> Job.from_dict(job.to_dict()) == job
True
>>> result = run_job(job)
>>> result.ok, result.claim, len(result.game["seats"])
(True, 't', 4)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bots_sdk.builtin import BUILTIN
from bots_sdk.protocol import clean_text
from bots_sdk.runner import TimeControl, run_match
from bots_sdk.sandbox import Limits, SandboxUnavailable
from engine.rules import RulesError

#: The job format's version: a runner refuses jobs of another.
JOB_VERSION = 1
#: Why a job produced no game: the bot's code did not arrive intact, the runner cannot
#: sandbox, the job is malformed, or the runner itself failed.
CAUSES = ("code", "sandbox", "job", "platform")


class JobError(ValueError):
    """A job that cannot be played as given."""


@dataclass(frozen=True)
class Seat:
    """Who sits in a seat: a built-in by name, or a bot's code (``filename`` says ``.py`` or
    ``.zip``) and its sha256."""

    builtin: str = ""
    filename: str = ""
    code: bytes = b""
    sha256: str = ""

    @classmethod
    def builtin_seat(cls, name: str) -> Seat:
        return cls(builtin=name)

    @classmethod
    def code_seat(cls, filename: str, code: bytes) -> Seat:
        return cls(filename=filename, code=code, sha256=hashlib.sha256(code).hexdigest())

    def to_dict(self) -> dict[str, Any]:
        if self.builtin:
            return {"builtin": self.builtin}
        return {
            "filename": self.filename,
            "code": base64.b64encode(self.code).decode("ascii"),
            "sha256": self.sha256,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Seat:
        if not isinstance(data, dict):
            raise JobError("a seat must be an object")
        if data.get("builtin"):
            if data["builtin"] not in BUILTIN:
                raise JobError(f"no built-in bot {data['builtin']!r}")
            return cls(builtin=str(data["builtin"]))
        try:
            code = base64.b64decode(str(data["code"]), validate=True)
            return cls(filename=str(data["filename"]), code=code, sha256=str(data["sha256"]))
        except (KeyError, binascii.Error) as exc:
            raise JobError(f"a seat's code is malformed: {exc}") from None


@dataclass(frozen=True)
class Job:
    """One game to play: a platform match (``kind="match"``, ``ref`` its id) or a new
    version's validation (``kind="validation"``, ``ref`` the version's id)."""

    kind: str
    ref: int
    claim: str
    rules: Any
    seed: int
    seats: tuple[Seat, ...]
    hands: int | None = None
    move: float = 1.0
    bank: float = 10.0
    limits: Limits = field(default_factory=Limits)

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
        }

    @classmethod
    def from_dict(cls, data: Any) -> Job:
        if not isinstance(data, dict) or data.get("version") != JOB_VERSION:
            raise JobError(f"not a version {JOB_VERSION} job")
        try:
            limits = {k: int(v) for k, v in dict(data.get("limits") or {}).items()
                      if k in ("memory_mb", "processes", "tmp_mb")}  # fmt: skip
            return cls(
                kind=str(data["kind"]),
                ref=int(data["ref"]),
                claim=str(data["claim"]),
                rules=data["rules"],
                seed=int(data["seed"]),
                hands=None if data.get("hands") is None else int(data["hands"]),
                move=float(data.get("move", 1.0)),
                bank=float(data.get("bank", 10.0)),
                limits=Limits(**limits),
                seats=tuple(Seat.from_dict(s) for s in data["seats"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise JobError(f"malformed job: {exc}") from None


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
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobResult:
        return cls(
            kind=str(data["kind"]), ref=int(data["ref"]), claim=str(data["claim"]),
            ok=bool(data["ok"]), game=data.get("game"), cause=str(data.get("cause", "")),
            error=str(data.get("error", "")), runner=str(data.get("runner", "")),
        )  # fmt: skip


def _write_seat(seat: Seat, number: int, folder: Path) -> str:
    if seat.builtin:
        return seat.builtin
    if hashlib.sha256(seat.code).hexdigest() != seat.sha256:
        raise JobError(f"seat {number}: the code does not match its sha256")
    suffix = ".zip" if seat.filename.lower().endswith(".zip") else ".py"
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in Path(seat.filename).stem)
    path = folder / f"seat{number}-{stem[:40] or 'bot'}{suffix}"
    path.write_bytes(seat.code)
    return str(path)


def run_job(job: Job, *, unsafe: bool = False, sandbox: str | None = None,
            runner: str = "") -> JobResult:  # fmt: skip
    """Play ``job``; never raises for a bad job, a bad bot or a missing sandbox: the result
    says why there is no game."""

    def failed(cause: str, error: str) -> JobResult:
        return JobResult(job.kind, job.ref, job.claim, False, cause=cause,
                         error=clean_text(error, 2000), runner=runner)  # fmt: skip

    try:
        with tempfile.TemporaryDirectory(prefix="bidel-job-") as folder:
            bots = [_write_seat(s, i, Path(folder)) for i, s in enumerate(job.seats)]
            result = run_match(
                job.rules, seed=job.seed, bots=bots, hands=job.hands,
                time_control=TimeControl(move=job.move, bank=job.bank),
                unsafe=unsafe, limits=job.limits, sandbox=sandbox,
            )  # fmt: skip
    except JobError as exc:
        return failed("code", str(exc))
    except SandboxUnavailable as exc:
        return failed("sandbox", f"cannot sandbox bots on this runner: {exc}")
    except (RulesError, ValueError) as exc:
        return failed("job", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 — the runner's own failure, reported, retried
        return failed("platform", f"{type(exc).__name__}: {exc}")
    return JobResult(job.kind, job.ref, job.claim, True, game=result.games[0].to_dict(),
                     runner=runner)  # fmt: skip
