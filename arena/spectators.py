"""Spectators in the web tier: one follower per watched match per web process reads the runner's
live feed (:mod:`hearts_runner.live`) once, and hands each event to every spectator of that
match in this process. A spectator joining late first gets the match so far (the feed's
history), then whatever follows; the two overlap and events are told apart by ``(run, seq)``.

Plain asyncio, no Django: the WebSocket consumer (:mod:`arena.consumers`) is its shell.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field

from hearts_runner.live import Feed

logger = logging.getLogger(__name__)

#: Events a spectator may lag behind before it is dropped (its page reconnects and catches up
#: from the history): a slow client never slows the others.
QUEUE_LIMIT = 5000
#: How long a new follower may take to subscribe before the spectator is told to retry.
READY_SECONDS = 5.0


@dataclass(frozen=True)
class Event:
    run: str
    seq: int
    type: str
    raw: str
    #: The (game, hand) a frame shows; None for other events.
    hand: tuple[int, int] | None = None

    @classmethod
    def parse(cls, raw: str) -> Event | None:
        try:
            data = json.loads(raw)
            hand = None
            if data["type"] == "frame":
                hand = (int(data.get("game", 0)), int(data["hand"]))
            return cls(str(data["run"]), int(data["seq"]), str(data["type"]), raw, hand)
        except (ValueError, KeyError, TypeError):
            logger.warning("a malformed live event was dropped")
            return None


def coalesce(events: list[Event]) -> list[Event]:
    """``events`` (a spectator's backlog, in order) without the frames a later frame of the
    same hand makes redundant: a frame shows its whole hand so far, so the newest one carries
    every move of those it replaces. Every other event is kept, in order.

    >>> frame = lambda seq, hand: Event("r", seq, "frame", "", (0, hand))
    >>> [e.seq for e in coalesce([frame(1, 0), frame(2, 0), frame(3, 1), frame(4, 1)])]
    [2, 4]
    >>> [e.seq for e in coalesce([frame(1, 0), Event("r", 2, "end", ""), frame(3, 0)])]
    [1, 2, 3]
    """
    kept: list[Event] = []
    for event in events:
        if (
            kept
            and event.hand is not None
            and kept[-1].hand == event.hand
            and kept[-1].run == event.run
        ):
            kept[-1] = event
        else:
            kept.append(event)
    return kept


@dataclass
class _Follower:
    task: asyncio.Task[None]
    ready: asyncio.Event
    queues: set[asyncio.Queue[Event | None]] = field(default_factory=set)


class Hub:
    """This process's followers, one per watched match."""

    def __init__(self, feed: Feed) -> None:
        self.feed = feed
        self.followers: dict[str, _Follower] = {}

    async def join(self, key: str) -> asyncio.Queue[Event | None]:
        """A queue of ``key``'s events from now on (None: this spectator fell too far behind)."""
        follower = self.followers.get(key)
        if follower is None:
            ready = asyncio.Event()
            task = asyncio.get_running_loop().create_task(self._follow(key, ready))
            follower = self.followers[key] = _Follower(task, ready)
        queue: asyncio.Queue[Event | None] = asyncio.Queue(maxsize=QUEUE_LIMIT)
        follower.queues.add(queue)
        try:
            await asyncio.wait_for(follower.ready.wait(), READY_SECONDS)
        except TimeoutError:
            self.leave(key, queue)
            raise
        return queue

    def leave(self, key: str, queue: asyncio.Queue[Event | None]) -> None:
        follower = self.followers.get(key)
        if follower is None:
            return
        follower.queues.discard(queue)
        if not follower.queues:
            follower.task.cancel()
            del self.followers[key]

    async def _follow(self, key: str, ready: asyncio.Event) -> None:
        try:
            async for raw in self.feed.follow(key, ready):
                event = Event.parse(raw)
                if event is None:
                    continue
                follower = self.followers.get(key)
                for queue in list(follower.queues if follower else ()):
                    try:
                        queue.put_nowait(event)
                    except asyncio.QueueFull:
                        follower.queues.discard(queue)  # type: ignore[union-attr]
                        with contextlib.suppress(asyncio.QueueFull):
                            queue.get_nowait()
                            queue.put_nowait(None)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 — the spectators are told; they reconnect
            logger.exception("the live follower of %s failed", key)
            follower = self.followers.pop(key, None)
            for queue in follower.queues if follower else ():
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(None)


class Cursor:
    """Which events a spectator has been sent: drops repeats, starts over on a new run."""

    def __init__(self) -> None:
        self.run: str | None = None
        self.seq = -1

    def admit(self, event: Event) -> bool:
        if event.run != self.run:
            if event.seq != 0:
                return False  # a new run is joined at its start (its history has the rest)
            self.run, self.seq = event.run, 0
            return True
        if event.seq <= self.seq:
            return False
        self.seq = event.seq
        return True


_hubs: dict[int, Hub] = {}


def hub_for(feed: Feed) -> Hub:
    """The hub of the running event loop (one per web process)."""
    loop = id(asyncio.get_running_loop())
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = Hub(feed)
    return hub


def history_events(lines: list[str]) -> list[Event]:
    return [e for e in (Event.parse(line) for line in lines) if e is not None]
