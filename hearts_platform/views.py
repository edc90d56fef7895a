"""Project-level API views (health, the OpenAPI schema and its page); the arena's views live
in ``arena``."""

from __future__ import annotations

import functools

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework import permissions
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from hearts_platform.health import Reports, public
from hearts_runner import heartbeat


def _store() -> heartbeat.Store:
    if settings.REDIS_URL:
        return heartbeat.RedisStore(settings.REDIS_URL)
    return heartbeat.FileStore(settings.VAR_DIR / "heartbeats")


#: This process's reports: one made per second at most, however many ask.
REPORTS = Reports(functools.cache(_store), max_age=settings.HEALTH_CACHE_SECONDS)


class HealthView(APIView):
    """Database, broker, workers, runners, sandbox: 200 when all are OK, else 503. Anyone
    reads the status and each part's ``ok``; staff read the details (hosts, errors, the
    sandbox's set-up)."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses={
            200: OpenApiResponse(description="all OK"),
            503: OpenApiResponse(description="a check failed"),
        }
    )
    def get(self, request: Request) -> Response:
        report = REPORTS.current()
        body = report if request.user.is_staff else public(report)
        return Response(body, status=200 if report["status"] == "ok" else 503)


class SwaggerView(SpectacularSwaggerView):
    """The schema's browsable page (``/api/docs/``), for GET only: DRF would answer an
    OPTIONS request through the page's template, which has nothing to show it (a 500)."""

    http_method_names = ["get", "head"]


class SchemaNegotiation(DefaultContentNegotiation):
    """The schema's form chosen by ``?format=json`` or ``?format=yaml`` (drf-spectacular's
    convention), else by the Accept header (YAML when it names neither).

    Only the schema reads the parameter: ``URL_FORMAT_OVERRIDE`` is off for the whole API
    because ``?format=`` filters tournaments by their format (``arena.api.filters``)."""

    def select_renderer(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        chosen = format_suffix or request.query_params.get("format") or None
        known = sorted({renderer.format for renderer in renderers})
        if chosen is not None and chosen not in known:
            raise ValidationError({"format": [f"must be one of: {', '.join(known)}"]})
        return super().select_renderer(request, renderers, chosen)


@extend_schema(
    parameters=[
        OpenApiParameter(
            "format",
            str,
            enum=["json", "yaml"],
            description="the schema as JSON or YAML (without it: by the Accept header, else YAML)",
        )
    ]
)
class SchemaView(SpectacularAPIView):
    """The OpenAPI schema (``/api/schema/``): YAML, or JSON with ``?format=json``."""

    content_negotiation_class = SchemaNegotiation
