"""Is v2 stronger than v1? Answered by the platform (arena.services.comparisons): both versions
at the same tables with two built-ins, every deal in every rotation, round after round until the
SPRT decides or the budget is spent; the verdict in words, with its interval; never rated.
Played here for real (the engine, the sandbox, the bots' code), round by round."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from arena import services
from arena.models import Bot, BotVersion, Comparison, Match, Rating
from arena.services import comparisons

pytestmark = pytest.mark.django_db
PASSWORD = "a long passphrase"
#: Throws its highest card: a poor Hearts player.
WORSE = b"""
from bots_sdk import Bot, highest


class Worse(Bot):
    def pass_cards(self, view):
        return list(view.hand[:3])

    def play(self, view):
        return highest(list(view.legal))
"""
#: Ducks under the trick when it can: a better one.
BETTER = b"""
from bots_sdk import Bot, highest, lowest, strength


class Better(Bot):
    def pass_cards(self, view):
        return sorted(view.hand, key=strength)[-3:]

    def play(self, view):
        if view.trick and all(card[1] == view.led_suit for card in view.legal):
            best = highest([card for _, card in view.trick if card[1] == view.led_suit])
            below = [card for card in view.legal if strength(card) < strength(best)]
            if below:
                return highest(below)
        return lowest(list(view.legal))
