"""WebSocket consumers (Django Channels): thin shells over :mod:`arena.spectators`.

- ``/ws/matches/<id>/live/``: a running match as its runner plays it. Only what the runner
  published reaches here: a game with a person at the table is published as a bystander sees
  it.
- ``/ws/play/<id>/``: a person's seat: the runner's questions (the view a bot gets), and the
  person's answers back to the runner's mailbox. Only the seat's holder gets in: its secret
  comes in the seat cookie (:data:`arena.services.people.SEAT_COOKIE`, HttpOnly), never in the
  address, or the visitor is the seat's signed-in user. While the socket is open the seat is
  marked present (the runner gives the seat up when no page is open for
  ``HUMAN_AWAY_SECONDS``), and a game that ended without a result (left, or no runner began
  it) says ``finished``.

Both send the current run's events so far first (a reload or a dropped connection resumes),
then each new one; a finished match says ``finished``: its page has the replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from arena import selectors, spectators
from arena.api.parsers import BodyError, decode_json
from arena.models import Match
from arena.services import people
from hearts_runner import live

#: The longest message a person's page may send (an answer is a few cards).
MAX_ANSWER = 2000
#: How often an open seat page marks its seat present and looks at its game's status (well
#: within hearts_runner.live.PRESENT_SECONDS, which one mark lasts).
HEARTBEAT_SECONDS = 5.0


#: No channel layer for our consumers: they read the runners' feeds through arena.spectators' hub
#: and take no message from Channels' layer. (Subscribed, each socket would wait on the Redis
#: layer's blocking receive, which redis 8's client ends with a TimeoutError every 5 s: the
#: consumer died, and its page reconnected, five seconds after every connect.)
NO_CHANNEL_LAYER = "bidel-consumers-use-none"


class _FeedConsumer(AsyncWebsocketConsumer):
    channel_layer_alias = NO_CHANNEL_LAYER
    key = ""

    async def connect(self) -> None:
        self.queue: asyncio.Queue[spectators.Event | None] | None = None
        self.forward: asyncio.Task[None] | None = None
        found = await self._find()
        if found is None:
            await self.close(code=4404)
            return
        hello, status, claim = found
        await self.accept()
        await self._send({"type": "hello", **hello, "status": status})
        if status not in (Match.Status.QUEUED, Match.Status.RUNNING):
            await self._send({"type": "finished", "status": status})
            await self.close()
            return
        feed = live.shared_feed()
        self.hub = spectators.hub_for(feed)
        try:
            self.queue = await self.hub.join(self.key)
        except TimeoutError:
            await self.close(code=4503)
            return
        cursor = spectators.Cursor()
        if status == Match.Status.RUNNING and claim:
            # The feed so far of the run now playing (not a lost runner's, nor a stale one).
            current = live.run_of(claim)
            for event in spectators.history_events(await sync_to_async(feed.history)(self.key)):
                if event.run == current and cursor.admit(event):
                    await self.send(text_data=event.raw)
        self.forward = asyncio.get_running_loop().create_task(self._forward(cursor))

    async def _find(self) -> tuple[dict[str, Any], str, str] | None:
        raise NotImplementedError

    async def _forward(self, cursor: spectators.Cursor) -> None:
        """Send each new event; when several are waiting (a burst of moves, a slow client),
        only the newest frame of a hand (it shows every move of the ones it replaces)."""
        assert self.queue is not None
        while True:
            backlog = [await self.queue.get()]
            while not self.queue.empty():
                backlog.append(self.queue.get_nowait())
            if None in backlog:  # too far behind: the page reconnects and catches up
                await self.close(code=4408)
                return
            events = [e for e in backlog if e is not None and cursor.admit(e)]
            for event in spectators.coalesce(events):
                await self.send(text_data=event.raw)

    async def disconnect(self, code: int) -> None:
        if self.forward is not None:
            self.forward.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.forward
        if self.queue is not None:
            self.hub.leave(self.key, self.queue)

    async def _send(self, data: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(data))


class MatchLiveConsumer(_FeedConsumer):
    async def _find(self) -> tuple[dict[str, Any], str, str] | None:
        match_id = int(self.scope["url_route"]["kwargs"]["match_id"])
        self.key = live.key_for("match", match_id)
        found = await database_sync_to_async(selectors.match_claim_state)(match_id)
        if found is None:
            return None
        return {"match": match_id}, found[0], found[1]

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        pass  # a spectator has nothing to say


class NoSuchSocket(AsyncWebsocketConsumer):
    """Any other WebSocket path: refused (never an error in the server)."""

    channel_layer_alias = NO_CHANNEL_LAYER

    async def connect(self) -> None:
        await self.close(code=4404)


class PlayConsumer(_FeedConsumer):
    token = ""

    async def connect(self) -> None:
        self.beat: asyncio.Task[None] | None = None
        self.match_id = int(self.scope["url_route"]["kwargs"]["match_id"])
        user = self.scope.get("user")
        self.seat = await database_sync_to_async(selectors.person_seat_state)(
            self.match_id,
            token=people.seat_cookie(self.scope.get("cookies")),
            user_id=user.pk if getattr(user, "is_authenticated", False) else None,
        )
        if self.seat is None:
            # Not this visitor's seat (or no such game): said after the handshake, so that
            # the page can tell its visitor, the same for every case.
            await self.accept()
            await self._send({"type": "refused", "match": self.match_id})
            await self.close(code=4403)
            return
        await super().connect()
        if self.forward is not None:  # accepted, the game open: the seat's page is here
            self.beat = asyncio.get_running_loop().create_task(self._beat())

    async def _find(self) -> tuple[dict[str, Any], str, str] | None:
        seat, status, claim, self.token, playing_since = self.seat
        self.key = live.seat_key(self.token)
        hello = {"match": self.match_id, "seat": seat, "started": playing_since is not None}
        return hello, status, claim

    async def _beat(self) -> None:
        """Mark the seat present while the page is open; say ``finished`` when its game ends
        without a result; end one that no runner of people's games has begun in time."""
        presence = live.shared_presence()
        while True:
            try:
                await sync_to_async(presence.touch)(self.token)
            except Exception:  # noqa: BLE001 — unseen this once: the runner waits a minute
                pass
            state = await database_sync_to_async(selectors.match_status)(self.match_id)
            status, playing_since = state or (Match.Status.FAILED, None)
            if status == Match.Status.FAILED:
                await self._send({"type": "finished", "status": status})
                await self.close()
                return
            if status == Match.Status.FINISHED:
                return  # the stored replay is announced on the match's own feed
            if playing_since is None:
                await database_sync_to_async(people.human_game_expire)(match_id=self.match_id)
            await asyncio.sleep(HEARTBEAT_SECONDS)

    async def disconnect(self, code: int) -> None:
        beat = getattr(self, "beat", None)
        if beat is not None:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
            with contextlib.suppress(Exception):  # the mark's own end comes soon enough
                await sync_to_async(live.shared_presence().clear)(self.token)
        await super().disconnect(code)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """An answer: ``{"id": question, "action": card or cards}``, to the runner's mailbox
        (the runner judges it: an illegal one is refused there and asked again)."""
        if text_data is None or len(text_data) > MAX_ANSWER:
            return
        try:  # the API's bounds (depth first: a deep array would recurse), never raising
            data = decode_json(text_data, max_bytes=MAX_ANSWER)
        except BodyError:
            return
        if not isinstance(data, dict) or not isinstance(data.get("id"), int):
            return
        answer = json.dumps({"id": data["id"], "action": data.get("action")})
        await sync_to_async(live.shared_mailbox().put)(self.token, answer)
