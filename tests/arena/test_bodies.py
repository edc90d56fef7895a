"""Bad bodies are 4xx everywhere: every API view the URL resolver knows, every method it
accepts, anonymous, signed in with a token, and signed in by session, gets a body nested
100,000 deep, a deep one within the size bound, 200 KB of JSON, bytes that are not UTF-8,
JSON that is not an object, JSON under another media type or charset, broken multipart and a
form of too many fields — and never answers 5xx; every view parses with the one policy
(arena/api/parsers.py). The pages' forms get the same bodies."""

from __future__ import annotations

import functools
import json
import re
import select
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.converters import IntConverter
from rest_framework.settings import api_settings
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from arena import services
from arena.api.parsers import MAX_JSON_BYTES, MAX_JSON_DEPTH, PARSER_CLASSES
from arena.models import BotVersion, Match
from arena.services import tournaments
from hearts_platform.urls import IdConverter
from tests.arena.browser import web_server
from tests.arena.live import worker_env
from tests.support import DEADLINE, PROJECT_DIR

pytestmark = pytest.mark.django_db

PASSWORD = "a long passphrase"


@dataclass(frozen=True)
class Body:
    name: str
    content_type: str
    data: bytes


BODIES = [
    # The red team's: 200 KB of brackets, 100,000 deep (past the size bound: a 413).
    Body("deep_and_large", "application/json", b"[" * 100_000 + b"]" * 100_000),
    # Deep but within the size bound: the depth check, not the decoder's recursion, stops it.
    Body("deep", "application/json", b"[" * 30_000 + b"]" * 30_000),
    Body("deep_objects", "application/json", b'{"a":' * 9_000 + b"1" + b"}" * 9_000),
    Body("large", "application/json", json.dumps({"description": "x" * 200_000}).encode()),
    Body("not_utf8", "application/json", b'{"name": "\xff\xfe", "username": "\xc3"}'),
    Body("huge_number", "application/json", b'{"hands": 1e999, "seats": [' + b"9" * 5000 + b"]}"),
    Body("nan", "application/json", b'{"hands": NaN}'),
    # JSON that is not an object, where every view takes one.
    Body("array", "application/json", b'[{"username": "ada"}, 1]'),
    Body("string", "application/json", b'"ada"'),
    Body("null", "application/json", b"null"),
    Body("number", "application/json", b"7"),
    Body("empty", "application/json", b""),
    Body("wrong_type", "text/plain", b'{"name": "x"}'),
    Body("json_as_form", "application/x-www-form-urlencoded", b'{"name": ["x"]}'),
    Body("bz2_charset", "application/json; charset=bz2_codec", b"BZh91AY&SY"),
    Body("unknown_charset", "application/json; charset=klingon", b'{"name": "x"}'),
    Body("many_fields", "application/x-www-form-urlencoded", b"&".join([b"a=1"] * 3000)),
    Body("form_not_utf8", "application/x-www-form-urlencoded", b"username=\xff&password=\xfe"),
    Body("no_boundary", "multipart/form-data", b"--x\r\nnonsense"),
    Body(
        "broken_multipart",
        "multipart/form-data; boundary=xyz",
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.py"\r\n'
        b"Content-Transfer-Encoding: base64\r\n\r\n@@@\r\n--xy",
    ),
    Body("empty_boundary", "multipart/form-data; boundary=", b"--\r\n\r\n"),
]


@dataclass(frozen=True)
class Endpoint:
    """One API route: its URL name, the view's callback, and the path parameters' names."""

    name: str
    callback: Any
    parameters: tuple[str, ...]

    @property
    def methods(self) -> list[str]:
        actions = getattr(self.callback, "actions", None)
        view = self.callback.cls
        mapped = actions or [m for m in view.http_method_names if hasattr(view, m)]
        return sorted({*mapped, "options"} - {"head"})  # (HEAD answers without a body)


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        else:
            yield prefix + str(entry.pattern), entry


def _endpoints() -> list[Endpoint]:
    """Every route whose view is a DRF view, whatever file added it."""
    found = []
    for route, pattern in _walk(get_resolver().url_patterns):
        cls = getattr(pattern.callback, "cls", None)
        if cls is None or not issubclass(cls, APIView):
            continue
        assert pattern.name, f"{route}: an API route without a name cannot be walked"
        parameters = tuple(pattern.pattern.regex.groupindex)
        found.append(Endpoint(pattern.name, pattern.callback, parameters))
    return found


ENDPOINTS = _endpoints()


def _id(endpoint: Endpoint) -> str:
    return endpoint.name + ("+format" if "format" in endpoint.parameters else "")


