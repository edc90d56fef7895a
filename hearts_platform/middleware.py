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
    found (the cookie set by the language switcher, or the browser's Accept-Language). The API
    answers in English whatever the cookie or the browser asks."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):  # programs read the API: always its English words
            translation.activate("en")
            request.LANGUAGE_CODE = "en"  # type: ignore[attr-defined]
            return self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            from arena.models import Profile

            chosen = Profile.objects.filter(user=user).values_list("language", flat=True).first()
            if chosen:
                translation.activate(chosen)
                request.LANGUAGE_CODE = chosen  # type: ignore[attr-defined]
        return self.get_response(request)
