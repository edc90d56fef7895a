"""The platform's REST API from the SDK, in the standard library alone (``bidel-sdk`` keeps
no third-party dependency): a small client (:class:`Platform`) and the credentials file
``bidel login`` writes.

Every failure is a :class:`RemoteError` whose message is one line a person can act on (the
platform's own words where it gave some): ``bidel`` prints it and exits 2.

The credentials live in ``$XDG_CONFIG_HOME/bidel/credentials.json`` (``~/.config`` without
it), mode 0600 in a folder of mode 0700, keyed by the platform's URL; ``BIDEL_TOKEN``
overrides them. A token is never printed.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import socket
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bots_sdk
from bots_sdk.ids import parse_id

#: Where ``--url`` points without ``BIDEL_URL``: the platform ``make demo`` runs.
DEFAULT_URL = "http://localhost:8000"
#: The most bytes of an answer read (a record of a long game is a few hundred KB).
MAX_ANSWER = 64 * 1024 * 1024
#: Seconds a request may take, its whole answer and its redirects included
#: (``BIDEL_TIMEOUT``).
TIMEOUT = 60.0
#: Redirects followed for one request, each within the platform's own origin.
MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: Pages of one list read at most (a list of 100 a page: 100,000 rows).
MAX_PAGES = 1000


class RemoteError(Exception):
    """Talking to the platform failed: ``str()`` is one line saying why. ``status`` is the
    HTTP status when the platform answered (0 when it could not be reached)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def platform_url(url: str | None = None) -> str:
    """The platform to talk to: ``url``, else ``BIDEL_URL``, else :data:`DEFAULT_URL`, as
    its canonical key (no trailing slash).

    >>> platform_url("http://example.org:8000/")
    'http://example.org:8000'
    """
    chosen = (url or os.environ.get("BIDEL_URL") or DEFAULT_URL).strip().rstrip("/")
    parts = urllib.parse.urlsplit(chosen)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RemoteError(f"not a platform URL: {chosen!r} (for example {DEFAULT_URL})")
    return chosen


def request_timeout() -> float:
    """Seconds a request may take: ``BIDEL_TIMEOUT``, else :data:`TIMEOUT`."""
    text = os.environ.get("BIDEL_TIMEOUT", "").strip()
    if not text:
        return TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise RemoteError(f"BIDEL_TIMEOUT={text!r} is not a positive number of seconds")
    return seconds


def _origin(url: str) -> tuple[str, str, int]:
    """Where ``url`` is, as a browser would bind a credential to it.

    >>> _origin("HTTP://Example.org/api/") == _origin("http://example.org:80/x")
    True
    >>> _origin("https://example.org") == _origin("http://example.org")
    False
    """
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    default = 443 if parts.scheme.lower() == "https" else 80
    return parts.scheme.lower(), (parts.hostname or "").lower(), port or default


def _shown(url: str) -> str:
    """``url``'s origin, for a message (never its path or query: they may be long)."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"[:200]


# --- the credentials file ----------------------------------------------------------------------


def credentials_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "bidel" / "credentials.json"


def _read_credentials() -> dict[str, Any]:
    path = credentials_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise RemoteError(f"cannot read {path}: {exc} (remove it and log in again)") from None
    platforms = data.get("platforms") if isinstance(data, dict) else None
    return platforms if isinstance(platforms, dict) else {}


def _write_credentials(platforms: Mapping[str, Any]) -> None:
    """Replace the file at once (a temporary file of mode 0600, then renamed): a reader
    never sees half of it, nor a moment when anyone else may read it."""
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor, temporary = tempfile.mkstemp(prefix=".credentials-", dir=path.parent)
    try:
        os.fchmod(descriptor, 0o600)
        with os.fdopen(descriptor, "w") as out:
            json.dump({"version": 1, "platforms": dict(platforms)}, out, indent=2, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


#: The names of this machine's loopback address: one server, however its address is written.
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "localhost.localdomain"})


def login_key(url: str) -> str:
    """Which stored login ``url`` uses: one per server, however its address is written
    (``localhost`` and ``127.0.0.1`` are one; the host in any case; the scheme's own port
    written or not).

    >>> login_key("http://localhost:8001") == login_key("http://127.0.0.1:8001")
    True
    >>> login_key("HTTP://Example.org:80/"), login_key("https://example.org:8443/bidel")
    ('http://example.org', 'https://example.org:8443/bidel')
    >>> login_key("http://[::1]:8000")
    'http://127.0.0.1:8000'
    """
    scheme, host, port = _origin(url)
    if host in LOOPBACK:
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    default = 443 if scheme == "https" else 80
    path = urllib.parse.urlsplit(url).path.rstrip("/")
    return f"{scheme}://{host}" + ("" if port == default else f":{port}") + path


def stored_login(url: str) -> dict[str, Any] | None:
    """What ``bidel login`` stored for ``url``'s server: token, username, token id, expiry
    (a login stored under the URL exactly as written, as earlier versions kept it, too)."""
    platforms = _read_credentials()
    entry = platforms.get(login_key(url), platforms.get(url))
    return entry if isinstance(entry, dict) and isinstance(entry.get("token"), str) else None


def store_login(url: str, login: Mapping[str, Any]) -> None:
    platforms = _read_credentials()
    platforms.pop(url, None)  # (an earlier version's key for it)
    platforms[login_key(url)] = dict(login)
    _write_credentials(platforms)


def forget_login(url: str) -> bool:
    """Forget the token of ``url``'s server; whether there was one."""
    platforms = _read_credentials()
    found = [key for key in dict.fromkeys((login_key(url), url)) if key in platforms]
    for key in found:
        del platforms[key]
    if found:
        _write_credentials(platforms)
    return bool(found)


