from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class ArenaConfig(AppConfig):
    name = "arena"
    verbose_name = "Bidel arena"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out

        user_logged_out.connect(_session_ended, dispatch_uid="arena.tokens_end_session")


def _session_ended(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """A log-out, from any door (the site's, the admin's), ends the tokens its session made."""
    if user is not None and request is not None:
        from arena import services

        services.tokens_end_session(user=user, session_key=request.session.session_key)
