"""Project-level API views (health); the arena's views live in ``arena``."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from hearts_platform.celery import app
from hearts_platform.health import health_report


class HealthView(APIView):
    """Database, broker and worker reachability; 200 when all are OK, else 503."""

    permission_classes = [permissions.AllowAny]
    authentication_classes: list = []

    @extend_schema(
        responses={
            200: OpenApiResponse(description="all OK"),
            503: OpenApiResponse(description="a check failed"),
        }
    )
    def get(self, request: Request) -> Response:
        report = health_report(app, timeout=settings.HEALTH_TIMEOUT)
        return Response(report, status=200 if report["status"] == "ok" else 503)