def token_for(url: str) -> str | None:
    """The token to send: ``BIDEL_TOKEN``, else the stored one, else None."""
    override = os.environ.get("BIDEL_TOKEN", "").strip()
    if override:
        return override
    login = stored_login(url)
    return login["token"] if login else None


# --- the client --------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    body: bytes
    headers: Mapping[str, str]

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            raise RemoteError(
                f"the platform answered something that is not JSON (HTTP {self.status})",
                self.status,
            ) from None


class Platform:
    """The REST API at ``url`` (``/api/…``), as ``token``'s owner when one is given."""

    def __init__(self, url: str, token: str | None = None, timeout: float | None = None) -> None:
        self.url = url
        self.token = token
        self.timeout = timeout if timeout is not None else request_timeout()

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        data: Mapping[str, Any] | None = None,
        file: tuple[str, bytes] | None = None,
        auth: bool = True,
    ) -> Answer:
        """One request, answered whole within :attr:`timeout` seconds (redirects included,
        however slowly the answer comes); a status of 400 or more raises
        :class:`RemoteError` in the platform's words. ``data`` is sent as JSON, or with
        ``file`` as a multipart form. A redirect is followed only within the platform's own
        origin (scheme, host and port): the token, and what is sent, never go elsewhere."""
        deadline = time.monotonic() + self.timeout
        address = self.url + path
        if query:
            address += "?" + urllib.parse.urlencode(
                {k: v for k, v in query.items() if v is not None}
            )
        headers = {"Accept": "application/json", "User-Agent": _agent()}
        body: bytes | None = None
        if file is not None:
            body, kind = _multipart(data or {}, file)
            headers["Content-Type"] = kind
        elif data is not None:
            body = json.dumps(data).encode()
            headers["Content-Type"] = "application/json"
        if auth and self.token:
            headers["Authorization"] = f"Token {self.token}"
        for _ in range(MAX_REDIRECTS + 1):
            answer = self._exchange(method, address, headers, body, deadline)
            location = answer.headers.get("location")
            if answer.status not in REDIRECTS or not location:
                if answer.status >= 400:
                    raise _refused(answer, self.url, auth and bool(self.token))
                return answer
            target = urllib.parse.urljoin(address, location)
            if _origin(target) != _origin(self.url):
                raise RemoteError(
                    f"the platform at {self.url} redirected to another site "
                    f"({_shown(target)}): not followed, so nothing of yours goes there "
                    "(if that is the platform, use its address with --url)",
                    answer.status,
                )
            if answer.status == 303 or (answer.status in (301, 302) and method != "HEAD"):
                method, body = ("GET" if method != "HEAD" else method), None
                headers.pop("Content-Type", None)
            address = target
        raise RemoteError(f"the platform at {self.url} redirected more than {MAX_REDIRECTS} times")

    def _exchange(
        self,
        method: str,
        address: str,
        headers: Mapping[str, str],
        body: bytes | None,
        deadline: float,
    ) -> Answer:
        """One request and its whole answer, by ``deadline`` (``time.monotonic()``): a
        watchdog cuts the connection then, whatever the server is doing (a trickle of one
        byte at a time defeats a per-read timeout)."""
        late = RemoteError(f"the platform at {self.url} did not answer within {self.timeout:g} s")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise late
        parts = urllib.parse.urlsplit(address)
        kind = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        connection = kind(parts.hostname or "", parts.port, timeout=remaining)
        cut = threading.Event()
        watchdog: threading.Timer | None = None
        response: http.client.HTTPResponse | None = None
        try:
            connection.connect()  # (within the time left: the connection's timeout)
            sock = connection.sock  # (the response keeps it after the connection lets go)

            def cut_off() -> None:
                cut.set()
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), cut_off)
            watchdog.daemon = True
            watchdog.start()
            target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
            connection.request(method, target, body=body, headers=dict(headers))
            response = connection.getresponse()
            chunks, size = [], 0
            while chunk := response.read1(64 * 1024):
                size += len(chunk)
                if size > MAX_ANSWER:
                    raise RemoteError(
                        f"the platform at {self.url} answered more than {MAX_ANSWER} bytes"
                    )
                chunks.append(chunk)
            if cut.is_set():
                raise late
            if response.length:  # (what Content-Length promised and never came)
                raise RemoteError(f"the platform at {self.url} broke off its answer")
            received = {name.lower(): value for name, value in response.getheaders()}
            return Answer(response.status, b"".join(chunks), received)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if cut.is_set() or time.monotonic() >= deadline:
                raise late from None
            reason = getattr(exc, "reason", None) or exc or type(exc).__name__
            raise RemoteError(f"cannot reach the platform at {self.url}: {reason}") from None
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if response is not None:
                response.close()
            connection.close()

    def get(self, path: str, **query: Any) -> Any:
        return self.request("GET", path, query=query).json()

    def post(self, path: str, data: Mapping[str, Any] | None = None) -> Any:
        answer = self.request("POST", path, data=data or {})
        return answer.json() if answer.body else None

    def pages(self, path: str, limit: int | None = None, **query: Any) -> Iterator[Any]:
        """The rows of a paged list, page after page (``limit``: at most that many; never
        more than :data:`MAX_PAGES` pages, whatever the platform says comes next)."""
        page, given = 1, 0
        while True:
            if page > MAX_PAGES:
                raise RemoteError(
                    f"the platform's list {path} goes on past {MAX_PAGES} pages: stopped there"
                )
            answer = self.get(path, page=page, **query)
            rows = answer.get("results", []) if isinstance(answer, dict) else answer
            if not isinstance(rows, list):
                raise RemoteError(f"the platform's list {path} is not a list")
            for row in rows:
                if limit is not None and given >= limit:
                    return
                given += 1
                yield row
            if not isinstance(answer, dict) or not answer.get("next"):
                return
            page += 1

    # --- what the commands ask -----------------------------------------------------------------

    def me(self) -> dict[str, Any]:
        if not self.token:
            raise RemoteError(f"not logged in to {self.url}: run bidel login", 401)
        return dict(self.get("/api/users/me/"))

    def my_bot(self, name: str) -> dict[str, Any] | None:
        """The caller's bot called ``name`` (a number is taken as an id too), or None."""
        for bot in self.me()["bots"]:
            if bot["name"] == name or str(bot["id"]) == name:
                return dict(self.get(f"/api/bots/{bot['id']}/"))
        return None

    def bot(self, name: str) -> dict[str, Any]:
        """A bot by id, or the caller's by name."""
        if parse_id(name) is not None:
            return dict(self.get(f"/api/bots/{parse_id(name)}/"))
        if not self.token:
            raise RemoteError(
                f"not logged in to {self.url}: run bidel login (or name the bot by its id)", 401
            )
        found = self.my_bot(name)
        if found is None:
            raise RemoteError(f"you have no bot named {name!r} on {self.url}", 404)
        return found

    def ladder(self, name: str) -> dict[str, Any]:
        for ladder in self.pages("/api/ladders/"):
            if ladder["name"] == name or str(ladder["id"]) == name:
                return dict(ladder)
        raise RemoteError(f"no ladder {name!r} on {self.url}", 404)