def test_the_walk_finds_the_api() -> None:
    names = {e.name for e in ENDPOINTS}
    assert {"token", "user-list", "bot-detail", "bot-versions", "match-list"} <= names
    assert len(ENDPOINTS) > 20  # with their format-suffix twins


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A staff owner of a bot with a version, a finished match and a tournament: every view
    gets past its permissions and lookups to the body (throttles opened wide for the walk)."""
    for scope in list(SimpleRateThrottle.THROTTLE_RATES):
        monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, scope, "100000/hour")
    owner = services.user_create(username="ada", password=PASSWORD)
    owner.is_staff = True
    owner.save()
    bot = services.bot_create(owner=owner, name="ada-bot")
    BotVersion.objects.create(bot=bot, number=1, filename="bot.py", code=b"x = 1\n", sha256="0")
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=[services.SeatSpec(builtin=name) for name in ("low", "random", "low", "random")],
        hands=1,
        requested_by=owner,
    )
    services.match_run(match_id=match.pk)
    tournament = tournaments.tournament_create(
        name="cup", format="round_robin", bots=["low", "random", "heuristic", "montecarlo"]
    )
    ids = {"bot": bot.pk, "match": match.pk, "tournament": tournament.pk, "user": owner.pk}
    return {"owner": owner, "ids": ids}


def _path(endpoint: Endpoint, ids: dict[str, int]) -> str:
    values = {"pk": ids.get(endpoint.name.split("-")[0], 1), "number": 1, "format": "json"}
    return reverse(endpoint.name, kwargs={p: values.get(p, 1) for p in endpoint.parameters})


#: A session's CSRF secret (Django takes an unmasked one): the session client's body gets
#: past the check to the parsers, as a page's JavaScript does.
CSRF_SECRET = "b" * 32


def _clients(owner: Any) -> dict[str, Any]:
    token = APIClient()
    token.force_authenticate(owner)
    session = APIClient(enforce_csrf_checks=True)  # DRF's CSRF check reads the form: parses
    session.force_login(owner)
    session.cookies["csrftoken"] = CSRF_SECRET
    session.credentials(HTTP_X_CSRFTOKEN=CSRF_SECRET)
    return {"anonymous": APIClient(), "token": token, "session": session}


def _renders_json(endpoint: Endpoint) -> bool:
    """Whether the view answers in JSON (the schema's HTML page answers in HTML)."""
    renderers = endpoint.callback.cls(**endpoint.callback.initkwargs).renderer_classes
    return any(r.media_type == "application/json" for r in renderers)


def _refusal_shape(response: Any, where: str) -> None:
    """A 4xx says why in the API's one error shape."""
    if response.status_code < 400:
        return
    assert response.get("Content-Type") == "application/json", (where, response.content[:300])
    body = json.loads(response.content)
    assert isinstance(body, dict) and body, (where, body)
    assert all(isinstance(v, list) and all(isinstance(m, str) for m in v) for v in body.values()), (
        where,
        body,
    )


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=_id)
def test_no_bad_body_is_a_server_error(endpoint: Endpoint, world: dict[str, Any]) -> None:
    path = _path(endpoint, world["ids"])
    for who, client in _clients(world["owner"]).items():
        for method in endpoint.methods:
            if endpoint.name == "health" and method == "get":
                continue  # reads no body, and waits for workers that no test here runs
            for body in BODIES:
                response = client.generic(method.upper(), path, body.data, body.content_type)
                where = f"{method.upper()} {path} ({who}, {body.name})"
                assert response.status_code < 500, f"{where}: {response.content[:300]!r}"
                if _renders_json(endpoint):
                    _refusal_shape(response, where)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=_id)
def test_every_api_view_parses_with_the_one_policy(endpoint: Endpoint) -> None:
    actions = getattr(endpoint.callback, "actions", None) or {"": ""}
    for action in actions.values():
        view = endpoint.callback.cls(**endpoint.callback.initkwargs)
        view.action = action or None
        assert [type(p) for p in view.get_parsers()] == PARSER_CLASSES, (endpoint.name, action)


def test_the_settings_name_the_policy() -> None:
    assert api_settings.DEFAULT_PARSER_CLASSES == PARSER_CLASSES


