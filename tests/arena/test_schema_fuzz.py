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


#: Every operation of the schema, a test each. (Not ``schema.parametrize()``: under pytest 9
#: its tests share one id, and pytest-xdist, which keys tests by id, would run one of them.)
OPERATIONS = [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.label)
@pytest.mark.django_db
def test_no_server_errors_and_responses_match_the_schema(operation) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model
    from hypothesis import given
    from hypothesis import strategies as st
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import response_schema_conformance

    from arena import services

    user, _ = get_user_model().objects.get_or_create(username="fuzzer")
    _, key = services.token_create(user=user, name="fuzzer")
    cases = st.one_of(*(operation.as_strategy(generation_mode=mode) for mode in GenerationMode))

    @given(case=cases)
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    def requests_answer_well(case) -> None:  # type: ignore[no-untyped-def]
        case.call_and_validate(
            headers={"Authorization": f"Token {key}"},  # signed in: the writes are reached
            checks=[not_a_server_error, response_schema_conformance],
        )

    requests_answer_well()


@pytest.mark.django_db
def test_every_read_answers_with_real_data_as_its_schema_says() -> None:
    """Every GET of the schema, on real objects (a bot with versions, a finished match, a
    tournament with standings, a ladder with rankings): 200, and the body conforms (the
    fuzzing above mostly meets 404s for ids it made up)."""
    from django.contrib.auth import get_user_model
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import response_schema_conformance

    from arena import services
    from arena.models import BotVersion, Ladder
    from arena.services import tournaments

    owner = services.user_create(username="reader", password="a long passphrase")
    _, key = services.token_create(user=owner, name="reader")
    bot = services.bot_create(owner=owner, name="reader-bot")
    BotVersion.objects.create(
        bot=bot,
        number=1,
        filename="bot.py",
        code=b"x = 1\n",
        sha256="0" * 64,
        status="active",
        validation_log="ok",
    )
    match = services.match_create(
        kind="challenge",
        hands=1,
        seed=3,
        requested_by=owner,
        seats=[services.SeatSpec(builtin=n) for n in ("low", "random", "heuristic", "low")],
    )
    services.match_run(match_id=match.pk)
    from bots_sdk.analysis import SAMPLES

    analysed = services.analysis_request(user=owner, match_id=match.pk, seat=0, samples=SAMPLES)
    services.analysis_run(analysis_id=analysed.pk)
    cup = tournaments.tournament_create(
        name="cup",
        format="round_robin",
        hands_per_table=1,
        bots=["random", "low", "heuristic", "montecarlo"],
    )
    tournaments.tournament_start(tournament_id=cup.pk)
    ladder = Ladder.objects.get(name="standard")
    services.ratings_recompute(ladder=ladder)
    ids = {
        "/api/bots/": bot.pk,
        "/api/matches/": match.pk,
        "/api/tournaments/": cup.pk,
        "/api/ladders/": ladder.pk,
    }
    checked = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.method.upper() != "GET":
            continue
        path_parameters: dict[str, object] = {}
        if "{id}" in operation.path:
            path_parameters["id"] = next(v for k, v in ids.items() if operation.path.startswith(k))
        if "{number}" in operation.path:
            path_parameters["number"] = 1
        if "{seat}" in operation.path:
            path_parameters["seat"] = 0
        case = operation.Case(path_parameters=path_parameters)
        response = case.call_and_validate(
            headers={"Authorization": f"Token {key}"},
            checks=[not_a_server_error, response_schema_conformance],
        )
        assert response.status_code == 200, (operation.path, response.text[:300])
        checked.append(operation.path)
    assert len(checked) >= 12, checked
    assert get_user_model().objects.filter(username="reader").exists()
