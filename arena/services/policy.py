"""Who may make work: one rule, checked by the services every entry point goes through
(an upload, a comparison its owner or the platform starts, a challenge, a person's game, a
tournament's entries, a ladder's entry, every match made), never by one view alone.

A bot makes no work while staff have disabled it (the admin's "Disable the selected bots"),
nor while its owner's account is closed (``is_active`` off). What it played before stays.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from arena.models import Bot


def why_idle(bot: Bot) -> str:
    """Why ``bot`` may make no work now ('' when it may)."""
    if bot.disabled:
        return gettext("%(bot)s is disabled by the staff: it plays and takes nothing") % {
            "bot": bot.name
        }
    owner = getattr(bot, "owner", None)
    if owner is not None and not owner.is_active:
        return gettext("%(bot)s belongs to a closed account: it plays and takes nothing") % {
            "bot": bot.name
        }
    return ""


def require_active(bot: Bot, field: str = "bot") -> None:
    """Raise a ValidationError (the API's 400, the page's message) when ``bot`` may make no
    work."""
    why = why_idle(bot)
    if why:
        raise ValidationError({field: why})


def require_seats_active(seats: Any) -> None:
    """Every bot seated (a seat with a version) may make work."""
    for seat in seats:
        version = getattr(seat, "version", None)
        if version is not None:
            require_active(version.bot, "seats")
