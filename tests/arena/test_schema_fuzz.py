"""Schemathesis over /api/schema/: generated requests to every operation find no 5xx and no
response that breaks the schema."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is a test dependency")

from hearts_platform.wsgi import application  # noqa: E402

# /api/health/ answers 503 by design when no worker runs (tests/hearts_platform covers it).
schema = schemathesis.openapi.from_wsgi("/api/schema/", application).exclude(path="/api/health/")


@pytest.fixture(autouse=True)
def keep_the_test_connection() -> Iterator[None]:
    """Requests run in-process inside the test's transaction: the end of a request must not
    close the connection (Django's own test client does the same)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.django_db
def test_no_server_errors_and_responses_match_the_schema(case) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import response_schema_conformance

    user, _ = get_user_model().objects.get_or_create(username="fuzzer")
    token, _ = Token.objects.get_or_create(user=user)
    case.call_and_validate(
        headers={"Authorization": f"Token {token.key}"},  # signed in: the writes are reached
        checks=[not_a_server_error, response_schema_conformance],
    )
