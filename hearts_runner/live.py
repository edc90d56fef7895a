"""Live feeds: a runner publishes each running match's moves as it plays them; the web tier
reads them to spectators. No database write per move: the feed is the broker's Redis (a list
holds the match so far for late arrivals and to step back, a pub/sub channel pushes each new
event) or, on the embedded default, a file per match under ``var/live/`` (appended a line at a
time, followed by polling) — the same choice as :mod:`hearts_runner.broker`. Either way a feed
goes by itself: RETIRED_TTL_SECONDS after its match is over for good, TTL_SECONDS after its
last event otherwise (a lost runner's); the files' folder is also held to a total size.

An event is one JSON object with ``seq`` (0, 1, … within a ``run``: a match played again after
its runner was lost starts a new run) and ``type``: ``table`` (the table's shape and who may
see what), ``frame`` (the frame of the hand in progress, see :mod:`bots_sdk.referee.frames`) or
``end``. A bystander's feed (a game with a person at the table) is redacted by the runner
before it is published: no unplayed card ever enters it.

Nothing here may touch the match it observes: a publisher that fails logs once and goes quiet.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Protocol

import orjson

from bots_sdk.builtin import make_builtin
from bots_sdk.referee.participants import Participant
from bots_sdk.referee.players import PersonLimits, PersonPlayer

logger = logging.getLogger(__name__)

#: How long a feed stays readable when nothing says its match is over (a lost runner's).
TTL_SECONDS = 6 * 3600
#: The most bytes the feeds in files hold together (``BIDEL_LIVE_FILES_MAX_BYTES``): past it
#: the feeds of finished matches go at once, the longest finished first. A feed being played
#: is never removed for it (each is held to :data:`LIVE_MAX_BYTES`).
LIVE_FILES_MAX_BYTES = 256 * 1024 * 1024
#: How often a file feed is polled for new lines.
FILE_POLL_SECONDS = 0.02


def key_for(kind: str, ref: int) -> str:
    return f"{kind}-{int(ref)}"


class Feed(Protocol):
    def reset(self, key: str) -> None: ...

    def publish(self, key: str, event: dict[str, Any]) -> None: ...

    def publish_lines(self, key: str, lines: list[str]) -> None: ...

    def history(self, key: str) -> list[str]: ...

    def last(self, key: str) -> str | None: ...

    def retire(self, key: str, seconds: float) -> None: ...

    def sweep(self) -> int: ...

    def follow(self, key: str, ready: asyncio.Event) -> AsyncIterator[str]: ...


class RedisFeed:
    """The feed in Redis: ``bidel:live:<key>`` (a list) and the channel
    ``bidel:live:<database>:<key>``. A key lives in the URL's database, but a channel is the
    whole server's: named without the database, two installations sharing a server in two
    databases (each with its match 1) would each hear the other's events (Celery names its
    broadcasts the same way)."""

    def __init__(self, url: str) -> None:
        import redis

        self.url = url
        self.client = redis.Redis.from_url(url, socket_timeout=5)
        self.database = int(self.client.connection_pool.connection_kwargs.get("db") or 0)

    @staticmethod
    def name(key: str) -> str:
        return f"bidel:live:{key}"

    def channel(self, key: str) -> str:
        return f"bidel:live:{self.database}:{key}"

    def reset(self, key: str) -> None:
        self.client.delete(self.name(key))

    def publish(self, key: str, event: dict[str, Any]) -> None:
        self.publish_lines(key, [encode(event)])

    def publish_lines(self, key: str, lines: list[str]) -> None:
        """Events already encoded, in order: kept, then pushed, in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        pipe.rpush(self.name(key), *lines)
        pipe.expire(self.name(key), TTL_SECONDS)
        for line in lines:
            pipe.publish(self.channel(key), line)
        pipe.execute()

    def history(self, key: str) -> list[str]:
        return [b.decode() for b in self.client.lrange(self.name(key), 0, -1)]

    def last(self, key: str) -> str | None:
        found = self.client.lindex(self.name(key), -1)
        return None if found is None else found.decode()

    def retire(self, key: str, seconds: float) -> None:
        self.client.expire(self.name(key), max(1, int(seconds)))

    def sweep(self) -> int:
        """Nothing to remove: every key expires by itself (TTL_SECONDS from its last event,
        RETIRED_TTL_SECONDS once retired); the server's ``maxmemory`` bounds the rest."""
        return 0

    async def follow(self, key: str, ready: asyncio.Event) -> AsyncIterator[str]:
        import redis.asyncio

        client = redis.asyncio.Redis.from_url(self.url)
        pubsub = client.pubsub()
        try:
            await pubsub.subscribe(self.channel(key))
            ready.set()
            async for message in pubsub.listen():
                if message["type"] == "message":
                    yield message["data"].decode()
        finally:
            await pubsub.aclose()
            await client.aclose()


