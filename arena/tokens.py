"""API tokens as secrets, and what a refused one is told. Plain Python: no database.

A key is 32 bytes from the operating system's cryptographic source, in URL-safe base64 (43
characters). Nobody can guess one, so a single fast hash is enough to store it (a slow
password hash is for what people choose): a stolen table of digests opens nothing. Its first
characters are kept in the clear to tell a user's tokens apart.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime

#: Random bytes in a key.
KEY_BYTES = 32
#: Characters of a key kept in the clear.
PREFIX_LENGTH = 8
#: A presented key longer than this is no key of ours (the keys made before expiry were 40
#: hexadecimal digits; ours are 43 characters): it is refused without hashing.
MAX_KEY_LENGTH = 64

#: What a refused key is told, after why: how to get a working one.
WHAT_TO_DO = "ask for a new one: POST /api/token/ with your username and password"

#: Why a token was revoked, as the refusal says it (keys: ``ApiToken.Revoked``).
REVOKED = {
    "owner": "this token was revoked by its owner on {when}",
    "renewed": "this token was renewed on {when}: use the token the renewal answered with",
    "password_reset": "this token was revoked on {when}, when the account's password was reset",
    "limit": (
        "this token was revoked on {when}: its owner made more tokens than an account may "
        "hold, and it was the least recently used"
    ),
    "logout": "this token ended on {when}, when the web session that made it logged out",
}


def new_key() -> str:
    """A fresh key (shown once, never stored).

    >>> len(new_key()), new_key() != new_key()
    (43, True)
    """
    return secrets.token_urlsafe(KEY_BYTES)


def key_digest(key: str) -> str:
    """What is stored of ``key``, and what a presented key is looked up by.

    >>> key_digest("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def key_prefix(key: str) -> str:
    """The characters of ``key`` kept in the clear.

    >>> key_prefix("9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b")
    '9944b091'
    """
    return key[:PREFIX_LENGTH]


def refusal(
    *, expires: datetime, revoked: datetime | None, revoked_why: str, now: datetime
) -> str | None:
    """Why a token may not be used now, in words for its holder; None while it may.

    >>> day = lambda d: datetime(2030, 1, d, 12, tzinfo=UTC)
    >>> refusal(expires=day(9), revoked=None, revoked_why="", now=day(2)) is None
    True
    >>> refusal(expires=day(9), revoked=None, revoked_why="", now=day(9))
    'this token expired on 2030-01-09 12:00 UTC; ask for a new one: POST /api/token/ with your username and password'
    >>> refusal(expires=day(9), revoked=day(3), revoked_why="owner", now=day(4))[:52]
    'this token was revoked by its owner on 2030-01-03 12'
    """  # noqa: E501
    if revoked is not None:
        said = REVOKED.get(revoked_why, "this token was revoked on {when}")
        return f"{said.format(when=_when(revoked))}; {WHAT_TO_DO}"
    if expires <= now:
        return f"this token expired on {_when(expires)}; {WHAT_TO_DO}"
    return None


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