"""


def _versions(owner: Any) -> tuple[Bot, BotVersion, BotVersion]:
    bot = Bot.objects.create(owner=owner, name="ada-bot")
    made = []
    for number, (code, status) in enumerate(((WORSE, "retired"), (BETTER, "active")), 1):
        made.append(
            BotVersion.objects.create(
                bot=bot,
                number=number,
                filename="bot.py",
                code=code,
                sha256=hashlib.sha256(code).hexdigest(),
                status=status,
            )
        )
    return bot, made[0], made[1]


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


def test_a_stronger_version_is_found_stronger_with_its_interval(settings: Any) -> None:
    settings.COMPARISON_DEALS_PER_ROUND = 10
    owner = get_user_model().objects.create_user("ada", password=PASSWORD)
    bot, worse, better = _versions(owner)
    comparison = _play_out(comparisons.comparison_start(older=worse, newer=better))
    assert comparison.status == "finished", comparison.verdict
    result = comparison.result
    assert result["decision"] == "H1" and result["deals"] == 10 * comparison.rounds
    assert result["high"] < 0  # v2 takes fewer points a hand than v1, with its interval
    assert comparison.verdict.startswith("v2 is stronger than v1: it takes ")
    assert " points a hand fewer (−" in comparison.verdict
    assert comparison.verdict.endswith(f"over {result['deals']} duplicate deals; SPRT accepted)")
    # every deal at every table: eight a round, each version at every seat after each
    # neighbour, as comparisons.tables lays them out
    matches = list(comparison.matches.order_by("round", "rotation"))
    assert len(matches) == 8 * comparison.rounds
    layout = comparisons.tables(better.pk, worse.pk, list(comparisons.REFERENCES))
    for match in matches:
        seats = [s.version_id or s.builtin for s in match.seats.order_by("seat")]
        assert seats == layout[match.rotation]
        assert match.kind == "comparison" and match.ladder_id is None
    assert {m.seed for m in matches[:8]} == {matches[0].seed}
    assert not Rating.objects.filter(version__in=[worse, better]).exists()  # never rated


def test_the_same_code_scores_the_same_at_every_table(settings: Any) -> None:
    """Duplicate done right: two versions of identical code take the very same points on
    every deal (each plays every seat after the same neighbours), so the difference is 0
    exactly and the test finds the newer not stronger."""
    settings.COMPARISON_DEALS_PER_ROUND, settings.COMPARISON_MAX_ROUNDS = 3, 1
    owner = get_user_model().objects.create_user("ada", password=PASSWORD)
    bot, worse, better = _versions(owner)
    same = BotVersion.objects.create(
        bot=bot, number=3, filename="bot.py", code=BETTER, sha256="-", status="retired"
    )
    comparison = _play_out(comparisons.comparison_start(older=better, newer=same))
    assert comparison.status == "finished" and comparison.rounds == 1
    assert comparison.result["deals"] == 3
    assert (comparison.result["mean"], comparison.result["low"], comparison.result["high"]) == (
        0.0,
        0.0,
        0.0,
    )
    assert comparison.verdict == (
        "v3 is not stronger than v2: it takes as many points (0.0 points a hand [0.0, 0.0] "
        "over 3 duplicate deals; SPRT accepted)"
    )


def test_the_owner_asks_for_one_within_an_allowance_and_anyone_reads_them() -> None:
    owner = get_user_model().objects.create_user("ada", password=PASSWORD)
    get_user_model().objects.create_user("eve", password=PASSWORD)
    bot, worse, better = _versions(owner)
    ada, eve = APIClient(), APIClient()
    ada.force_authenticate(owner)
    eve.force_authenticate(get_user_model().objects.get(username="eve"))
    url = f"/api/bots/{bot.pk}/comparisons/"
    assert eve.post(url, {"older": 1, "newer": 2}).status_code == 403
    made = ada.post(url, {"older": 1, "newer": 2})
    assert made.status_code == 201, made.json()
    assert (made.json()["older"], made.json()["newer"], made.json()["requested"]) == (
        1,
        2,
        "owner",
    )
    again = ada.post(url, {"older": 2, "newer": 1})
    assert again.status_code == 400 and "at most 1 at once" in str(again.json())
    assert ada.post(url, {"older": 1, "newer": 1}).status_code == 400
    assert ada.post(url, {"older": 1, "newer": 9}).status_code == 404
    listed = APIClient().get(url).json()["results"]
    assert [c["id"] for c in listed] == [made.json()["id"]]
    assert listed[0]["status"] == "running" and listed[0]["verdict"] == ""


def test_a_new_active_version_is_compared_with_the_one_it_replaces() -> None:
    owner = get_user_model().objects.create_user("ada", password=PASSWORD)
    bot = services.bot_create(owner=owner, name="ada-bot")
    for code in (WORSE, BETTER):
        version = services.version_upload(bot=bot, user=owner, filename="bot.py", data=code)
        services.version_validate(version_id=version.pk)
        version.refresh_from_db()
        assert version.status == "active", version.validation_log
    assert "compared with v1 on duplicate deals" in version.validation_log


def test_the_platform_runs_one_comparison_per_bot_the_latest_activations() -> None:
    """v2, v3 and v4 active one after the other, before any verdict: the platform's comparison
    of each supersedes the one before (its matches not yet begun go), so one bot never has
    more than one of the platform's running (three ran, with all their matches, before)."""
    owner = get_user_model().objects.create_user("ada", password=PASSWORD)
    bot, v1, v2 = _versions(owner)
    started = [comparisons.comparison_start(older=v1, newer=v2)]
    for number in (3, 4):
        newer = BotVersion.objects.create(
            bot=bot, number=number, filename="bot.py", code=BETTER, sha256="x", status="active"
        )
        started.append(comparisons.comparison_start(older=started[-1].newer, newer=newer))
    for comparison in started:
        comparison.refresh_from_db()
    assert [c.status for c in started] == ["superseded", "superseded", "running"]
    assert started[0].verdict == (
        "no verdict: v3 became active first (its comparison runs instead)"
    )
    assert not Match.objects.filter(comparison__in=started[:2], status="queued").exists()
    open_matches = Match.objects.filter(comparison__bot=bot, status__in=["queued", "running"])
    assert set(open_matches.values_list("comparison", flat=True)) == {started[-1].pk}
    # An owner's own request stands beside it, within the owner's allowance.
    mine = comparisons.comparison_start(older=v1, newer=started[-1].newer, requested_by=owner)
    started[-1].refresh_from_db()
    assert mine.status == started[-1].status == "running"