class FileFeed:
    """The feed in files: ``<folder>/<key>.jsonl``, one event per line, appended whole. A feed
    whose match is over for good has a mark beside it, ``<key>.over``, holding the time it may
    go; :meth:`sweep` removes it then (the runner's :meth:`reset` of each new feed and the
    platform's periodic ``arena.live_feeds_sweep`` call it)."""

    def __init__(self, folder: Path, *, max_bytes: int | None = None) -> None:
        self.folder = folder
        #: The feeds' total size past which finished ones go at once (None: the setting's).
        self.max_bytes = live_files_max_bytes() if max_bytes is None else max_bytes
        folder.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.jsonl"

    def mark(self, key: str) -> Path:
        return self.folder / f"{key}.over"

    def reset(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.mark(key))  # a new run is live: unmarked before its file appears
        fresh = self.folder / f".{key}.new"
        fresh.write_bytes(b"")
        os.replace(fresh, self.path(key))  # a follower sees a new file, not a cut one
        self.sweep()

    def sweep(self, now: float | None = None) -> int:
        """Remove the feeds of finished matches whose time is up, the feeds nothing was
        written to for TTL_SECONDS, then finished ones, the longest finished first, while the
        feeds hold more than ``max_bytes`` together; never a feed written to since its mark
        (a live one). How many feeds went."""
        now = time.time() if now is None else now
        sizes: dict[str, int] = {}
        written: dict[str, float] = {}
        marks: dict[str, tuple[float, float]] = {}  # key: (marked at, may go at)
        for entry in os.scandir(self.folder):
            name = entry.name
            if name.startswith("."):
                continue  # being written
            try:
                if name.endswith(".jsonl"):
                    stat = entry.stat()
                    sizes[name[: -len(".jsonl")]] = stat.st_size
                    written[name[: -len(".jsonl")]] = stat.st_mtime
                elif name.endswith(".over"):
                    until = float(Path(entry.path).read_text())
                    marks[name[: -len(".over")]] = (entry.stat().st_mtime, until)
            except (FileNotFoundError, ValueError):
                continue
        # Finished: marked after its last event (an event since, a late runner's, makes it
        # live again until it has been quiet for TTL_SECONDS, as in Redis).
        finished = {k: m for k, m in marks.items() if k in written and written[k] <= m[0]}
        doomed = [k for k, (_, until) in finished.items() if until <= now]
        doomed += [k for k in written if written[k] < now - TTL_SECONDS and k not in doomed]
        total = sum(sizes.values()) - sum(sizes[k] for k in doomed)
        for key in sorted(finished, key=lambda k: finished[k][0]):
            if total <= self.max_bytes:
                break
            if key not in doomed:
                doomed.append(key)
                total -= sizes[key]
        removed = 0
        for key in doomed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path(key))
                removed += 1
        for key in marks:  # a mark outlives its feed by nothing
            if key in doomed or key not in written or key not in finished:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.mark(key))
        return removed

    def publish(self, key: str, event: dict[str, Any]) -> None:
        self.publish_lines(key, [encode(event)])

    def publish_lines(self, key: str, lines: list[str]) -> None:
        data = "".join(line + "\n" for line in lines).encode()
        descriptor = os.open(self.path(key), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, data)  # one write: a reader sees each line whole or not yet
        finally:
            os.close(descriptor)

    def history(self, key: str) -> list[str]:
        try:
            data = self.path(key).read_bytes()
        except FileNotFoundError:
            return []
        return [line.decode() for line in data.split(b"\n")[:-1]]  # the last one is partial

    def last(self, key: str) -> str | None:
        lines = self.history(key)
        return lines[-1] if lines else None

    def retire(self, key: str, seconds: float) -> None:
        """Mark the feed over: :meth:`sweep` removes it ``seconds`` from now (sooner if the
        folder is past its size)."""
        partial = self.folder / f".{key}.over"
        partial.write_text(repr(time.time() + seconds))
        os.replace(partial, self.mark(key))

    async def follow(self, key: str, ready: asyncio.Event) -> AsyncIterator[str]:
        path = self.path(key)
        position, inode, partial = 0, None, b""
        try:
            stat = path.stat()
            position, inode = stat.st_size, stat.st_ino
        except FileNotFoundError:
            pass
        ready.set()
        while True:
            try:
                stat = path.stat()
            except FileNotFoundError:
                await asyncio.sleep(FILE_POLL_SECONDS)
                continue
            if stat.st_ino != inode:  # reset: a new run
                position, inode, partial = 0, stat.st_ino, b""
            if stat.st_size > position:
                with path.open("rb") as handle:
                    handle.seek(position)
                    data = handle.read(stat.st_size - position)
                position += len(data)
                *lines, partial = (partial + data).split(b"\n")
                for line in lines:
                    yield line.decode()
            else:
                await asyncio.sleep(FILE_POLL_SECONDS)


