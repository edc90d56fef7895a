"""Reading settings from environment variables, with one-line errors.

A bad or missing setting stops the process with a single line on stderr naming the variable
and what to do (``SettingsError`` is a ``SystemExit``), whichever entry point loaded the
settings: ``manage.py``, ``celery``, ``uvicorn`` or pytest.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


class SettingsError(SystemExit):
    """A setting is missing or malformed; the process stops with this one-line message."""

    def __init__(self, message: str) -> None:
        super().__init__(f"bidel: configuration error: {message}")


class Env:
    """Typed access to a mapping of environment variables (``os.environ`` by default).

    Every name read is remembered in ``names_read`` so tests can check that deployment files
    (docker-compose.yml) set what the settings actually read.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ
        self.names_read: list[str] = []

    def _get(self, name: str) -> str | None:
        if name not in self.names_read:
            self.names_read.append(name)
        value = self._environ.get(name)
        return None if value is None else value.strip()

    def str(self, name: str, default: str | None = None) -> str | None:
        value = self._get(name)
        return default if value in (None, "") else value

    def bool(self, name: str, default: bool) -> bool:
        value = self._get(name)
        if value is None:
            return default
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise SettingsError(
            f"{name}={value!r} is not a boolean; use 1/0, true/false, yes/no or on/off"
        )

    def int(self, name: str, default: int, *, minimum: int = 0) -> int:
        value = self._get(name)
        if value in (None, ""):
            return default
        try:
            number = int(value)
        except ValueError:
            raise SettingsError(f"{name}={value!r} is not an integer") from None
        if number < minimum:
            raise SettingsError(f"{name}={number} must be at least {minimum}")
        return number

    def rate(self, name: str, default: str) -> str:
        """A throttle rate as DRF reads it, ``N/period`` (``30/hour``, ``5/m``): checked here,
        or a bad one would be a 500 at the first request it throttles.

        >>> Env({"RATE": "5/min"}).rate("RATE", "30/hour"), Env({}).rate("RATE", "30/hour")
        ('5/min', '30/hour')
        >>> Env({"RATE": "often"}).rate("RATE", "30/hour")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hearts_platform.env.SettingsError: bidel: configuration error: RATE='often' is not a rate...
        """
        value = self.str(name, default) or default
        count, _, period = value.partition("/")
        if not (count.isascii() and count.isdigit() and period[:1] in ("s", "m", "h", "d")):
            raise SettingsError(
                f"{name}={value!r} is not a rate; write N/second, N/minute, N/hour or N/day"
            )
        return value

    def origin(self, name: str) -> str:
        """A site's origin, ``scheme://host[:port]`` (http or https, no path, no credentials),
        without a trailing slash; '' when unset.

        >>> Env({"SITE_URL": "https://bidel.example/"}).origin("SITE_URL")
        'https://bidel.example'
        >>> Env({"SITE_URL": "bidel.example"}).origin("SITE_URL")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hearts_platform.env.SettingsError: bidel: configuration error: SITE_URL='bidel.example' ...
        """
        value = self.str(name, "") or ""
        if not value:
            return ""
        parts = urlsplit(value)
        try:
            parts.port  # noqa: B018 — a port that is not a number raises here
        except ValueError:
            parts = parts._replace(netloc="")
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or "@" in parts.netloc
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
        ):
            raise SettingsError(
                f"{name}={value!r} is not a site's address; write it as https://bidel.example "
                "(a scheme and a host, a port if any, nothing else)"
            )
        return f"{parts.scheme}://{parts.netloc}"

    def list(self, name: str, default: list[str]) -> list[str]:
        value = self._get(name)
        if value is None:
            return list(default)
        return [item.strip() for item in value.split(",") if item.strip()]
