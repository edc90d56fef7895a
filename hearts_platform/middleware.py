"""Every response says how long the server spent on it (``Server-Timing: app;dur=…`` in
milliseconds), so browsers, benchmarks and operators read the same number."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        start = time.perf_counter()
        response = self.get_response(request)
        elapsed = (time.perf_counter() - start) * 1000
        response.headers["Server-Timing"] = f"app;dur={elapsed:.1f}"
        return response