def feed_from_environment() -> Feed:
    """Redis at ``REDIS_URL``, else files under ``BIDEL_VAR_DIR`` (default: the project's var/)."""
    redis_url = os.environ.get("REDIS_URL", "")
    if redis_url:
        return RedisFeed(redis_url)
    default = Path(__file__).resolve().parent.parent / "var"
    return FileFeed(Path(os.environ.get("BIDEL_VAR_DIR") or default) / "live")


def encode(event: dict[str, Any]) -> str:
    """An event as one line of the feed: compact JSON (a newline inside a string is escaped),
    by orjson — a frame after every decision, encoded five times faster than by ``json``."""
    return orjson.dumps(event).decode()


#: Events a background publisher holds back at most while its feed is slow; past that the
#: feed is given up (the match goes on unwatched) rather than the runner's memory.
BACKLOG_LIMIT = 20_000
#: A background publisher sends at most this often (what happened between two sends goes in
#: one round trip): a spectator sees a move at most this much later, and a runner's match
#: costs a few dozen round trips to the feed instead of one per event (~660 in a game to 100).
SEND_EVERY_SECONDS = 0.01
#: How long :meth:`Publisher.close` waits for a background publisher to send what it holds.
CLOSE_SECONDS = 10.0
#: The most bytes of events one run of a match's feed holds (``BIDEL_LIVE_MAX_BYTES``): a game
#: to 100 is about 1 MB, the longest a game can be (the engine's 200 hands) about 17 MB. Past it
#: the feed says ``{"type": "cut"}`` and takes nothing but the match's ``end``: the match plays
#: on unwatched and its replay is stored as always.
LIVE_MAX_BYTES = 64 * 1024 * 1024


def live_max_bytes() -> int:
    """:data:`LIVE_MAX_BYTES`, or the environment's ``BIDEL_LIVE_MAX_BYTES`` (a positive count).

    >>> live_max_bytes() == LIVE_MAX_BYTES
    True
    """
    return _bytes_setting("BIDEL_LIVE_MAX_BYTES", LIVE_MAX_BYTES)


def live_files_max_bytes() -> int:
    """:data:`LIVE_FILES_MAX_BYTES`, or the environment's ``BIDEL_LIVE_FILES_MAX_BYTES``.

    >>> live_files_max_bytes() == LIVE_FILES_MAX_BYTES
    True
    """
    return _bytes_setting("BIDEL_LIVE_FILES_MAX_BYTES", LIVE_FILES_MAX_BYTES)