# --- the four the red team named, exactly -----------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        (b"[" * 100_000 + b"]" * 100_000, 413, f"the limit is {MAX_JSON_BYTES} bytes"),
        (b"[" * 30_000 + b"]" * 30_000, 400, f"nests deeper than {MAX_JSON_DEPTH} levels"),
        (b'{"username": "\xff"}', 400, "not UTF-8"),
        (b'{"username": ', 400, "the JSON is not valid"),
    ],
)
def test_the_named_endpoints_say_what_is_wrong(
    body: bytes, status: int, said: str, world: dict[str, Any]
) -> None:
    bot = world["ids"]["bot"]
    for method, path in [
        ("post", "/api/matches/"),
        ("post", "/api/token/"),
        ("post", "/api/users/"),
        ("patch", f"/api/bots/{bot}/"),
    ]:
        for who, client in _clients(world["owner"]).items():
            if path != "/api/token/" and path != "/api/users/" and who == "anonymous":
                continue  # refused before its body is read: no permission
            response = client.generic(method.upper(), path, body, "application/json")
            assert response.status_code == status, (method, path, who, response.content[:200])
            assert any(said in m for m in response.json()["detail"]), response.json()
    assert Match.objects.count() == 1  # nothing made by any of them


def test_a_body_within_the_bounds_is_read_as_before(world: dict[str, Any]) -> None:
    client = _clients(world["owner"])["token"]
    rules = {"preset": "standard", "heart_points": [1] * 13, "target": 50}
    made = client.post(
        "/api/matches/", {"seats": ["low", "random", "low", "random"], "rules": rules}, "json"
    )
    assert made.status_code == 201, made.content
    text = "é" * 2000  # a description at its longest, as \\u escapes: 12,000 bytes
    body = json.dumps({"description": text}).encode()
    changed = client.patch(
        f"/api/bots/{world['ids']['bot']}/", body, content_type="application/json"
    )
    assert changed.status_code == 200 and changed.json()["description"] == text


# --- the pages' forms --------------------------------------------------------------------------

#: What a page's string parameters are given (an int parameter gets a real id).
PAGE_PARAMETERS = {"name": "bots", "token": "no-such-token", "uidb64": "MQ"}


def _pages(ids: dict[str, int]) -> list[str]:
    """Every page of ours that takes a POST (or might): its path with real ids, filled in from
    the route itself (a page needs no name to be walked)."""
    paths = []
    for route, pattern in _walk(get_resolver().url_patterns):
        if route.startswith(("admin/", "api/")) or getattr(pattern.callback, "cls", None):
            continue
        fill = functools.partial(_fill, converters=pattern.pattern.converters, ids=ids)
        paths.append("/" + _PARAMETER.sub(fill, route))
    return paths


_PARAMETER = re.compile(r"<(?:\w+:)?(?P<name>\w+)>")


def _fill(match: re.Match[str], *, converters: dict[str, Any], ids: dict[str, int]) -> str:
    name = match["name"]
    if isinstance(converters.get(name), (IntConverter, IdConverter)):
        return str(ids.get(name.removesuffix("_id"), 1))
    return PAGE_PARAMETERS.get(name, "x")


def test_no_bad_body_to_a_page_is_a_server_error(world: dict[str, Any]) -> None:
    owner = world["owner"]
    signed_in = Client()
    signed_in.force_login(owner)
    pages = _pages({**world["ids"], "ladder": 1})
    assert f"/bots/{world['ids']['bot']}/upload/" in pages and "/signup/" in pages
    for who, client in {"anonymous": Client(), "signed in": signed_in}.items():
        for path in pages:
            for body in BODIES:
                response = client.generic("POST", path, body.data, body.content_type)
                where = f"POST {path} ({who}, {body.name})"
                assert response.status_code < 500, f"{where}: {response.content[:300]!r}"


# --- the server's cap: a real uvicorn, as production starts it ---------------------------------

#: The test server's body clock: short, so that the slow client's wait is short (the answer is
#: awaited with a deadline far longer than it).
BODY_SECONDS = 2


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _answer(sock: socket.socket, deadline: float) -> tuple[int, bytes]:
    """The status and the body of the server's answer, read until it closes."""
    received = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], deadline - time.monotonic())
        if not ready:
            break
        chunk = sock.recv(65536)
        if not chunk:
            break
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 "), received[:300]
    return int(head.split()[1]), body


