"""Throttles of our own, beside DRF's scoped ones: password resets, and uploads of new
versions per user and per bot."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext
from rest_framework import exceptions
from rest_framework.throttling import SimpleRateThrottle, UserRateThrottle


class PasswordResetEmailThrottle(SimpleRateThrottle):
    """Reset mails asked for one e-mail address, from anywhere (scope
    ``password_reset_email``): nobody can fill someone's mailbox with them. Counted whether
    or not an account has the address, so being refused says nothing about it. Reads the
    address from an API request's data or a page's form alike (both doors, one count)."""

    scope = "password_reset_email"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        data = request.data if hasattr(request, "data") else request.POST
        email = data.get("email") if isinstance(data, Mapping) else None
        if not isinstance(email, str) or not email.strip():
            return None  # nothing to count: the address is refused as missing
        # Hashed: the cache holds no address.
        digest = hashlib.sha256(email.strip().lower().encode(errors="replace")).hexdigest()
        return self.cache_format % {"scope": self.scope, "ident": digest[:32]}


class PasswordCheckThrottle(UserRateThrottle):
    """The log-in's allowance (scope ``login``, per user or address, the same count as
    ``POST /api/token/``) for another request that checks a password."""

    scope = "login"


class ComparisonThrottle(UserRateThrottle):
    """Version comparisons one owner asks for (scope ``comparisons``, ``COMPARISON_RATE``):
    each is up to 48 matches of 20 hands on the runners."""

    scope = "comparisons"


class UploadThrottle(UserRateThrottle):
    """New versions one user uploads, to all their bots together (scope ``uploads``,
    ``UPLOAD_RATE``): each is checked, built and played in a validation match."""

    scope = "uploads"

    def refusal(self) -> str:
        return gettext("too many new versions from one user: the limit is %(rate)s") % {
            "rate": self.rate
        }


class BotUploadThrottle(SimpleRateThrottle):
    """New versions uploaded to one bot (scope ``bot_uploads``, ``BOT_UPLOAD_RATE``)."""

    scope = "bot_uploads"

    def __init__(self, bot_id: int) -> None:
        self.bot_id = bot_id
        super().__init__()

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": str(self.bot_id)}

    def refusal(self) -> str:
        return gettext("too many new versions of one bot: the limit is %(rate)s") % {
            "rate": self.rate
        }


def _allows(throttle: SimpleRateThrottle, request: Any) -> bool:
    """Whether ``throttle`` lets the request go on, counting nothing yet (DRF's
    ``allow_request`` counts an allowed request at once)."""
    if throttle.rate is None:
        return True
    throttle.key = throttle.get_cache_key(request, None)
    if throttle.key is None:
        return True
    throttle.history = throttle.cache.get(throttle.key, [])
    throttle.now = throttle.timer()
    while throttle.history and throttle.history[-1] <= throttle.now - throttle.duration:
        throttle.history.pop()
    return len(throttle.history) < throttle.num_requests


def upload_throttle_check(request: Any, *, bot_id: int) -> None:
    """Count an upload of a new version to bot ``bot_id`` by its owner (asked once the owner
    is known: nobody else's attempts spend the owner's allowance); :class:`Throttled` (429,
    with Retry-After) naming each limit reached, per user or per bot. A refused upload is
    counted by neither. Both doors ask it, the API and the upload page: one allowance."""
    throttles = [UploadThrottle(), BotUploadThrottle(bot_id)]
    refused = [t for t in throttles if not _allows(t, request)]
    if refused:
        waits = [wait for wait in (t.wait() for t in refused) if wait is not None]
        raise exceptions.Throttled(
            wait=max(waits) if waits else None,
            detail="; ".join(t.refusal() for t in refused) + ".",
        )
    for throttle in throttles:
        if throttle.rate is not None and throttle.key is not None:
            throttle.throttle_success()
