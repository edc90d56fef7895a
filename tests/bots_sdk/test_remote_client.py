"""`bidel` against a server that is not to be trusted (a real HTTP server on 127.0.0.1, as a
hostile or broken platform would answer): the token never goes to another origin, no answer
takes longer than the stated deadline however it trickles, no list is read for ever, and every
odd answer is one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from bots_sdk import remote
from tests.support import DEADLINE, child_env

TOKEN = "a-token-only-the-platform-may-see"
Behaviour = Callable[[BaseHTTPRequestHandler], None]


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        #: Set when the test is done with the server: a handler that goes on for ever stops.
        self.over = threading.Event()
        #: (method, path, Host, Authorization) of every request, in order.
        self.seen: list[tuple[str, str, str, str]] = []
        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: Server

    def _any(self) -> None:
        self.server.seen.append(
            (
                self.command,
                self.path,
                self.headers.get("Host", ""),
                self.headers.get("Authorization", ""),
            )
        )
        try:
            self.server.behaviour(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away: what a deadline does

    do_GET = do_POST = do_PUT = do_DELETE = _any

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(behaviour: Behaviour) -> Iterator[Server]:
    server = Server(behaviour)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.over.set()
        server.shutdown()
        server.server_close()


def send(handler: BaseHTTPRequestHandler, status: int, body: Any, **headers: str) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(data)


def bidel(
    home: Path, url: str, *args: str, stored: bool = False, **env: str
) -> subprocess.CompletedProcess[str]:
    """``bidel ARGS`` against ``url`` with the token in ``BIDEL_TOKEN``, or (``stored``) as
    ``bidel login`` keeps it."""
    if stored:
        folder = home / "config" / "bidel"
        folder.mkdir(parents=True, exist_ok=True)
        login = {"token": TOKEN, "username": "author", "id": 1, "expires_at": None}
        document = {"version": 1, "platforms": {url: login}}
        (folder / "credentials.json").write_text(json.dumps(document))
    variables = {
        "XDG_CONFIG_HOME": str(home / "config"),
        "BIDEL_URL": url,
        "BIDEL_TOKEN": None if stored else TOKEN,
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "bots_sdk", *args],
        cwd=home,
        env=child_env(variables),
        capture_output=True,
        text=True,
        timeout=10 * DEADLINE,
    )


def one_line_failure(done: subprocess.CompletedProcess[str], *words: str) -> str:
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "Traceback" not in said and TOKEN not in said, said
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bidel: "), said
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


ME = {"username": "author", "bots": [{"id": 1, "name": "mine"}]}
BOT = {"id": 1, "name": "mine", "owner": "author", "active_version": 1, "retired_at": None}


def platform_answers(handler: BaseHTTPRequestHandler) -> None:
    """What a platform answers to ``bidel status``: one bot, no versions, no ladders."""
    path = handler.path.split("?")[0]
    if path == "/api/users/me/":
        send(handler, 200, ME)
    elif path == "/api/bots/1/":
        send(handler, 200, BOT)
    else:
        send(handler, 200, {"results": [], "next": None})


COMMANDS = [("status",), ("status", "mine"), ("logs", "7"), ("fetch", "7"), ("matches", "mine")]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("stored", [False, True], ids=["BIDEL_TOKEN", "login"])
def test_a_redirect_to_another_origin_is_never_followed(
    tmp_path: Path, status: int, stored: bool
) -> None:
    with serving(platform_answers) as elsewhere:
        # another port of the same host, and the same port under another name: both elsewhere
        port = elsewhere.server_address[1]
        targets = [elsewhere.url, f"http://localhost:{port}"]

        def away(handler: BaseHTTPRequestHandler) -> None:
            target = targets[len(platform.seen) % 2]
            send(handler, status, b"", Location=target + handler.path)

        with serving(away) as platform:
            for command in COMMANDS:
                done = bidel(tmp_path, platform.url, *command, stored=stored)
                one_line_failure(done, "redirected to another site", "not followed")
        assert platform.seen and all(auth == f"Token {TOKEN}" for *_, auth in platform.seen)
        assert elsewhere.seen == []  # neither the token nor anything else went there


def test_a_redirect_within_the_platform_is_followed_with_the_token(tmp_path: Path) -> None:
    def slashless(handler: BaseHTTPRequestHandler) -> None:
        if handler.path == "/api/users/me/x":
            send(handler, 200, ME)
        elif handler.path.startswith("/api/users/me/"):
            send(handler, 301, b"", Location="/api/users/me")  # (relative, then absolute)
        elif handler.path == "/api/users/me":
            send(handler, 308, b"", Location=f"http://{handler.headers['Host']}/api/users/me/x")
        else:
            platform_answers(handler)

    with serving(slashless) as platform:
        done = bidel(tmp_path, platform.url, "status", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["bots"] == [BOT]
    assert all(auth == f"Token {TOKEN}" for *_, auth in platform.seen)


def test_endless_redirects_within_the_platform_end(tmp_path: Path) -> None:
    def around(handler: BaseHTTPRequestHandler) -> None:
        send(handler, 302, b"", Location=f"/again{len(handler.server.seen)}")  # type: ignore[attr-defined]

    with serving(around) as platform:
        one_line_failure(bidel(tmp_path, platform.url, "status"), "redirected more than")
    assert len(platform.seen) == remote.MAX_REDIRECTS + 1


def _over(handler: BaseHTTPRequestHandler, wait: float) -> bool:
    """Whether the test is done with ``handler``'s server (waiting ``wait`` seconds to see)."""
    return handler.server.over.wait(wait)  # type: ignore[attr-defined]


