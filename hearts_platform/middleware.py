"""Every response says how long the server spent on it (``Server-Timing: app;dur=…`` in
milliseconds), so browsers, benchmarks and operators read the same number; a signed-in user's
language is their own choice, wherever they sign in."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        start = time.perf_counter()
        response = self.get_response(request)
        elapsed = (time.perf_counter() - start) * 1000
        response.headers["Server-Timing"] = f"app;dur={elapsed:.1f}"
        return response


class UserLanguageMiddleware:
    """After authentication: a signed-in user who chose a language gets it (stored with
    them, so it follows them across devices); everyone else keeps what LocaleMiddleware
    found (the cookie set by the language switcher, or the browser's Accept-Language)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and not request.path.startswith("/api/"):
            from arena.models import Profile

            chosen = Profile.objects.filter(user=user).values_list("language", flat=True).first()
            if chosen:
                translation.activate(chosen)
                request.LANGUAGE_CODE = chosen  # type: ignore[attr-defined]
        return self.get_response(request)