def _bytes_setting(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    value = int(raw)
    if value < 1:
        raise ValueError(f"{name} must be a positive number of bytes, not {raw!r}")
    return value


class Publisher:
    """One match's feed as the runner writes it: numbers the events, never raises.

    With ``background=True`` (a runner's match feed) an event is encoded where it happens and
    sent by a thread of the publisher's own, what piled up since its last send in one round
    trip, at most every :data:`SEND_EVERY_SECONDS`: the referee never waits on the feed
    between two moves. :meth:`close` sends the
    rest (``run_job`` closes its publisher as the job ends, before the result goes back).
    """

    def __init__(
        self,
        feed: Feed,
        key: str,
        run: str,
        *,
        background: bool = False,
        max_bytes: int | None = None,
    ) -> None:
        self.feed, self.key, self.run = feed, key, run
        self.seq = 0
        self.failed = False
        #: ``max_bytes``: the feed's cap (None: none); ``cut``: it was reached
        self.max_bytes, self.sent_bytes, self.cut = max_bytes, 0, False
        self.background = background
        self._pending: list[str] = []
        self._changed = threading.Condition()
        self._closing = False
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._call(lambda: feed.reset(key))

    def __call__(self, event: dict[str, Any]) -> None:
        if self.failed or (self.cut and event.get("type") != "end"):
            return
        event = {"seq": self.seq, "run": self.run, "at": round(time.time(), 4), **event}
        line = encode(event)
        if self.max_bytes is not None and not self.cut:
            self.sent_bytes += len(line) + 1
            if self.sent_bytes > self.max_bytes:
                logger.warning("live feed %s: past its %d bytes, cut", self.key, self.max_bytes)
                self.cut = True
                event = {**event, "type": "cut", "limit": self.max_bytes}
                for key in ("game", "hand", "frame"):
                    event.pop(key, None)
                line = encode(event)
        self.seq += 1
        if not self.background:
            self._call(lambda: self.feed.publish(self.key, event))
            return
        with self._changed:
            if self._closing:
                return
            if len(self._pending) >= BACKLOG_LIMIT:
                logger.error("live feed %s: %d events behind, given up", self.key, BACKLOG_LIMIT)
                self.failed, self._pending = True, []
                return
            self._pending.append(line)
            self._changed.notify()
        if self._thread is None:
            self._thread = threading.Thread(target=self._send, name=f"live {self.key}", daemon=True)
            self._thread.start()

    def close(self, timeout: float = CLOSE_SECONDS) -> None:
        """Send what is held back (waiting at most ``timeout`` seconds); later events are
        dropped. Harmless twice, and for a publisher that sends as it is called."""
        with self._changed:
            self._closing = True
            self._changed.notify()
        self._closed.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                logger.error("live feed %s: its last events not sent in %.0f s", self.key, timeout)
                self.failed = True

    def _send(self) -> None:
        while True:
            with self._changed:
                while not self._pending and not self._closing:
                    self._changed.wait()
                lines, self._pending = self._pending, []
            if not lines:
                return  # closing, and nothing left
            self._call(functools.partial(_publish_lines, self.feed, self.key, lines))
            self._closed.wait(SEND_EVERY_SECONDS)  # (cut short by close: the rest goes now)

    def _call(self, action: Callable[[], None]) -> None:
        if self.failed:
            return
        try:
            action()
        except Exception:  # noqa: BLE001 — the match goes on without spectators
            logger.exception("live feed %s failed; the match goes on unwatched", self.key)
            self.failed = True


def _publish_lines(feed: Feed, key: str, lines: list[str]) -> None:
    if hasattr(feed, "publish_lines"):
        feed.publish_lines(key, lines)
    else:  # a feed that takes one event at a time
        for line in lines:
            feed.publish(key, json.loads(line))


@functools.lru_cache(maxsize=1)
def shared_feed() -> Feed:
    """This process's feed (one Redis connection pool, or the folder)."""
    return feed_from_environment()


def publisher_for(kind: str, ref: int, claim: str, *, wanted: bool) -> Publisher | None:
    """A job's live feed, if it asks for one; its run names the claim without revealing it."""
    if not wanted:
        return None
    try:
        feed = shared_feed()
    except Exception:  # noqa: BLE001 — no feed means no spectators, never no match
        logger.exception("no live feed here")
        return None
    return Publisher(
        feed, key_for(kind, ref), run_of(claim), background=True, max_bytes=live_max_bytes()
    )


def run_of(claim: str) -> str:
    """The run a claim plays, as spectators see it: names the claim without revealing it."""
    return hashlib.sha256(claim.encode()).hexdigest()[:12]


#: How long a feed stays once its match is over for good (stored, or failed for good): its
#: spectators got the news, and the page of a finished match shows the stored replay.
RETIRED_TTL_SECONDS = 120


def announce(key: str, event: dict[str, Any], *, final: bool = False) -> None:
    """Add ``event`` to the end of the current run of ``key``'s feed (the platform, once it has
    stored the match: spectators then load its replay); ``final``: the match is over for good,
    its feed is dropped soon (RETIRED_TTL_SECONDS). Never raises."""
    try:
        feed = shared_feed()
        newest = feed.last(key)
        if newest is None:
            return
        last = json.loads(newest)
        event = {"seq": int(last["seq"]) + 1, "run": last["run"], "at": time.time(), **event}
        feed.publish(key, event)
        if final:
            feed.retire(key, RETIRED_TTL_SECONDS)
    except Exception:  # noqa: BLE001 — spectators reload by themselves at worst
        logger.exception("could not announce %s on the live feed %s", event.get("type"), key)


# --- a person's seat ----------------------------------------------------------------------
# The runner sends a person's page its questions on the seat's own feed (key "seat-<token>",
# read only by whoever holds the token) and takes the answers from the seat's mailbox.


class Mailbox(Protocol):
    def put(self, token: str, text: str) -> None: ...

    def take(self, token: str, timeout: float) -> str | None: ...


#: Answers a seat's mailbox holds at most (a page sending more is ignored, never stored).
MAILBOX_LIMIT = 100


class RedisMailbox:
    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=None)

    @staticmethod
    def name(token: str) -> str:
        return f"bidel:answers:{token}"

    def put(self, token: str, text: str) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.rpush(self.name(token), text)
        pipe.ltrim(self.name(token), -MAILBOX_LIMIT, -1)
        pipe.expire(self.name(token), TTL_SECONDS)
        pipe.execute()

    def take(self, token: str, timeout: float) -> str | None:
        found = self.client.blpop([self.name(token)], timeout=max(0.01, timeout))
        return None if found is None else found[1].decode()


