"""Seats as the referee sees them: something that answers decisions within a time limit, or a
:class:`Fault` saying why not.

- :class:`InProcessPlayer`: a trusted bot object (the built-ins) called directly.
- :class:`ProcessPlayer`: a bot in its own process (sandboxed, or plain in debug mode),
  spoken to over the line protocol with non-blocking reads: a per-move deadline, a cap on line
  length and on captured stderr, end-of-file handling. It never blocks on the bot.
- :class:`PersonPlayer`: a person at a browser, reached through a :class:`Line` (the runner
  host's mailbox): sent the same view a bot gets, asked again after an answer that is not a
  legal choice, timed out by a person's clock.
"""

from __future__ import annotations

import math
import os
import select
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from bots_sdk.bot import Bot
from bots_sdk.builds import build
from bots_sdk.builds.languages import ManifestError
from bots_sdk.protocol import (
    DECISION_METHODS,
    MAX_LINE,
    VERSION,
    Action,
    Error,
    ProtocolError,
    Ready,
    Reply,
    clean_text,
    decode_reply,
    encode,
)
from bots_sdk.sandbox import Launch, Launcher, Limits, procs
from bots_sdk.view import View
from engine.rules import RulesError, RuleSet

#: The classes of fault recorded against a seat.
FaultKind = Literal["timeout", "crash", "illegal", "protocol", "memory"]
FAULT_CLASSES: tuple[FaultKind, ...] = get_args(FaultKind)


@dataclass(frozen=True)
class Fault:
    """Why a seat gave no usable answer. ``detail`` is the referee's own words, which anyone
    reading the match may see: what kind of failure. ``said`` is the whole story with the
    bot's own words in it (an exception's text, a line it sent, a build's errors), when there
    are any: a bot's words are its owner's, so ``said`` is kept apart (:func:`public_fault`
    drops it) and only the owner's views and local runs show it (:meth:`owner_text`). Both
    are cleaned and cut (:func:`bots_sdk.protocol.clean_text`) so a record can always hold
    them.

    >>> Fault("protocol", "sent \\x00" + "x" * 500).detail[:8]
    'sent \\ufffdxx'
    >>> len(Fault("protocol", "x" * 500).detail)
    200
    >>> Fault("crash", "raised ValueError", said="ValueError: AS KS").to_dict()["said"]
    'ValueError: AS KS'
    """

    kind: FaultKind
    detail: str
    said: str = ""

    def __post_init__(self) -> None:
        if self.kind not in FAULT_CLASSES:
            raise ValueError(f"{self.kind!r} is not a fault class ({', '.join(FAULT_CLASSES)})")
        object.__setattr__(self, "detail", clean_text(str(self.detail)))
        object.__setattr__(self, "said", clean_text(str(self.said)))

    def to_dict(self) -> dict[str, str]:
        """As a record holds it (``class``: the JSON name of the kind; ``said`` only when
        the bot said something).

        >>> Fault.from_dict(Fault("crash", "exit 1").to_dict()) == Fault("crash", "exit 1")
        True
        """
        entry = {"class": self.kind, "detail": self.detail}
        if self.said:
            entry["said"] = self.said
        return entry

    def owner_text(self) -> str:
        """What its owner (and a local run) reads: the whole story.

        >>> Fault("crash", "raised ValueError", said="ValueError: no card").owner_text()
        'ValueError: no card'
        >>> Fault("timeout", "over its CPU limit").owner_text()
        'over its CPU limit'
        """
        return self.said or self.detail

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Fault:
        """A record's fault (its other keys, where and when, are the record's); ValueError
        when its class is not one."""
        kind = str(data.get("class", ""))
        if kind not in FAULT_CLASSES:
            raise ValueError(f"{kind!r} is not a fault class ({', '.join(FAULT_CLASSES)})")
        return cls(kind, str(data.get("detail", "")), str(data.get("said", "")))


#: The keys of a recorded fault that hold the bot's own words (its owner's alone).
PRIVATE_FAULT_KEYS = frozenset({"said"})


