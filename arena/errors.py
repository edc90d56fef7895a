"""Domain errors as messages a person can act on, field by field: the API's 400 bodies and the
web forms' messages are the same words."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from arena.uploads import UploadError
from engine.rules import RulesError


def error_messages(exc: Exception) -> dict[str, list[str]] | None:
    """Field → messages for a domain error (``detail`` when it concerns no one field), or
    ``None`` when ``exc`` is not one.

    >>> error_messages(ValidationError({"name": "a bot of that name exists"}))
    {'name': ['a bot of that name exists']}
    >>> error_messages(UploadError("bot.py is missing"))
    {'detail': ['bot.py is missing']}
    >>> error_messages(KeyError("x")) is None
    True
    """
    if isinstance(exc, ValidationError):
        if hasattr(exc, "error_dict"):
            return {field: list(messages) for field, messages in exc.message_dict.items()}
        return {"detail": list(exc.messages)}
    if isinstance(exc, (UploadError, RulesError)):
        return {"detail": [str(exc)]}
    return None