def _request_head(path: str, host: str, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json"]
    return ("\r\n".join([*lines, *headers]) + "\r\n\r\n").encode()


def _send_chunked(sock: socket.socket, size: int, *, end: bool) -> None:
    """``size`` bytes of body in chunks of 64 KiB (the last one shorter), and the closing
    chunk when ``end``."""
    while size > 0:
        part = min(size, 65536)
        sock.sendall(b"%x\r\n%s\r\n" % (part, b" " * part))
        size -= part
    if end:
        sock.sendall(b"0\r\n\r\n")


@pytest.fixture
def server(settings: Any) -> Iterator[Any]:
    env = worker_env(REQUEST_BODY_SECONDS=str(BODY_SECONDS))
    with web_server(env) as running:
        yield running


@pytest.mark.django_db(transaction=True)
def test_the_server_caps_request_bodies(server: Any, settings: Any) -> None:
    host, port = _address(server.url)
    limit = settings.REQUEST_BODY_MAX_BYTES
    said = f"the limit is {limit} bytes"
    for path in ("/api/users/", "/api/token/", "/bots/1/upload/"):
        # Declared too large: refused at once, before any of the body is sent.
        with socket.create_connection((host, port), timeout=DEADLINE) as sock:
            sock.sendall(_request_head(path, "127.0.0.1", f"Content-Length: {limit + 1}"))
            status, body = _answer(sock, time.monotonic() + DEADLINE)
        assert status == 413 and said.encode() in body, (path, body)
        assert body.startswith(b'{"detail"') == path.startswith("/api/"), body  # pages: text

        # Streamed without a length: refused once the bytes counted pass the limit (sent to
        # the byte: more, unread when the server closes, would reset the connection).
        with socket.create_connection((host, port), timeout=DEADLINE) as sock:
            sock.sendall(_request_head(path, "127.0.0.1", "Transfer-Encoding: chunked"))
            _send_chunked(sock, limit + 1, end=False)
            status, body = _answer(sock, time.monotonic() + DEADLINE)
        assert status == 413 and said.encode() in body, (path, body)

    # At the limit, streamed: the server takes it whole and the application answers (DRF
    # reads a body of no declared length as empty: the fields are missing).
    with socket.create_connection((host, port), timeout=DEADLINE) as sock:
        sock.sendall(_request_head("/api/users/", "127.0.0.1", "Transfer-Encoding: chunked"))
        _send_chunked(sock, limit, end=True)
        status, body = _answer(sock, time.monotonic() + DEADLINE)
    assert status == 400 and b"This field is required" in body, body

    # Too slow: the rest of the body not there within REQUEST_BODY_SECONDS.
    with socket.create_connection((host, port), timeout=DEADLINE) as sock:
        sock.sendall(_request_head("/api/users/", "127.0.0.1", "Content-Length: 100") + b"{")
        started = time.monotonic()
        status, body = _answer(sock, started + DEADLINE)
    assert status == 408 and f"within {BODY_SECONDS} s".encode() in body, body
    assert time.monotonic() - started >= BODY_SECONDS  # the clock, not a closed socket

    # Within the cap, a body reaches the one parser policy as in the other tests.
    deep = b"[" * 30_000 + b"]" * 30_000
    with socket.create_connection((host, port), timeout=DEADLINE) as sock:
        sock.sendall(_request_head("/api/users/", "127.0.0.1", f"Content-Length: {len(deep)}"))
        sock.sendall(deep)
        status, body = _answer(sock, time.monotonic() + DEADLINE)
    assert status == 400 and b"nests deeper than" in body, body
    assert "Traceback" not in server.log(), server.log()[-3000:]


@pytest.mark.django_db(transaction=True)
def test_the_server_caps_websocket_messages(server: Any, settings: Any) -> None:
    match = services.match_create(  # queued: its live feed stays open for a spectator
        kind=Match.Kind.CHALLENGE,
        seats=[services.SeatSpec(builtin="low") for _ in range(4)],
        hands=1,
    )
    host, port = _address(server.url)
    url = f"ws://{host}:{port}/ws/matches/{match.pk}/live/"
    limit = settings.WS_MESSAGE_MAX_BYTES
    with ws_connect(url, origin=f"http://{host}:{port}", open_timeout=DEADLINE) as socket_:
        assert json.loads(socket_.recv(timeout=DEADLINE))["type"] == "hello"
        socket_.send("x" * limit)  # at the limit: taken (a spectator's words are ignored)
        socket_.send("x" * (limit + 1))
        with pytest.raises(ConnectionClosed) as closed:
            socket_.recv(timeout=DEADLINE)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009, closed.value


def test_every_command_line_that_starts_the_server_bounds_websocket_messages(
    settings: Any,
) -> None:
    """Production's (Dockerfile, docker-compose.yml), the README's, the demo's and the tests'
    servers all run uvicorn with the one WebSocket message bound (its default is 16 MiB)."""
    flag = f"--ws-max-size={settings.WS_MESSAGE_MAX_BYTES}"
    started = "hearts_platform.asgi:application"
    for name in ("Dockerfile", "docker-compose.yml", "README.md"):
        lines = [line for line in (PROJECT_DIR / name).read_text().splitlines() if started in line]
        assert lines and all(flag in line for line in lines), (name, lines)
    for name in ("arena/management/commands/demo.py", "tests/arena/browser.py"):
        text = (PROJECT_DIR / name).read_text()
        argv = text[text.index(started) : text.index("]", text.index(started))]
        assert '"--ws-max-size={settings.WS_MESSAGE_MAX_BYTES}"' in argv, (name, argv)
