"""The author chooses which version plays (arena.services.bots): an upload that waits for its
trial (``if-not-weaker``) or for its owner (``never``); ``activate`` back and forth; a
version whose seats fault in ladder play is benched and the one before restored. Played here
for real (the engine, the sandbox, the bots' code), through the services and the API."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from arena import services
from arena.models import Bot, BotVersion, Comparison, Ladder, Match
from arena.services import comparisons
from arena.services.matches import SeatSpec, match_create
from tests.support import run_queued

pytestmark = pytest.mark.django_db
PASSWORD = "a long passphrase"

#: Plays the lowest legal card: a fair Hearts player that never faults.
STEADY = b"""
from bots_sdk import Bot, lowest


class Steady(Bot):
    def pass_cards(self, view):
        return list(view.hand[-3:])

    def play(self, view):
        return lowest(list(view.legal))
"""
#: STEADY for two hands, then it raises: the validation (two hands) never sees it.
CRASHER = b"""
from bots_sdk import Bot, lowest


class Crasher(Bot):
    def pass_cards(self, view):
        return list(view.hand[-3:])

    def play(self, view):
        if view.hand_number >= 2:
            raise ValueError("from the third hand on")
        return lowest(list(view.legal))
"""


def _owner() -> Any:
    return services.user_create(username="ada", password=PASSWORD)


def _validated(bot: Bot, owner: Any, code: bytes, activation: str = "now") -> BotVersion:
    """Upload ``code`` and validate it here, as a runner would; its queued work run too."""
    version = services.version_upload(
        bot=bot, user=owner, filename="bot.py", data=code, activation=activation
    )
    services.version_validate(version_id=version.pk)
    version.refresh_from_db()
    return version


def _play_out(comparison: Comparison) -> Comparison:
    """Play each round's matches here (as a runner would), advancing after each."""
    for _ in range(50):
        comparison.refresh_from_db()
        if comparison.status != Comparison.Status.RUNNING:
            return comparison
        for match in comparison.matches.filter(status=Match.Status.QUEUED):
            services.match_run(match_id=match.pk)
        comparisons.comparison_advance(comparison_id=comparison.pk)
    raise AssertionError("the comparison never ended")


def _bot_with_steady_v1(settings: Any) -> tuple[Any, Bot, BotVersion]:
    settings.COMPARISON_DEALS_PER_ROUND = 4
    owner = _owner()
    bot = services.bot_create(owner=owner, name="ada-bot", join_ladders=[])
    first = _validated(bot, owner, STEADY)
    assert first.status == BotVersion.Status.ACTIVE, first.validation_log
    assert first.activated_at is not None
    return owner, bot, first