class FileMailbox:
    """A folder per seat; each answer a file renamed into it whole, taken oldest first."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def put(self, token: str, text: str) -> None:
        box = self.folder / token
        box.mkdir(parents=True, exist_ok=True)
        if len(os.listdir(box)) >= MAILBOX_LIMIT:
            return
        name = f"{time.monotonic_ns():020d}-{os.getpid()}.json"
        partial = box / f".{name}"
        partial.write_text(text)
        os.replace(partial, box / name)

    def take(self, token: str, timeout: float) -> str | None:
        box = self.folder / token
        deadline = time.monotonic() + timeout
        while True:
            try:
                names = sorted(n for n in os.listdir(box) if not n.startswith("."))
            except FileNotFoundError:
                names = []
            for name in names:
                try:
                    text = (box / name).read_text()
                    (box / name).unlink()
                except FileNotFoundError:
                    continue
                return text
            if time.monotonic() >= deadline:
                return None
            time.sleep(min(FILE_POLL_SECONDS, max(0.0, deadline - time.monotonic())))


def mailbox_from_environment() -> Mailbox:
    redis_url = os.environ.get("REDIS_URL", "")
    if redis_url:
        return RedisMailbox(redis_url)
    default = Path(__file__).resolve().parent.parent / "var"
    return FileMailbox(Path(os.environ.get("BIDEL_VAR_DIR") or default) / "live" / "answers")


@functools.lru_cache(maxsize=1)
def shared_mailbox() -> Mailbox:
    return mailbox_from_environment()


def seat_key(token: str) -> str:
    return f"seat-{token}"


# Whether a person's page is open: while its socket is connected the web tier marks the seat
# present for PRESENT_SECONDS, again every few seconds (arena.consumers.PlayConsumer), and
# clears the mark when the socket closes; the runner asks while it waits for the person.


class Presence(Protocol):
    def touch(self, token: str) -> None: ...

    def clear(self, token: str) -> None: ...

    def present(self, token: str) -> bool: ...


#: How long one mark of an open page lasts: a web process that dies without clearing its
#: marks leaves its people seen this long at most.
PRESENT_SECONDS = 15


class RedisPresence:
    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=5)

    @staticmethod
    def name(token: str) -> str:
        return f"bidel:present:{token}"

    def touch(self, token: str) -> None:
        self.client.set(self.name(token), b"1", ex=PRESENT_SECONDS)

    def clear(self, token: str) -> None:
        self.client.delete(self.name(token))

    def present(self, token: str) -> bool:
        return bool(self.client.exists(self.name(token)))


class FilePresence:
    """A file per seat holding when its mark ends (one machine: the embedded default)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def touch(self, token: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = self.folder / f".{token}.{os.getpid()}"
        partial.write_text(repr(time.time() + PRESENT_SECONDS))
        os.replace(partial, self.folder / token)

    def clear(self, token: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.folder / token)

    def present(self, token: str) -> bool:
        try:
            until = float((self.folder / token).read_text())
        except (FileNotFoundError, ValueError):
            return False
        return until > time.time()


def presence_from_environment() -> Presence:
    redis_url = os.environ.get("REDIS_URL", "")
    if redis_url:
        return RedisPresence(redis_url)
    default = Path(__file__).resolve().parent.parent / "var"
    return FilePresence(Path(os.environ.get("BIDEL_VAR_DIR") or default) / "live" / "present")


@functools.lru_cache(maxsize=1)
def shared_presence() -> Presence:
    return presence_from_environment()


#: What the platform puts in a seat's mailbox to take the person from the table (they left
#: it, or their game ended before a runner began it): the seat's player reads it as
#: :data:`bots_sdk.referee.players.LEAVE`.
LEAVE_MESSAGE = json.dumps({"leave": True})


class SeatLine:
    """A person's :class:`bots_sdk.referee.players.Line`: questions out on the seat's feed,
    answers in from its mailbox (JSON objects; anything else is not an answer), the page's
    presence from the marks the web tier leaves."""

    def __init__(self, token: str, run: str) -> None:
        self.token = token
        self.publish = Publisher(shared_feed(), seat_key(token), run)
        self.mailbox = shared_mailbox()
        self.presence = shared_presence()

    def send(self, message: dict[str, Any]) -> None:
        self.publish(message)

    def receive(self, timeout: float) -> Any:
        text = self.mailbox.take(self.token, timeout)
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return {}  # not an answer: the person is asked again

    def present(self) -> bool:
        return self.presence.present(self.token)


#: The built-in whose answers a person's coach hints (the strong reference).
COACH = "strong"


def people_for(
    claim: str, limits: PersonLimits | None = None, coach: bool = False
) -> Callable[[Participant], PersonPlayer]:
    """The runner's factory of person seats for a job played under ``claim``, each held to
    ``limits`` (the job's; the defaults if None), each with a coach of its own (:data:`COACH`)
    when ``coach``."""
    chosen = PersonLimits() if limits is None else limits

    def person(participant: Participant) -> PersonPlayer:
        line = SeatLine(participant.human, run_of(claim))
        return PersonPlayer(line, chosen, coach=make_builtin(COACH) if coach else None)

    return person
