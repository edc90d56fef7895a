"""Who sits at a table: one type from the command line to the platform's jobs.

A :class:`Participant` is a built-in bot by name, a bot file on this machine, a bot's code
as bytes (an uploaded version: its file name, its sha256 and, on the platform, its version
id), or a person (``human``: the secret of the page that plays the seat). The runner seats
participants (:func:`bots_sdk.referee.runner.run_match`), a job carries them to a runner
(:mod:`bots_sdk.referee.jobs`), and the platform's models store the same choice — a built-in's name,
a bot or a person — under one constraint.

>>> Participant.parse("low"), Participant.parse("my_bot.py").label
(Participant(builtin='low'), 'my_bot.py')
>>> seat = Participant.from_code("bot.py", b"print(1)")
>>> Participant.from_dict(seat.to_dict()) == seat
True
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots_sdk.builtin import BUILTIN


class ParticipantError(ValueError):
    """A participant that cannot be seated as given (unknown built-in, malformed or altered
    code)."""


@dataclass(frozen=True)
class Participant:
    """A built-in (``builtin``), a bot file (``path``) or a bot's code (``filename``, ``code``
    and its ``sha256``; ``version``: the platform's id of that code, when it has one)."""

    builtin: str = ""
    path: str = ""
    filename: str = ""
    code: bytes = b""
    sha256: str = ""
    version: int | None = None
    human: str = ""

    def __repr__(self) -> str:  # (never the code: up to a MiB, nor a person's secret)
        if self.human:
            return "Participant(human=…)"
        if self.builtin:
            return f"Participant(builtin={self.builtin!r})"
        if self.path:
            return f"Participant(path={self.path!r})"
        return f"Participant(filename={self.filename!r}, sha256={self.sha256[:12]!r}…)"

    @classmethod
    def of_builtin(cls, name: str) -> Participant:
        if name not in BUILTIN:
            raise ParticipantError(f"no built-in bot {name!r}; built-ins: {', '.join(BUILTIN)}")
        return cls(builtin=name)

    @classmethod
    def of_person(cls, token: str) -> Participant:
        if not token:
            raise ParticipantError("a person's seat needs its token")
        return cls(human=token)

    @classmethod
    def from_file(cls, path: str | Path) -> Participant:
        return cls(path=str(path))

    @classmethod
    def from_code(cls, filename: str, code: bytes, version: int | None = None) -> Participant:
        return cls(
            filename=filename, code=code, sha256=hashlib.sha256(code).hexdigest(), version=version
        )

    @classmethod
    def parse(cls, text: str | Participant) -> Participant:
        """A command line's bot: a built-in's name, else a file's path."""
        if isinstance(text, Participant):
            return text
        return cls(builtin=text) if text in BUILTIN else cls(path=text)

    @property
    def label(self) -> str:
        """How results name it: the built-in's name, the path as given, or the file name."""
        return self.builtin or self.path or self.filename or ("person" if self.human else "")

    @property
    def is_builtin(self) -> bool:
        return bool(self.builtin)

    def source(self, folder: Path, number: int) -> Path:
        """The bot's file to run: the path itself, or the code written into ``folder``
        (checked against its sha256 first) under a name made safe."""
        if self.path:
            return Path(self.path)
        if hashlib.sha256(self.code).hexdigest() != self.sha256:
            raise ParticipantError(f"seat {number}: the code does not match its sha256")
        suffix = ".zip" if self.filename.lower().endswith(".zip") else ".py"
        stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in Path(self.filename).stem)
        path = folder / f"seat{number}-{stem[:40] or 'bot'}{suffix}"
        path.write_bytes(self.code)
        return path

    def to_dict(self) -> dict[str, Any]:
        """The job format's seat (a path never leaves this machine: send the code)."""
        if self.builtin:
            return {"builtin": self.builtin}
        if self.human:
            return {"human": self.human}
        if self.path:
            raise ParticipantError("a bot file is sent as its code (Participant.from_code)")
        data: dict[str, Any] = {
            "filename": self.filename,
            "code": base64.b64encode(self.code).decode("ascii"),
            "sha256": self.sha256,
        }
        if self.version is not None:
            data["version"] = self.version
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Participant:
        if not isinstance(data, dict):
            raise ParticipantError("a seat must be an object")
        if data.get("builtin"):
            return cls.of_builtin(str(data["builtin"]))
        if data.get("human"):
            return cls.of_person(str(data["human"]))
        try:
            code = base64.b64decode(str(data["code"]), validate=True)
            version = data.get("version")
            return cls(
                filename=str(data["filename"]),
                code=code,
                sha256=str(data["sha256"]),
                version=None if version is None else int(version),
            )
        except (KeyError, TypeError, ValueError, binascii.Error) as exc:
            raise ParticipantError(f"a seat's code is malformed: {exc}") from None