def public_fault(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded fault as anyone may read it: its kind, the referee's words and where it
    happened, without what the bot said.

    >>> public_fault({"class": "crash", "detail": "raised ValueError", "said": "AS KS",
    ...               "hand": 2})
    {'class': 'crash', 'detail': 'raised ValueError', 'hand': 2}
    """
    return {key: value for key, value in entry.items() if key not in PRIVATE_FAULT_KEYS}


def raised(exc: BaseException) -> Fault:
    """The ``crash`` fault of a bot's exception: the public detail names the exception's type
    only when it is one of Python's own (a class the bot defined may be named anything); its
    text, which the bot chose, is :attr:`Fault.said`.

    >>> raised(ValueError("holding AS KS"))
    Fault(kind='crash', detail='raised ValueError', said='ValueError: holding AS KS')
    >>> raised(type("HoldingAceOfSpades", (Exception,), {})("!")).detail
    'raised an exception'
    """
    kind = type(exc)
    name = kind.__name__ if kind.__module__ == "builtins" else "an exception"
    return Fault("crash", f"raised {name}", said=f"{kind.__name__}: {exc}")


#: Wall-clock seconds a decision may take past its limit before the referee stops waiting.
WALL_GRACE = 0.5
#: The wall clock's guard ran out (a decision's fault says then what the clock saw).
NO_ANSWER = "no answer in time"
#: Wall-clock seconds of a decision not charged to the bot: the referee's side of the
#: exchange and a loaded machine's scheduling delays.
WALL_TOLERANCE = 0.2


def _up(seconds: float) -> str:
    """Seconds for a fault's detail, rounded up to the millisecond: a bot over its limit by
    less than the rounding never reads that it used exactly its limit."""
    return f"{math.ceil(seconds * 1000) / 1000:.3f}"


@dataclass
class Answer:
    """A reply and how long it took: seconds of wall clock, and of the bot's CPU when known
    (its whole process tree since its previous answer: threads, children, pondering).

    >>> Answer("2C", seconds=1.5, cpu=0.1).charged  # asleep 1.5 s: the wall clock counts
    1.3
    >>> Answer("2C", seconds=0.5, cpu=0.9).charged  # children computing: the CPU counts
    0.9
    """

    action: Any
    seconds: float
    cpu: float | None = None
    #: What the bot wrote to stderr while deciding (its process's, cleaned; '' for none).
    log: str = ""

    @property
    def charged(self) -> float:
        """The time charged to the bot's clock: its CPU time, or its wall time less
        :data:`WALL_TOLERANCE` where that is more (a bot that sleeps spends its clock too)."""
        if self.cpu is None:
            return self.seconds
        return round(max(self.cpu, self.seconds - WALL_TOLERANCE), 6)


class Player(Protocol):
    name: str
    #: Why this seat can answer nothing more (its process crashed, its person left): the
    #: referee then hands it to the fallback at once. None while it may answer.
    dead: Fault | None

    def spawn(self, seat: int) -> None:
        """Begin starting (a process: launched, loading): a game spawns every seat before
        it starts any, so that the bots load side by side. ``start`` finishes the job."""

    def start(self, seat: int, rules_spec: Any, seed: int) -> Fault | None: ...

    def decide(self, decision: str, view: View, limit: float | None) -> Answer | Fault: ...

    def notify(self, kind: str, view: View) -> None: ...

    def close(self) -> str: ...


def settings(rules_spec: Any) -> dict[str, Any] | None:
    """``hello``'s ``settings``: every rule of the spec resolved (a preset's name spelt out),
    with the numbers a bot in another language would otherwise derive (``hand_size``,
    ``deck_size``, ``moon_amount``). None for a spec the engine refuses (the referee's own
    rules always resolve).

    >>> s = settings("standard")
    >>> s["pass_count"], s["hand_size"], s["moon_amount"], s["players"]
    (3, 13, 26, 4)
    """
    try:
        rules = RuleSet.from_spec(rules_spec)
    except RulesError:
        return None
    return {
        **rules.to_dict(),
        "hand_size": rules.hand_size,
        "deck_size": rules.deck_size,
        "moon_amount": rules.moon_amount,
    }


#: An ``error`` message's class: the fault it is and how the fault's public detail says it.
_REPORTED: dict[str, tuple[FaultKind, str]] = {
    "crash": ("crash", "a crash"),
    "memory": ("memory", "running out of memory"),
    "protocol": ("protocol", "a protocol error"),
}


def _read_reply(line: bytes) -> Reply | Fault:
    """A bot's line as the message it is, or the ``protocol`` fault it is; whatever the line
    (the decoder never raises anything but ProtocolError; this is its backstop)."""
    try:
        return decode_reply(line)
    except ProtocolError as exc:
        return Fault("protocol", exc.public, said=str(exc) if exc.quote else "")
    except Exception as exc:  # noqa: BLE001 — only the bot's bytes are in play here
        return Fault("protocol", f"an unreadable line ({type(exc).__name__})")


class InProcessPlayer:
    """A trusted bot object, called in the referee's process."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name or type(bot).__name__
        self.dead: Fault | None = None

    def spawn(self, seat: int) -> None:
        pass

    def start(self, seat: int, rules_spec: Any, seed: int) -> Fault | None:
        return None

    def decide(self, decision: str, view: View, limit: float | None) -> Answer | Fault:
        started = time.perf_counter()
        try:
            action = getattr(self.bot, DECISION_METHODS[decision])(view)
        except MemoryError:
            return Fault("memory", "MemoryError")
        except Exception as exc:  # a built-in's bug is still the seat's fault, not the match's
            return raised(exc)
        seconds = time.perf_counter() - started
        if limit is not None and seconds > limit:
            return Fault("timeout", f"took {seconds:.3f} s, allowed {limit:.3f} s")
        return Answer(action, seconds)

    def notify(self, kind: str, view: View) -> None:
        try:
            (self.bot.on_hand_end if kind == "hand_end" else self.bot.on_game_end)(view)
        except Exception:  # noqa: BLE001 — hooks never decide anything
            pass

    def close(self) -> str:
        return ""


