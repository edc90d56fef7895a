"""WebSocket consumers (Django Channels): thin shells over :mod:`arena.live`.

- ``/ws/matches/<id>/live/``: a running match as its runner plays it. Only what the runner
  published reaches here: a game with a person at the table is published as a bystander sees
  it.
- ``/ws/play/<token>/``: a person's seat: the runner's questions (the view a bot gets), and the
  person's answers back to the runner's mailbox. The token is the seat's secret.

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

from arena import live, selectors
from arena.models import Match
from hearts_runner import live as feeds

#: The longest message a person's page may send (an answer is a few cards).
MAX_ANSWER = 2000


class _FeedConsumer(AsyncWebsocketConsumer):
    key = ""

    async def connect(self) -> None:
        self.queue: asyncio.Queue[live.Event | None] | None = None
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
        feed = feeds.shared_feed()
        self.hub = live.hub_for(feed)
        try:
            self.queue = await self.hub.join(self.key)
        except TimeoutError:
            await self.close(code=4503)
            return
        cursor = live.Cursor()
        if status == Match.Status.RUNNING and claim:
            # The feed so far of the run now playing (not a lost runner's, nor a stale one).
            current = feeds.run_of(claim)
            for event in live.history_events(await sync_to_async(feed.history)(self.key)):
                if event.run == current and cursor.admit(event):
                    await self.send(text_data=event.raw)
        self.forward = asyncio.get_running_loop().create_task(self._forward(cursor))

    async def _find(self) -> tuple[dict[str, Any], str, str] | None:
        raise NotImplementedError

    async def _forward(self, cursor: live.Cursor) -> None:
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
            for event in live.coalesce(events):
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
        self.key = feeds.key_for("match", match_id)
        found = await database_sync_to_async(selectors.match_claim_state)(match_id)
        if found is None:
            return None
        return {"match": match_id}, found[0], found[1]

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        pass  # a spectator has nothing to say


class PlayConsumer(_FeedConsumer):
    async def _find(self) -> tuple[dict[str, Any], str, str] | None:
        self.token = str(self.scope["url_route"]["kwargs"]["token"])
        self.key = feeds.seat_key(self.token)
        found = await database_sync_to_async(selectors.person_seat_state)(self.token)
        if found is None:
            return None
        match_id, seat, status, claim = found
        return {"match": match_id, "seat": seat}, status, claim

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """An answer: ``{"id": question, "action": card or cards}``, to the runner's mailbox
        (the runner judges it: an illegal one is refused there and asked again)."""
        if text_data is None or len(text_data) > MAX_ANSWER:
            return
        try:
            data = json.loads(text_data)
        except ValueError:
            return
        if not isinstance(data, dict) or not isinstance(data.get("id"), int):
            return
        answer = json.dumps({"id": data["id"], "action": data.get("action")})
        await sync_to_async(feeds.shared_mailbox().put)(self.token, answer)
