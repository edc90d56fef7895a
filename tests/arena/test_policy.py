"""One policy for every path that makes work (arena.services.policy): a bot disabled by staff,
or of a closed account, takes no upload, no comparison (its owner's or the platform's), no
challenge, no person's game, no tournament, no ladder — tried at each door."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from rest_framework.test import APIClient

from arena import services
from arena.models import Bot, BotVersion, Comparison, Ladder, LadderEntry, Match
from arena.services import comparisons, tournaments
from tests.arena.test_api import GOOD

pytestmark = pytest.mark.django_db

PASSWORD = "a long pass phrase"


def _owner_and_bot(name: str = "ada") -> tuple[Any, Bot]:
    """An owner, and a bot of theirs with two active-then-retired versions (v2 active)."""
    owner = services.user_create(username=name, password=PASSWORD)
    bot = services.bot_create(owner=owner, name=f"{name}-bot", join_ladders=[])
    for _ in range(2):
        version = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
        assert services.version_validate(version_id=version.pk).status == "active"
    return owner, bot


def _api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _said(response: Any) -> str:
    return str(response.json()) if response["Content-Type"].startswith("application/json") else ""


@pytest.fixture(params=["disabled", "closed account"])
def idle(request: pytest.FixtureRequest) -> tuple[Any, Bot, str]:
    owner, bot = _owner_and_bot()
    if request.param == "disabled":
        Bot.objects.filter(pk=bot.pk).update(disabled=True)  # the admin's action
        word = "disabled by the staff"
    else:
        type(owner).objects.filter(pk=owner.pk).update(is_active=False)
        word = "closed account"
    bot.refresh_from_db()
    return owner, bot, word


def test_an_upload_is_refused(idle: tuple[Any, Bot, str]) -> None:
    owner, bot, word = idle
    owner.is_active = True  # (a closed account cannot sign in: ask the service directly too)
    with pytest.raises(ValidationError, match=word):
        services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
    if word == "disabled by the staff":
        answer = _api(owner).post(
            f"/api/bots/{bot.pk}/versions/", {"file": _file()}, format="multipart"
        )
        assert answer.status_code == 400 and word in _said(answer), answer.content
    assert bot.versions.count() == 2


def _file() -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("bot.py", GOOD)


def test_the_owners_comparison_is_refused(idle: tuple[Any, Bot, str]) -> None:
    owner, bot, word = idle
    v1, v2 = bot.versions.order_by("number")
    with pytest.raises(ValidationError, match=word):
        comparisons.comparison_start(older=v1, newer=v2, requested_by=owner)
    if word == "disabled by the staff":
        answer = _api(owner).post(
            f"/api/bots/{bot.pk}/comparisons/", {"older": 1, "newer": 2}, format="json"
        )
        assert answer.status_code == 400 and word in _said(answer), answer.content
    assert not Comparison.objects.filter(requested_by=owner).exists()


def test_the_platform_starts_no_comparison_for_a_bot_disabled_while_validated() -> None:
    owner, bot = _owner_and_bot()
    v3 = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
    Bot.objects.filter(pk=bot.pk).update(disabled=True)  # between the upload and its verdict
    before = Comparison.objects.count()
    settled = services.version_validate(version_id=v3.pk)
    assert "disabled by the staff" in settled.validation_log
    from arena.tasks import comparison_start  # (what the activation queues, run here)

    v2 = bot.versions.get(number=2)
    assert comparison_start(v2.pk, v3.pk) == 0
    assert Comparison.objects.count() == before


def test_a_challenge_and_a_persons_game_are_refused(idle: tuple[Any, Bot, str]) -> None:
    _, bot, word = idle
    other = services.user_create(username="grace", password=PASSWORD)
    challenge = _api(other).post(
        "/api/matches/", {"seats": [bot.pk, "low", "low", "low"], "hands": 1}, format="json"
    )
    assert challenge.status_code == 400 and word in _said(challenge), challenge.content
    version = bot.versions.get(number=2)
    with pytest.raises(ValidationError, match=word):
        services.human_game_create(
            user=other, opponents=[services.SeatSpec(version=version)] + _builtins(2)
        )
    page = Client().get("/play/", {"opponent": bot.name})
    assert page.status_code in (200, 400)  # (the form; asking to play it is refused below)
    assert not Match.objects.exists()


def _builtins(count: int) -> list[Any]:
    return [services.SeatSpec(builtin="low") for _ in range(count)]


def test_a_tournament_takes_no_entry_of_it(idle: tuple[Any, Bot, str]) -> None:
    _, bot, word = idle
    with pytest.raises(ValidationError, match=word):
        tournaments.tournament_create(
            name="cup", format="round_robin", bots=[bot.pk, "low", "random", "heuristic"]
        )


def test_a_ladder_takes_no_entry_of_it_and_never_seats_it(idle: tuple[Any, Bot, str]) -> None:
    owner, bot, word = idle
    ladder = Ladder.objects.get(name="standard")
    with pytest.raises(ValidationError, match=word):
        services.ladder_join(ladder=ladder, bot=bot)
    if word == "disabled by the staff":
        answer = _api(owner).post(f"/api/ladders/{ladder.pk}/entries/", {"bot": bot.pk})
        assert answer.status_code == 400 and word in _said(answer), answer.content
    assert not LadderEntry.objects.filter(bot=bot).exists()


def test_every_match_is_made_through_the_policy(idle: tuple[Any, Bot, str]) -> None:
    """match_create, where every kind of match is made, refuses it whatever the kind."""
    _, bot, word = idle
    version = BotVersion.objects.get(bot=bot, number=2)
    for kind in Match.Kind.values:
        with pytest.raises(ValidationError, match=word):
            services.match_create(
                kind=kind, seats=[services.SeatSpec(version=version)] + _builtins(3)
            )
    assert not Match.objects.exists()
