"""A broker or a cache that fails after a write never takes the write back: messages are sent
after the commit and their failures logged (the reaper sends them again). Real Redis clients
pointed at a port where nothing listens; real commits (transactional tests)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from celery import Celery
from celery import _state as celery_state
from rest_framework.test import APIClient

from arena import services
from arena.models import BotVersion, Ladder, LadderEntry, Match
from arena.services import tournaments

pytestmark = pytest.mark.django_db(transaction=True)

#: Nothing listens on port 1: a connection is refused at once.
DEAD_REDIS = "redis://127.0.0.1:1/0"
GOOD = (
    b"from bots_sdk import Bot, lowest\n\n\nclass Good(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n        return lowest(view.legal)\n"
)


@pytest.fixture
def dead_broker() -> Iterator[Celery]:
    """The project's Celery settings with the broker URL on the dead port, as the current app
    (the one ``arena`` sends through)."""
    app = Celery("bidel-dead-broker", set_as_current=False)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # No retries: a refused connection fails at once (kombu's default retries take ~6 s).
    app.conf.update(
        broker_url=DEAD_REDIS,
        result_backend=None,
        task_publish_retry=False,
        broker_transport_options={"max_retries": 0},
    )
    previous = celery_state.get_current_app()
    app.set_current()
    try:
        yield app
    finally:
        previous.set_current()


@pytest.fixture
def dead_cache(settings: Any) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": DEAD_REDIS,
        }
    }


def _failures(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if text in r.getMessage() and r.exc_info]


def test_a_challenge_is_stored_when_the_broker_is_down(
    dead_broker: Celery, caplog: pytest.LogCaptureFixture
) -> None:
    user = services.user_create(username="ada", password="a long passphrase")
    client = APIClient()
    client.force_authenticate(user)
    response = client.post(
        "/api/matches/", {"seats": ["low", "random", "heuristic", "low"]}, format="json"
    )
    assert response.status_code == 201, response.content
    assert Match.objects.get(pk=response.json()["id"]).status == Match.Status.QUEUED
    assert _failures(caplog, "could not send arena.match_dispatch")


def test_an_upload_is_stored_when_the_broker_is_down(
    dead_broker: Celery, caplog: pytest.LogCaptureFixture
) -> None:
    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    version = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
    assert BotVersion.objects.get(pk=version.pk).status == BotVersion.Status.PENDING
    assert _failures(caplog, "could not send arena.version_dispatch")
    # The reaper sends it again (and logs again while the broker stays down).
    BotVersion.objects.filter(pk=version.pk).update(created_at="2000-01-01T00:00:00Z")
    caplog.clear()
    services.matches_reap()
    assert _failures(caplog, f"could not send arena.version_dispatch({version.pk},)")


def test_a_finished_ladder_match_stays_finished_when_broker_and_cache_are_down(
    dead_broker: Celery, dead_cache: None, caplog: pytest.LogCaptureFixture
) -> None:
    ladder = Ladder.objects.get(name="standard")
    quick = ("random", "low", "heuristic", "montecarlo")  # (four built-ins of the eight)
    entries = list(ladder.entries.filter(builtin__in=quick).order_by("pk"))
    match = services.match_create(
        kind=Match.Kind.LADDER,
        ladder=ladder,
        hands=1,
        seats=[services.SeatSpec(builtin=e.builtin, entry=e) for e in entries],
    )
    finished = services.match_run(match_id=match.pk)
    assert finished is not None and finished.status == Match.Status.FINISHED
    assert finished.live_elo_applied and finished.seats.exclude(rank=None).count() == 4
    moved = LadderEntry.objects.filter(ladder=ladder).exclude(live_elo=1500.0)
    assert moved.exists()  # the result counted
    assert _failures(caplog, "the cache failed")
    assert _failures(caplog, "could not send arena.ratings_recompute")
    # A refit without the cache still runs (its debounce key simply expires).
    assert len(services.ratings_recompute(ladder=ladder)) == ladder.entries.count()


def test_a_tournament_match_stays_finished_when_the_broker_is_down(
    dead_broker: Celery, caplog: pytest.LogCaptureFixture
) -> None:
    tournament = tournaments.tournament_create(
        name="cup",
        format="round_robin",
        bots=["random", "low", "heuristic", "montecarlo"],
        table_size=4,
        hands_per_table=1,
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    match = tournament.matches.get()
    assert services.match_run(match_id=match.pk).status == Match.Status.FINISHED  # type: ignore[union-attr]
    assert _failures(caplog, f"could not send arena.tournament_advance({tournament.pk},)")
    # The periodic tick advances it all the same.
    tournaments.tournaments_tick()
    tournament.refresh_from_db()
    assert tournament.status == "finished"