def test_a_candidate_that_crashes_from_its_third_hand_never_replaces_the_active_one(
    settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    owner, bot, first = _bot_with_steady_v1(settings)
    with django_capture_on_commit_callbacks(execute=False) as sent:
        candidate = _validated(bot, owner, CRASHER, "if-not-weaker")
    assert candidate.status == BotVersion.Status.CANDIDATE  # validated: two hands, no fault
    assert "on trial" in candidate.validation_log
    assert sent  # its trial is asked of the workers: start it here, as a worker would
    comparisons.comparison_start(older=first, newer=candidate, trial=True)
    trial = _play_out(Comparison.objects.get(newer=candidate, trial=True))

    assert trial.status == Comparison.Status.FINISHED
    assert "faulted" in trial.verdict and "not made active" in trial.verdict
    candidate.refresh_from_db()
    first.refresh_from_db()
    bot.refresh_from_db()
    assert candidate.status == BotVersion.Status.RETIRED and candidate.activated_at is None
    assert first.status == BotVersion.Status.ACTIVE
    assert bot.notice.startswith("v2 was not made active: it faulted")
    assert "bidel activate ada-bot 2" in candidate.validation_log
    # No match but its trial ever seated it.
    assert not Match.objects.filter(seats__version=candidate).exclude(comparison=trial).exists()


def test_a_candidate_not_found_weaker_replaces_the_active_one(settings: Any) -> None:
    owner, bot, first = _bot_with_steady_v1(settings)
    settings.COMPARISON_MAX_ROUNDS = 1  # (identical code: undecided within the budget)
    candidate = _validated(bot, owner, STEADY + b"\n# the same player\n", "if-not-weaker")
    comparisons.comparison_start(older=first, newer=candidate, trial=True)
    trial = _play_out(Comparison.objects.get(newer=candidate, trial=True))
    assert trial.status == Comparison.Status.FINISHED, trial.verdict
    candidate.refresh_from_db()
    first.refresh_from_db()
    assert candidate.status == BotVersion.Status.ACTIVE and candidate.activated_at is not None
    assert first.status == BotVersion.Status.RETIRED
    assert "not weaker than v1" in candidate.validation_log


def test_never_waits_for_its_owner_who_switches_back_and_forth(settings: Any) -> None:
    owner, bot, first = _bot_with_steady_v1(settings)
    second = _validated(bot, owner, STEADY + b"\n# v2\n", "never")
    assert second.status == BotVersion.Status.RETIRED and "not made active, as asked" in (
        second.validation_log
    )
    api = APIClient()
    api.force_authenticate(owner)
    made = api.post(f"/api/bots/{bot.pk}/activate/", {"version": 2}, format="json")
    assert made.status_code == 200, made.content
    assert made.json()["status"] == "active" and made.json()["number"] == 2
    assert BotVersion.objects.get(pk=first.pk).status == BotVersion.Status.RETIRED
    back = api.post(f"/api/bots/{bot.pk}/activate/", {"version": 1}, format="json")
    assert back.status_code == 200 and back.json()["number"] == 1
    assert api.get(f"/api/bots/{bot.pk}/").json()["active_version"] == 1
    # What cannot play is refused, saying why; another's bot is not theirs to change.
    rejected = BotVersion.objects.create(
        bot=bot, number=3, filename="bot.py", code=b"x", sha256="0" * 64, status="rejected"
    )
    refused = api.post(f"/api/bots/{bot.pk}/activate/", {"version": rejected.number})
    assert refused.status_code == 400
    assert "only a version that passed its validation can play" in refused.content.decode()
    assert api.post(f"/api/bots/{bot.pk}/activate/", {"version": 9}).status_code == 400
    stranger = APIClient()
    stranger.force_authenticate(services.user_create(username="bob", password=PASSWORD))
    assert stranger.post(f"/api/bots/{bot.pk}/activate/", {"version": 2}).status_code == 403
    assert api.get(f"/api/bots/{bot.pk}/").json()["active_version"] == 1


def test_a_version_that_faults_in_ladder_play_is_benched_and_the_one_before_restored(
    settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    owner, bot, first = _bot_with_steady_v1(settings)
    crasher = _validated(bot, owner, CRASHER)  # --activate now: it plays at once
    assert crasher.status == BotVersion.Status.ACTIVE
    ladder = Ladder.objects.get(name="standard")
    for seed in range(settings.BENCH_MIN_FAULTED):
        match = match_create(
            kind=Match.Kind.LADDER,
            ladder=ladder,
            seats=[SeatSpec(version=crasher), *(SeatSpec(builtin="low") for _ in range(3))],
            hands=3,
            seed=seed,
        )
        with django_capture_on_commit_callbacks(execute=True):
            services.match_run(match_id=match.pk)
    assert run_queued("arena.version_bench_check") >= 1

    crasher.refresh_from_db()
    first.refresh_from_db()
    bot.refresh_from_db()
    assert crasher.status == BotVersion.Status.BENCHED
    assert first.status == BotVersion.Status.ACTIVE
    assert bot.notice == (
        "v2 was benched: its seats faulted in 3 of its last 3 ladder matches; v1 plays again"
    )
    status = APIClient().get(f"/api/bots/{bot.pk}/").json()
    assert status["active_version"] == 1 and status["notice"] == bot.notice


def test_the_bot_page_lets_its_owner_alone_choose_the_version(settings: Any) -> None:
    from django.test import Client

    owner, bot, first = _bot_with_steady_v1(settings)
    _validated(bot, owner, STEADY + b"\n# v2\n", "never")
    web = Client()
    web.force_login(owner)
    page = web.get(f"/bots/{bot.pk}/").content.decode()
    assert f"/bots/{bot.pk}/versions/2/activate/" in page
    assert f"/bots/{bot.pk}/versions/1/activate/" not in page  # (it plays)
    made = web.post(f"/bots/{bot.pk}/versions/2/activate/")
    assert made.status_code == 302
    assert "Version 2 plays for ada-bot now." in web.get(made["Location"]).content.decode()
    assert BotVersion.objects.get(bot=bot, number=2).status == BotVersion.Status.ACTIVE
    stranger = Client()
    stranger.force_login(services.user_create(username="bob", password=PASSWORD))
    assert "activate/" not in stranger.get(f"/bots/{bot.pk}/").content.decode()
    assert stranger.post(f"/bots/{bot.pk}/versions/1/activate/").status_code == 404
    assert BotVersion.objects.get(bot=bot, number=2).status == BotVersion.Status.ACTIVE
