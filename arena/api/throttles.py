"""Throttles of our own, beside DRF's scoped ones: password resets, and uploads of new
versions per user and per bot."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone
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


class RefusedUploadThrottle(UserRateThrottle):
    """Uploads one user sent that were refused for what they hold (not Python, a zip without a
    bot, too large: scope ``refused_uploads``, ``REFUSED_UPLOAD_RATE``), counted as they are
    refused; with the versions its validation rejected, the bound of a user's failed tries,
    apart from the new versions' allowance."""

    scope = "refused_uploads"


@dataclass(frozen=True)
class Allowance:
    """What a user may still upload now: new versions to this bot and to all their bots
    (a version its validation rejected is not one), and failed tries (rejected versions and
    refused uploads); each with its limit and, when none is left, the seconds until one is."""

    bot_left: int
    bot_rate: str
    user_left: int
    user_rate: str
    failed_left: int
    failed_rate: str
    wait: float | None

    def refusal(self) -> str:
        """Why an upload is refused now ('' when it is not)."""
        said = []
        if self.user_left <= 0:
            said.append(
                gettext("too many new versions from one user: the limit is %(rate)s")
                % {"rate": self.user_rate}
            )
        if self.bot_left <= 0:
            said.append(
                gettext("too many new versions of one bot: the limit is %(rate)s")
                % {"rate": self.bot_rate}
            )
        if self.failed_left <= 0:
            said.append(
                gettext("too many rejected or refused uploads from one user: the limit is %(rate)s")
                % {"rate": self.failed_rate}
            )
        return "; ".join(said) + "." if said else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": {"left": self.bot_left, "rate": self.bot_rate},
            "user": {"left": self.user_left, "rate": self.user_rate},
            "failed": {"left": self.failed_left, "rate": self.failed_rate},
        }


class _Rate(SimpleRateThrottle):
    """A scope's rate as DRF reads it (``THROTTLE_RATES``), for counting from the database."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        super().__init__()


def _rate(scope: str) -> tuple[str, int, int]:
    """A scope's rate as set, its number and its seconds ("20/hour": 20, 3600); a rate set
    to none allows any number."""
    rate = _Rate(scope)
    if rate.rate is None:
        return "none", 10**9, 1
    return str(rate.rate), int(rate.num_requests), int(rate.duration)


def upload_allowance(user: Any, bot_id: int, request: Any | None = None) -> Allowance:
    """What ``user`` may still upload to bot ``bot_id``, counted from the versions stored
    (and, with ``request``, the refused uploads the cache counted)."""
    from arena import selectors  # (here: the throttles load with the API's settings)

    now = timezone.now()
    user_rate, user_max, user_span = _rate("uploads")
    bot_rate, bot_max, bot_span = _rate("bot_uploads")
    failed_rate, failed_max, failed_span = _rate("refused_uploads")
    uploads = selectors.recent_uploads(
        user,
        bot_id,
        user_since=now - timedelta(seconds=user_span),
        bot_since=now - timedelta(seconds=bot_span),
        failed_since=now - timedelta(seconds=failed_span),
    )
    refused_at: list[float] = []
    if request is not None:
        throttle = RefusedUploadThrottle()
        key = throttle.get_cache_key(request, None)
        refused_at = [t for t in throttle.cache.get(key, []) if t > throttle.timer() - failed_span]
    waits = []

    def left(count: int, limit: int, oldest: datetime | None, span: int) -> int:
        remaining = limit - count
        if remaining <= 0 and oldest is not None:
            waits.append(max(1.0, (oldest + timedelta(seconds=span) - now).total_seconds()))
        return max(0, remaining)

    by_user, by_bot, failed = uploads.by_user, uploads.by_bot, uploads.failed
    user_left = left(len(by_user), user_max, min(by_user, default=None), user_span)
    bot_left = left(len(by_bot), bot_max, min(by_bot, default=None), bot_span)
    failed_times = failed + [datetime.fromtimestamp(t, tz=UTC) for t in refused_at]
    failed_left = left(len(failed_times), failed_max, min(failed_times, default=None), failed_span)
    return Allowance(
        bot_left, bot_rate, user_left, user_rate, failed_left, failed_rate, max(waits, default=None)
    )


def upload_refused(request: Any) -> None:
    """Count an upload refused for what it holds against its user's failed tries (DRF's
    ``allow_request`` records it while under the bound; past it, the allowance refuses
    uploads before any is read)."""
    throttle = RefusedUploadThrottle()
    if throttle.rate is not None:
        throttle.allow_request(request, None)


def upload_throttle_check(request: Any, *, bot_id: int) -> Allowance:
    """Whether the owner may upload a new version to bot ``bot_id`` now (asked once the owner
    is known: nobody else's attempts spend the owner's allowance): :class:`Throttled` (429,
    with Retry-After) naming each limit reached, else the allowance as it stands. The
    versions stored are what counts (a version its validation rejected counts for the failed
    tries, not the new versions). Both doors ask it, the API and the upload page: one
    allowance."""
    allowance = upload_allowance(request.user, bot_id, request)
    refusal = allowance.refusal()
    if refusal:
        raise exceptions.Throttled(wait=allowance.wait, detail=refusal)
    return allowance


def analysis_throttle_check(user: Any) -> None:
    """Whether ``user`` may ask for a new analysis now (scope ``analyses``, ``ANALYSIS_RATE``,
    counted from the analyses stored that they asked for first): :class:`Throttled` (429, with
    Retry-After) when none is left. Reading an analysis that exists costs nothing."""
    from arena import selectors

    rate, limit, span = _rate("analyses")
    now = timezone.now()
    asked = selectors.analyses_asked(user, now - timedelta(seconds=span))
    if len(asked) < limit:
        return
    frees = asked[len(asked) - limit] + timedelta(seconds=span)  # when one drops out
    raise exceptions.Throttled(
        wait=max(1.0, (frees - now).total_seconds()),
        detail=gettext("too many analyses asked for by one user: the limit is %(rate)s")
        % {"rate": rate},
    )
