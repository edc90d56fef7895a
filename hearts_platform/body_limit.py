"""Request bodies capped at the server, before Django reads them: an ASGI middleware for the
HTTP side of :mod:`hearts_platform.asgi` (a WebSocket message's bound is uvicorn's
``--ws-max-size``, ``WS_MESSAGE_MAX_BYTES`` in the settings, on every command line that
starts the server).

Django reads a request's whole body into a spooled file before any view or parser sees it,
whatever its size; a client could send gigabytes at one, or trickle bytes to hold a worker's
connection. :class:`BodyLimit` refuses, in the API's error shape:

- 413 at once for a ``Content-Length`` past ``max_bytes`` (nothing of the body is read);
- 413 as soon as the bytes counted in a stream pass it (a chunked body declares no length);
- 408 when the whole body has not come within ``seconds`` of the request (a slow client);
- 400 for a ``Content-Length`` that is not one decimal number.

The application is then told the client left (``http.disconnect``: Django stops reading),
and whatever it might still send is dropped. Bounds within the cap (a JSON body's bytes and
depth, a form's fields, an upload's size) are the parsers' (:mod:`arena.api.parsers`,
:mod:`arena.uploads`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_DISCONNECT: Message = {"type": "http.disconnect"}


def _content_length(scope: Scope) -> int | None | str:
    """The declared length; None without one; the header's text when it is no number."""
    values = [v for k, v in scope.get("headers", []) if k.lower() == b"content-length"]
    if not values:
        return None
    text = values[0].decode("latin-1").strip()
    if len(values) > 1 or not text.isdigit() or not text.isascii():
        return text[:40]
    return int(text)


async def refuse(send: Send, status: int, message: str, *, api: bool = True) -> None:
    """Answer ``status`` saying ``message``: the API's error shape, or plain text for a page;
    the connection closes after it (the rest of a body is never read)."""
    if api:
        body, kind = json.dumps({"detail": [message]}).encode(), b"application/json"
    else:
        body, kind = (message + "\n").encode(), b"text/plain; charset=utf-8"
    headers = [
        (b"content-type", kind),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """ASGI middleware: an HTTP request's body is at most ``max_bytes`` and all there within
    ``seconds`` of the request; other scopes (WebSocket, lifespan) pass through."""

    def __init__(self, app: App, *, max_bytes: int, seconds: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = str(scope.get("path", "")).startswith("/api/")
        declared = _content_length(scope)
        if isinstance(declared, str):
            await refuse(send, 400, f"the Content-Length {declared!r} is not a number", api=api)
            return
        if declared is not None and declared > self.max_bytes:
            await refuse(send, 413, self.too_large(), api=api)
            return
        body = _BoundedBody(self, receive, send, api=api)
        await self.app(scope, body.receive, body.send)

    def too_large(self) -> str:
        limit = self.max_bytes
        return f"the request body is more than {limit} bytes; the limit is {limit} bytes"


class _BoundedBody:
    """One request's ``receive`` and ``send`` as the application sees them."""

    def __init__(self, limit: BodyLimit, receive: Receive, send: Send, *, api: bool) -> None:
        self.limit = limit
        self._receive = receive
        self._send = send
        self.api = api
        self.deadline = asyncio.get_running_loop().time() + limit.seconds
        self.count = 0
        self.complete = False  # the whole body came: receive() now only hears a disconnect
        self.answered = False  # the application began its response
        self.refused = False  # we answered instead of it

    async def receive(self) -> Message:
        if self.refused:
            return _DISCONNECT
        if self.complete:
            return await self._receive()
        left = self.deadline - asyncio.get_running_loop().time()
        try:
            message = await asyncio.wait_for(self._receive(), timeout=max(left, 0.0))
        except TimeoutError:
            seconds = self.limit.seconds
            return await self._refuse(408, f"the request body did not come within {seconds} s")
        if message["type"] != "http.request":
            return message
        self.count += len(message.get("body", b""))
        if self.count > self.limit.max_bytes:
            return await self._refuse(413, self.limit.too_large())
        self.complete = not message.get("more_body", False)
        return message

    async def _refuse(self, status: int, message: str) -> Message:
        self.refused = True
        if not self.answered:
            await refuse(self._send, status, message, api=self.api)
        return _DISCONNECT

    async def send(self, message: Message) -> None:
        if self.refused:
            return  # the client has its answer: nothing more goes out
        if message["type"] == "http.response.start":
            self.answered = True
        await self._send(message)