def _trickle_body(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(10**6))
    handler.end_headers()
    while not _over(handler, 0.2):  # a byte at a time until the test ends: a per-read timeout
        handler.wfile.write(b" ")  # never fires
        handler.wfile.flush()


def _trickle_headers(handler: BaseHTTPRequestHandler) -> None:
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    while not _over(handler, 0.2):
        handler.wfile.write(b"X")
        handler.wfile.flush()


def _silent(handler: BaseHTTPRequestHandler) -> None:
    _over(handler, 10 * DEADLINE)


@pytest.mark.parametrize("behaviour", [_trickle_body, _trickle_headers, _silent])
@pytest.mark.parametrize("command", [("fetch", "7"), ("status",)])
def test_a_slow_answer_ends_at_the_stated_deadline(
    tmp_path: Path, behaviour: Behaviour, command: tuple[str, ...]
) -> None:
    """``BIDEL_TIMEOUT`` (60 s by default) is for the whole answer: the server above would
    go on for ever (each read answered within a fraction of a second)."""
    with serving(behaviour) as platform:
        started = time.monotonic()
        done = bidel(tmp_path, platform.url, *command, BIDEL_TIMEOUT="2")
        took = time.monotonic() - started
    one_line_failure(done, "did not answer within 2 s")
    assert took < DEADLINE  # a bound far above 2 s and far below "for ever"


def test_a_list_that_never_ends_is_read_to_a_cap(tmp_path: Path) -> None:
    def endless(handler: BaseHTTPRequestHandler) -> None:
        if handler.path.startswith("/api/bots/1/versions/"):
            send(handler, 200, {"results": [], "next": f"{handler.path}&more"})
        else:
            platform_answers(handler)

    with serving(endless) as platform:
        one_line_failure(bidel(tmp_path, platform.url, "status", "mine"), "pages: stopped")
    pages = [path for _, path, *_ in platform.seen if path.startswith("/api/bots/1/versions/")]
    assert len(pages) == remote.MAX_PAGES


def test_an_answer_larger_than_the_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remote, "MAX_ANSWER", 1000)

    def huge(handler: BaseHTTPRequestHandler) -> None:
        send(handler, 200, b"[" + b"0," * 2000 + b"0]")

    with serving(huge) as platform:
        with pytest.raises(remote.RemoteError, match="more than 1000 bytes"):
            remote.Platform(platform.url, TOKEN).get("/api/users/me/")


FIRST_BOT = "def play(view):\n    return view.legal_plays[0]\n"
ODD = {
    "a list": [],
    "a string": "hello",
    "null": None,
    "bots not a list": {"username": "a", "bots": "x", "seats": 3, "status": 5},
    "rows of the wrong kind": {
        "username": "a",
        "bots": [{"id": None, "name": 3}],
        "seats": [{"seat": "x", "bot": 4}],
        "results": [{"id": "1/../../x"}],
        "status": "finished",
    },
    "not JSON": b"<html>\x1b[2J a page \x1b]0;title\x07</html>",
}


@pytest.mark.parametrize("body", list(ODD.values()), ids=list(ODD))
@pytest.mark.parametrize(
    "command",
    [*COMMANDS, ("reproduce", "7", "--unsafe-no-sandbox"), ("submit", "bot.py", "--bot", "b")],
    ids=lambda c: " ".join(c),
)
def test_an_odd_answer_is_one_line_and_exit_2(
    tmp_path: Path, body: Any, command: tuple[str, ...]
) -> None:
    (tmp_path / "bot.py").write_text(FIRST_BOT)

    def odd(handler: BaseHTTPRequestHandler) -> None:
        send(handler, 200, body)

    with serving(odd) as platform:
        line = one_line_failure(bidel(tmp_path, platform.url, *command))
    assert "\x1b" not in line and "\x07" not in line  # the server's escapes never reach a terminal