def _agent() -> str:
    return f"bidel-sdk/{bots_sdk.__version__} ({socket.gethostname()[:32]})"


def _multipart(fields: Mapping[str, Any], file: tuple[str, bytes]) -> tuple[bytes, str]:
    boundary = "bidel-" + secrets.token_hex(16)
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            + str(value).encode()
            + b"\r\n"
        )
    filename, content = file
    safe = filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{safe}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode()
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _refused(answer: Answer, url: str, with_token: bool) -> RemoteError:
    """The platform's refusal in one line: its ``detail`` or its field errors."""
    try:
        body = json.loads(answer.body[: 1024 * 1024] or b"null")
    except ValueError:
        body = None
    words = _words(body)[:500]
    code = answer.status
    if code == 401:
        if with_token:
            return RemoteError(
                f"the platform at {url} refused the token ({words or 'not valid'}): "
                "run bidel login",
                401,
            )
        return RemoteError(f"not logged in to {url}: run bidel login", 401)
    if code == 404:
        words = words or "not found"
    return RemoteError(words or f"the platform answered HTTP {code}", code)


def _words(body: Any) -> str:
    """The sentences of an error body (``{"detail": [...]}`` or ``{"field": [...]}``)."""
    if isinstance(body, dict):
        said = []
        for key, value in body.items():
            text = " ".join(value) if isinstance(value, list) else str(value)
            said.append(text if key in ("detail", "non_field_errors") else f"{key}: {text}")
        return "; ".join(said)
    if isinstance(body, list):
        return " ".join(str(item) for item in body)
    return ""