@dataclass
class ProcessPlayer:
    """A bot file run in its own process and spoken to over the protocol."""

    path: Path
    launcher: Launcher
    startup_timeout: float = 20.0
    limits: Limits = field(default_factory=Limits)
    name: str = ""
    process: subprocess.Popen[bytes] | None = None
    buffer: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    stderr_dropped: int = 0
    next_id: int = 0
    dead: Fault | None = None
    stale: set[int] = field(default_factory=set)
    bot_pid: int | None = None
    sandbox_init: int | None = None
    argv: list[str] = field(default_factory=list)
    cpu_mark: float = 0.0
    launch: Launch | None = None
    #: What building the bot said (a bot in another language), shown before its stderr.
    build_log: str = ""
    #: The lease on its build in the cache (a bot in another language), held until closed.
    build_lease: build.Lease | None = None

    def __post_init__(self) -> None:
        self.name = self.name or self.path.stem

    # --- process plumbing -------------------------------------------------------------------

    def spawn(self, seat: int) -> None:
        """Build (a bot in another language) and launch the bot's process, which starts
        loading; a build that fails leaves its fault for :meth:`start`. Only once."""
        if self.process is not None or self.dead is not None:
            return
        try:
            prepared = build.prepare(self.path, self.launcher)
        except (build.BuildError, ManifestError) as exc:
            log = getattr(exc, "log", "")
            self.build_log = f"build failed: {exc}\n{log}".rstrip() + "\n"
            self.dead = Fault(
                "crash", "the bot could not be built", said=f"the bot could not be built: {exc}"
            )
            return
        self.build_lease = prepared.lease
        if prepared.note:
            self.build_log = prepared.note + "\n"
        try:
            launch = self.launcher.launch(prepared.bot, seat)
        except BaseException:
            self._release_build()
            raise
        self.launch = launch
        self.argv = launch.argv
        self.process = launch.popen(stdin=subprocess.PIPE)
        for stream in (self.process.stdout, self.process.stderr, self.process.stdin):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)

    def start(self, seat: int, rules_spec: Any, seed: int) -> Fault | None:
        """Spawn (unless done), say hello, wait for ``ready``: the bot's clock starts then."""
        self.spawn(seat)
        if self.dead is not None:
            return self.dead
        assert self.launch is not None and self.process is not None
        launch = self.launch
        deadline = time.monotonic() + self.startup_timeout
        # Where the sandbox's init and the bot are, as the launch knows (a container's are not
        # this host's: it runs only on its turn, and its wall clock bounds its CPU).
        self.sandbox_init, self.bot_pid = launch.processes(self.process.pid, deadline)
        hello = {
            "type": "hello",
            "protocol": VERSION,
            "seat": seat,
            "seed": seed,
            "rules": rules_spec,
            "settings": settings(rules_spec),
        }
        reply = self._exchange(hello, self.startup_timeout, expect="ready")
        if isinstance(reply, Fault):
            self.dead = reply
            return reply
        if isinstance(reply, Ready) and reply.name:
            self.name = reply.name  # (cleaned and capped by the decoder)
        # The clock starts now: the interpreter's start-up and the bot's loading are free.
        self.cpu_mark = self._cpu() or 0.0
        if launch.suspend is not None:
            launch.suspend()
        return None

    def _cpu(self) -> float | None:
        """CPU seconds used so far by the bot: its whole process tree, living or gone, from
        its cgroup; else every process below its sandbox's init; else (unsandboxed) the bot
        process alone. None where not readable (a container, frozen between its turns)."""
        if self.launch is not None and (self.launch.group or self.launch.clock):
            return self.launch.cpu_seconds()
        if self.sandbox_init is not None:
            return procs.tree_cpu(self.sandbox_init)
        return None if self.bot_pid is None else procs.process_cpu(self.bot_pid)

    def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        try:
            while True:
                chunk = os.read(self.process.stderr.fileno(), 65536)
                if not chunk:
                    return
                room = self.limits.stderr_bytes - len(self.stderr)
                self.stderr += chunk[: max(room, 0)]
                self.stderr_dropped += max(len(chunk) - max(room, 0), 0)
        except BlockingIOError:
            return

    def _write(self, data: bytes, deadline: float) -> Fault | None:
        assert self.process is not None and self.process.stdin is not None
        view = memoryview(data)
        fd = self.process.stdin.fileno()
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Fault("timeout", "did not read its input")
            _, writable, _ = select.select([], [fd], [], remaining)
            if not writable:
                continue
            try:
                written = os.write(fd, view)
            except BrokenPipeError:
                return self._exit_fault("closed its input")
            view = view[written:]
        return None

    def _exit_fault(self, what: str) -> Fault:
        assert self.process is not None
        self._drain_stderr()
        procs.reap(self.process, 2)
        code = self.process.returncode
        if "MemoryError" in bytes(self.stderr).decode(errors="replace"):
            return Fault("memory", f"{what}: out of memory")
        if self.launch and self.launch.oom_killed():
            return Fault("memory", f"{what}: killed by the kernel, over its memory limit")
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return Fault("timeout", f"{what}: over its CPU limit")
        return Fault("crash", f"{what} (exit status {code})")

    def _read_line(self, deadline: float) -> bytes | Fault:
        assert self.process is not None and self.process.stdout is not None
        out_fd = self.process.stdout.fileno()
        err_fd = self.process.stderr.fileno() if self.process.stderr else -1
        while True:
            newline = self.buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self.buffer[: newline + 1])
                del self.buffer[: newline + 1]
                return line
            if len(self.buffer) > MAX_LINE:
                return Fault("protocol", f"a line longer than {MAX_LINE} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Fault("timeout", NO_ANSWER)
            readable, _, _ = select.select([out_fd, err_fd], [], [], remaining)
            if err_fd in readable:
                self._drain_stderr()
            if out_fd in readable:
                try:
                    chunk = os.read(out_fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    return self._exit_fault("closed its output")
                self.buffer += chunk

    def _unsolicited(self) -> bool:
        """Whether the bot wrote anything unasked (late answers to timed-out moves aside)."""
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while select.select([fd], [], [], 0)[0]:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.buffer += chunk
        while (newline := self.buffer.find(b"\n")) >= 0:
            line = bytes(self.buffer[: newline + 1])
            late = self._late(_read_reply(line))
            if not late:
                return True
            del self.buffer[: newline + 1]
        return bool(self.buffer)

    def _late(self, reply: Reply | Fault) -> bool:
        """Whether ``reply`` answers a move that timed out (and is to be skipped)."""
        return isinstance(reply, Action) and reply.id in self.stale

    def _exchange(self, message: dict[str, Any], limit: float, expect: str) -> Reply | Fault:
        """Send ``message``, read the reply of type ``expect``: a :class:`Reply`, or the
        :class:`Fault` of whatever else came. Never raises on what the bot wrote."""
        deadline = time.monotonic() + limit
        if self._unsolicited():
            return Fault("protocol", "wrote before being asked")
        failure = self._write(encode(message), deadline)
        if failure:
            return failure
        while True:
            line = self._read_line(deadline)
            if isinstance(line, Fault):
                return line
            reply = _read_reply(line)
            if isinstance(reply, Fault):
                return reply
            if not self._late(reply):
                break  # (a late answer to a timed-out move is skipped)
        if isinstance(reply, Error):
            # (the protocol's classes are the faults'; what it explains is the bot's words)
            kind, what = _REPORTED[reply.kind]
            return Fault(kind, f"the bot reported {what}", said=reply.detail)
        if reply.TYPE != expect:
            return Fault("protocol", f"sent {reply.TYPE!r} where {expect!r} was due")
        if isinstance(reply, Action) and reply.id != message.get("id"):
            return Fault("protocol", f"answered message {reply.id}, not {message.get('id')}")
        return reply

    def quiet(self, wait: float) -> str:
        """What the bot writes unasked within ``wait`` seconds ('' for nothing): a line, cut."""
        if self.dead or self.process is None:
            return ""
        line = self._read_line(time.monotonic() + wait)
        if isinstance(line, Fault):
            return ""  # nothing came (or the bot has gone: that is for its next message)
        return repr(clean_text(line.decode(errors="replace").rstrip("\n"), 120))

    # --- the Player interface ---------------------------------------------------------------

    def decide(self, decision: str, view: View, limit: float | None) -> Answer | Fault:
        if self.dead:
            return self.dead
        self.next_id += 1
        message: dict[str, Any] = {"type": "act", "id": self.next_id, "decision": decision}
        if decision == "pass":
            message["count"] = view.rules.pass_count  # (what the rules spec implies, spelt out)
        message["view"] = view.to_dict()
        if self.launch is not None and self.launch.resume is not None:
            self.launch.resume()  # (a container between turns is frozen)
        started = time.perf_counter()
        said = len(self.stderr)  # (what it writes from here on is this decision's log)
        # The clock counts CPU time (the whole tree); the wall clock guards a bot that sleeps.
        wall = limit + WALL_GRACE if limit is not None else 3600.0
        reply = self._exchange(message, wall, expect="action")
        seconds = time.perf_counter() - started
        if self.process is not None:
            self._drain_stderr()  # (lines written just before the answer)
        log = clean_text(bytes(self.stderr[said:]).decode(errors="replace"), limit=None)
        alive = not isinstance(reply, Fault) or reply.kind == "timeout"
        if alive and self.launch is not None and self.launch.suspend is not None:
            self.launch.suspend()  # (one that is about to be killed is not frozen first)
        cpu_now = self._cpu()
        cpu = None if cpu_now is None else max(0.0, cpu_now - self.cpu_mark)
        if cpu_now is not None:
            self.cpu_mark = cpu_now
        if isinstance(reply, Fault):
            if reply.detail == NO_ANSWER and limit is not None:
                # No answer before the wall clock's guard: say what the clock saw, the CPU of
                # all its processes where that is what ran out.
                if cpu is not None and cpu > limit:
                    detail = f"used {_up(cpu)} s of CPU (all its processes), allowed {limit:.3f} s"
                else:
                    detail = f"no answer within {wall:.3f} s of wall time, allowed {limit:.3f} s"
                reply = Fault("timeout", detail)
            if reply.kind == "timeout" and self.process is not None and self.process.poll() is None:
                self.stale.add(self.next_id)  # its answer may still come: ignore it then
            else:
                self.dead = reply  # crashed, out of memory or broke the protocol: done
                self._kill()
            return reply
        assert isinstance(reply, Action)  # (_exchange checked the type)
        answer = Answer(reply.action, seconds, cpu, log)
        if limit is not None and cpu is not None and cpu > limit:
            return Fault(
                "timeout",
                f"used {_up(cpu)} s of CPU (all its processes), allowed {limit:.3f} s",
            )
        if limit is not None and answer.charged > limit:
            return Fault("timeout", f"took {_up(seconds)} s of wall time, allowed {limit:.3f} s")
        return answer

    def notify(self, kind: str, view: View) -> None:
        if self.dead or self.process is None:
            return
        self._write(encode({"type": kind, "view": view.to_dict()}), time.monotonic() + 5)

    def _kill(self) -> None:
        if self.process is None:
            return
        # The sandbox runs in a session of its own: kill its init (which takes the whole PID
        # namespace with it) and the bot directly, as well as our own process group.
        doomed = [pid for pid in (self.sandbox_init, self.bot_pid) if pid]
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        procs.wait_gone(doomed, time.monotonic() + 10)
        procs.reap(self.process, 10)
        if self.launch is not None:
            self.launch.release()  # whatever escaped the session is still in the cgroup
        self._drain_stderr()

    def _release_build(self) -> None:
        if self.build_lease is not None:
            lease, self.build_lease = self.build_lease, None
            lease.release()

    def close(self) -> str:
        """Say goodbye, kill whatever is left, return the captured stderr (once), after what
        its build said."""
        built, self.build_log = self.build_log, ""
        if self.process is None:
            self._release_build()
            return clean_text(built, limit=None)
        if self.process is not None and self.process.poll() is None and not self.dead:
            if self.launch is not None and self.launch.resume is not None:
                self.launch.resume()  # (to read its bye)
            self._write(encode({"type": "bye"}), time.monotonic() + 1)
            procs.reap(self.process, 2)
        self._kill()
        for stream in (
            (self.process.stdin, self.process.stdout, self.process.stderr) if self.process else ()
        ):
            if stream is not None:
                stream.close()
        self.process = None
        self._release_build()  # (nothing of the bot runs its folder any more)
        self.dead = self.dead or Fault("crash", "closed")
        text = built + bytes(self.stderr).decode(errors="replace")
        if self.stderr_dropped:
            text += f"\n[{self.stderr_dropped} more bytes of stderr dropped]"
        return clean_text(text, limit=None)


class Line(Protocol):
    """Messages to and from a person's page: JSON objects; and whether the page is open."""

    def send(self, message: dict[str, Any]) -> None: ...

    def receive(self, timeout: float) -> Any: ...  # a decoded message, or None by the timeout

    def present(self) -> bool: ...  # is a page of this seat open now (its socket connected)?


@dataclass(frozen=True)
class PersonLimits:
    """How long a person's seat may hold its table beyond the per-move clock.

    ``away``: seconds with no page of the seat open (no socket connected) before the person
    has left: the fallback plays the rest of the game at once. ``game``: the person's
    thinking time for the whole game, every decision's wait added up; once spent, the same.
    So a person who answers at the last second of every move, or never, or closes the page,
    holds a table for minutes, not hours.
    """

    away: float = 60.0
    game: float = 600.0


#: Wrong answers to one question that are each refused with a message; later ones are
#: ignored (a page sending junk in a loop must not flood the seat's feed).
MAX_REFUSALS = 20
#: How often a waiting person's seat looks whether its page is still open.
PRESENCE_EVERY = 1.0
#: What a person's page sends (through the platform) to leave the table for good.
LEAVE = {"leave": True}


def person_action(message: Any, ask: int, decision: str, view: View) -> tuple[Any, str]:
    """The action in a person's ``message`` answering question ``ask``, or why it is not one
    ('' and None: not an answer to this question at all)."""
    if not isinstance(message, dict) or message.get("id") != ask:
        return None, ""
    action = message.get("action")
    if decision == "pass":
        count = view.rules.pass_count
        if (
            not isinstance(action, list)
            or not all(isinstance(c, str) and c in view.hand for c in action)
            or len(set(action)) != len(action)
        ):
            return None, "choose cards from your hand"
        if len(action) != count:
            return None, f"pass {count} cards"
        return list(action), ""
    if not isinstance(action, str) or action not in view.legal:
        return None, f"{str(action)[:20]!r} is not a legal choice"
    return action, ""


class PersonPlayer:
    """A person's seat: every question is sent with its view and the seconds allowed; answers
    that are not legal are refused and asked again, until the clock runs out (a timeout: the
    runner's fallback plays that decision, and after three the rest of the game).

    Beyond the clock, :class:`PersonLimits`: a person with no page open for ``away`` seconds,
    whose thinking time for the game is spent, or who left (:data:`LEAVE`) is :attr:`dead`:
    the fallback plays the rest at once, and the game ends at the bots' speed.
    """

    name = "person"

    def __init__(
        self, line: Line, limits: PersonLimits = PersonLimits(), coach: Bot | None = None
    ) -> None:
        self.line = line
        self.limits = limits
        #: The coach: a bot whose answer to each question is sent with it as a ``hint`` (the
        #: page shows it when the person asks), from the same view (a practice game's aid).
        self.coach = coach
        self.asked = 0
        #: Seconds the person's decisions have waited so far (bounded by ``limits.game``).
        self.spent = 0.0
        #: When the seat was first seen without an open page (None while one is open).
        self.away_since: float | None = None
        self.dead: Fault | None = None

    def spawn(self, seat: int) -> None:
        pass

    def start(self, seat: int, rules_spec: Any, seed: int) -> Fault | None:
        limits = {"away": self.limits.away, "game": self.limits.game}
        self.notify("start", None, seat=seat, rules=rules_spec, limits=limits)
        return None

    def _gone(self, why: str) -> Fault:
        """The person has left the table for good (said to the page, which may be open)."""
        self.dead = Fault("timeout", why)
        self.notify("left", None, why=why)
        return self.dead

    def _away(self, now: float) -> bool:
        """Whether the seat has had no open page for ``limits.away`` seconds (asked once a
        :data:`PRESENCE_EVERY`: a mailbox that fails counts as no page)."""
        try:
            present = self.line.present()
        except Exception:  # noqa: BLE001 — a presence store that fails: the person is not seen
            present = False
        if present:
            self.away_since = None
            return False
        if self.away_since is None:
            self.away_since = now
        return now - self.away_since >= self.limits.away

    def decide(self, decision: str, view: View, limit: float | None) -> Answer | Fault:
        if self.dead is not None:
            return self.dead
        left_in_game = self.limits.game - self.spent
        if left_in_game <= 0:
            spent = f"your thinking time for the game ({self.limits.game:.0f} s) is spent"
            return self._gone(spent)
        self.asked += 1
        ask = self.asked
        hint = self._hint(decision, view)  # (before the person's clock starts)
        seconds = min(limit if limit is not None else 60.0, left_in_game)
        started = time.monotonic()
        deadline = started + seconds
        question = {
            "type": "decide",
            "id": ask,
            "decision": decision,
            "count": view.rules.pass_count if decision == "pass" else 1,
            "view": view.to_dict(),
            "seconds": seconds,
            "until": time.time() + seconds,
            "game_left": left_in_game,
        }
        if hint is not None:
            question["hint"] = {"action": hint}
        self.line.send(question)
        refusals, looked = 0, -math.inf
        try:
            while True:
                now = time.monotonic()
                left = deadline - now
                if now - looked >= PRESENCE_EVERY:
                    looked = now
                    if self._away(now):
                        return self._gone(f"no page of this seat open for {self.limits.away:.0f} s")
                if left <= 0:
                    self.line.send({"type": "timeout", "id": ask})
                    return Fault("timeout", f"no answer in {seconds:.0f} s")
                try:
                    message = self.line.receive(min(left, PRESENCE_EVERY))
                except Exception as exc:  # noqa: BLE001 — a mailbox failure is this seat's timeout
                    return Fault("timeout", f"the person's line failed: {type(exc).__name__}")
                if message == LEAVE:
                    return self._gone("you left the table")
                action, why = person_action(message, ask, decision, view)
                if why:
                    refusals += 1
                    if refusals <= MAX_REFUSALS:
                        self.line.send({"type": "refused", "id": ask, "why": why})
                elif action is not None:
                    self.line.send({"type": "accepted", "id": ask, "action": action})
                    return Answer(action, time.monotonic() - started)
        finally:
            self.spent += time.monotonic() - started

    def _hint(self, decision: str, view: View) -> Any:
        """The coach's answer to this question if it is a legal one, else None (a coach that
        fails or errs gives no hint; it never costs the person anything)."""
        if self.coach is None or decision not in ("play", "pass"):
            return None
        try:
            action = getattr(self.coach, DECISION_METHODS[decision])(view)
            hinted, why = person_action({"id": 0, "action": action}, 0, decision, view)
        except Exception:  # noqa: BLE001 — see above
            return None
        return None if why else hinted

    def notify(self, kind: str, view: View | None, **more: Any) -> None:
        message = {"type": kind, **more}
        if view is not None:
            message["view"] = view.to_dict()
        try:
            self.line.send(message)
        except Exception:  # noqa: BLE001 — a notice decides nothing; the clock does the rest
            pass

    def close(self) -> str:
        self.notify("closed", None)
        return ""
