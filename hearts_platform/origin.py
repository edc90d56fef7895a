"""The WebSocket handshake's origin check.

A browser opens a WebSocket to any site a page asks for, with that site's cookies (a person's
seat cookie among them) and an ``Origin`` header naming the page's site. So a handshake is
accepted only when its ``Origin`` is this site as the request reached it — the same scheme
(``ws`` ↔ ``http``, ``wss`` ↔ ``https``), host and port as its ``Host`` header, which must be
one of ``ALLOWED_HOSTS`` — or one of ``CSRF_TRUSTED_ORIGINS`` (a site behind a proxy that
terminates TLS; ``https://*.example.com`` for its subdomains, as Django's CSRF check reads
it). No ``Origin`` (not a browser), ``null``, two of them, or anything unreadable: refused.

Channels' ``AllowedHostsOriginValidator`` compared the host alone: a page on another port or
scheme of the same host (another program's, or plain HTTP beside HTTPS) passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host

#: An origin as compared: scheme, host (lower case, IPv6 without brackets) and port.
Origin = tuple[str, str, int]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_HTTP_SCHEME = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def parse_origin(text: str) -> Origin | None:
    """``scheme://host[:port]`` as compared, or None when it is not one.

    >>> parse_origin("HTTP://LocalHost")
    ('http', 'localhost', 80)
    >>> parse_origin("https://[::1]:8443")
    ('https', '::1', 8443)
    >>> parse_origin("null"), parse_origin("http://a:99999"), parse_origin("ftp://a")
    (None, None, None)
    """
    try:
        parts = urlsplit(text.strip())
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:
        return None
    if scheme not in _DEFAULT_PORTS or not host or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username is not None:
        return None
    return scheme, host, port if port is not None else _DEFAULT_PORTS[scheme]


def site_origin(scheme: str, host: str) -> Origin | None:
    """This site's origin as a request reached it: its scheme (a WebSocket's ``ws``/``wss``
    read as ``http``/``https``) and its ``Host`` header.

    >>> site_origin("ws", "localhost:8000")
    ('http', 'localhost', 8000)
    >>> site_origin("wss", "bidel.example")
    ('https', 'bidel.example', 443)
    """
    http = _HTTP_SCHEME.get(scheme.lower())
    if http is None or not host or any(c in host for c in "/?#@\\ "):
        return None
    return parse_origin(f"{http}://{host}")


def origin_allowed(
    origin: str,
    *,
    scheme: str,
    host: str,
    allowed_hosts: Iterable[str],
    trusted: Iterable[str] = (),
) -> bool:
    """Whether a handshake with ``Origin: origin`` that reached us over ``scheme`` with
    ``Host: host`` may go on (see the module's docstring).

    >>> here = {"scheme": "ws", "host": "localhost:8000", "allowed_hosts": ["localhost"]}
    >>> origin_allowed("http://localhost:8000", **here)
    True
    >>> [origin_allowed(o, **here) for o in
    ...  ("http://localhost:8001", "https://localhost:8000", "http://evil.example:8000", "")]
    [False, False, False, False]
    >>> origin_allowed("https://bidel.example", **here, trusted=["https://bidel.example"])
    True
    >>> origin_allowed("http://evil.example:8000", scheme="ws", host="evil.example:8000",
    ...                allowed_hosts=["localhost"])  # a rebound name: its Host is not ours
    False
    """
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, list(allowed_hosts)):
        return False
    seen = parse_origin(origin)
    if seen is None:
        return False
    if seen == site_origin(scheme, host):
        return True
    return any(_trusted(seen, origin.strip().lower(), pattern) for pattern in trusted)


def _trusted(seen: Origin, text: str, pattern: str) -> bool:
    """Whether the origin matches one of ``CSRF_TRUSTED_ORIGINS`` (exactly, default ports
    written or not, or ``scheme://*.domain`` for the domain's subdomains)."""
    if "*" not in pattern:
        return seen == parse_origin(pattern)
    parts = urlsplit(pattern.strip().lower())
    netloc = text.split("://", 1)[-1]
    return seen[0] == parts.scheme and is_same_domain(netloc, parts.netloc[1:])


def allowed_hosts() -> list[str]:
    """``ALLOWED_HOSTS``, or in DEBUG with none set the local names Django itself allows."""
    if settings.ALLOWED_HOSTS:
        return list(settings.ALLOWED_HOSTS)
    return [".localhost", "127.0.0.1", "[::1]"] if settings.DEBUG else []


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    """The one value of header ``name``; None when it is missing, repeated or unreadable."""
    values = [v for k, v in scope.get("headers", []) if k.lower() == name]
    if len(values) != 1:
        return None
    try:
        return bytes(values[0]).decode("ascii")
    except UnicodeDecodeError:
        return None


class SameOriginValidator:
    """ASGI middleware around the WebSocket routes: a handshake whose origin is not allowed
    (:func:`origin_allowed`) is refused before any consumer sees it (HTTP 403)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        origin, host = _header(scope, b"origin"), _header(scope, b"host")
        allowed = (
            origin is not None
            and host is not None
            and origin_allowed(
                origin,
                scheme=str(scope.get("scheme") or "ws"),
                host=host,
                allowed_hosts=allowed_hosts(),
                trusted=settings.CSRF_TRUSTED_ORIGINS,
            )
        )
        if not allowed:
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
