"""Failed log-ins, counted per username and address in Django's cache: after
``LOGIN_MAX_FAILURES`` failures within ``LOGIN_FAILURE_WINDOW`` seconds, both doors (the log-in
form and ``POST /api/token/``) refuse that username from that address, without checking the
password, until the window has passed. A success forgets the failures.

The keys start with ``throttle_`` like DRF's throttles, so whatever forgets those (the tests'
``fresh_throttles``) forgets these too. A cache that fails is logged and lets the attempt
through: the per-address request throttles still bound the guessing.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils.translation import ngettext

logger = logging.getLogger(__name__)


def _key(username: str, address: str) -> str:
    digest = hashlib.sha256(f"{username.strip().lower()}\n{address}".encode(errors="replace"))
    return f"throttle_login_failures_{digest.hexdigest()[:32]}"


def client_address(request: Any) -> str:
    """The address the request came from (the web server faces the clients directly: no
    forwarded header is trusted, as ``REST_FRAMEWORK["NUM_PROXIES"] = 0`` says for DRF)."""
    return str(request.META.get("REMOTE_ADDR", ""))


def login_wait(username: str, address: str) -> int:
    """Seconds before ``username`` may try again from ``address``; 0 when it may now."""
    try:
        state = cache.get(_key(username, address))
    except Exception:
        logger.exception("the cache failed: log-in failures are not counted")
        return 0
    if not state or state["count"] < settings.LOGIN_MAX_FAILURES:
        return 0
    return max(1, math.ceil(state["since"] + settings.LOGIN_FAILURE_WINDOW - time.time()))


def login_failed(username: str, address: str) -> None:
    """Count a failed attempt (the window starts at the first failure)."""
    key = _key(username, address)
    now = time.time()
    try:
        state = cache.get(key) or {"count": 0, "since": now}
        state["count"] += 1
        remaining = state["since"] + settings.LOGIN_FAILURE_WINDOW - now
        cache.set(key, state, timeout=max(1, math.ceil(remaining)))
    except Exception:
        logger.exception("the cache failed: a failed log-in was not counted")


def login_succeeded(username: str, address: str) -> None:
    """Forget the failures of ``username`` from ``address``."""
    try:
        cache.delete(_key(username, address))
    except Exception:
        logger.exception("the cache failed: earlier failed log-ins are not forgotten")


def too_many_message(wait: int) -> str:
    """What both doors answer while a username is locked out."""
    minutes = max(1, math.ceil(wait / 60))
    return ngettext(
        "too many failed log-ins for this username from your address; try again in "
        "%(minutes)s minute",
        "too many failed log-ins for this username from your address; try again in "
        "%(minutes)s minutes",
        minutes,
    ) % {"minutes": minutes}
