"""Ratings per version: each bot version is its own participant of the ladder's fit, so a
version's rating, interval and match count come from the matches it played alone; the
rankings show each bot once, at its active version's rating (an earlier version's, marked
provisional, until the active one has played); a new version gets its first matches at once;
and the matches stored before were re-attributed to the versions that played them
(migration 0019), which ``recompute_ratings --check`` confirms."""

from __future__ import annotations

import hashlib
import importlib
import random
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from arena import selectors, services
from arena.models import (
    Bot,
    BotVersion,
    Comparison,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
    Rating,
    VersionRating,
)
from bots_sdk.builtin import BUILTIN

pytestmark = pytest.mark.django_db
MIGRATION = importlib.import_module("arena.migrations.0019_ratings_attributed_to_versions")
BUILTINS = ("random", "low", "heuristic")


def _version(bot: Bot, number: int, status: str) -> BotVersion:
    code = f"# v{number}\n".encode()
    return BotVersion.objects.create(
        bot=bot,
        number=number,
        filename="bot.py",
        code=code,
        sha256=hashlib.sha256(code).hexdigest(),
        status=status,
    )


def _bot() -> tuple[Bot, LadderEntry, BotVersion, BotVersion]:
    owner = get_user_model().objects.create_user("ada", password="a long passphrase")
    bot = Bot.objects.create(owner=owner, name="ada-bot")
    entry = LadderEntry.objects.create(ladder=Ladder.objects.get(name="standard"), bot=bot)
    return bot, entry, _version(bot, 1, "retired"), _version(bot, 2, "active")


def _played(version: BotVersion, entry: LadderEntry, matches: int, place: int) -> None:
    """``matches`` finished ladder matches of ``version`` against three built-ins, finishing
    at ``place`` every time (the built-ins share the rest in turn)."""
    ladder = entry.ladder
    others = {e.builtin: e for e in ladder.entries.exclude(builtin="")}
    for n in range(matches):
        match = Match.objects.create(
            kind="ladder", status="finished", ladder=ladder, seed=n, rules="standard"
        )
        rest = [p for p in range(4) if p != place]
        random.Random(n).shuffle(rest)
        MatchSeat.objects.create(
            match=match, seat=0, entry=entry, version=version, rank=place, score=place
        )
        for seat, (name, rank) in enumerate(zip(BUILTINS, rest, strict=True), 1):
            MatchSeat.objects.create(
                match=match, seat=seat, entry=others[name], builtin=name, rank=rank, score=rank
            )


def test_each_version_is_rated_on_its_own_matches_and_the_active_one_is_shown() -> None:
    bot, entry, first, second = _bot()
    _played(first, entry, 30, place=3)  # v1 always last
    _played(second, entry, 20, place=0)  # v2 always first
    services.ratings_recompute(ladder=entry.ladder)

    fits = {r.version_id: r for r in VersionRating.objects.filter(entry=entry)}
    assert {v: r.matches for v, r in fits.items()} == {first.pk: 30, second.pk: 20}
    builtins = Rating.objects.filter(entry__ladder=entry.ladder, version=None)
    assert all(fits[first.pk].rating < b.rating < fits[second.pk].rating for b in builtins)
    shown = Rating.objects.get(entry=entry)
    assert (shown.version_id, shown.rating, shown.matches) == (
        second.pk,
        fits[second.pk].rating,
        20,
    )
    row = next(r for r in selectors.ladder_rankings(entry.ladder) if r["bot"]["id"] == bot.pk)
    assert (row["version"], row["rated_version"], row["matches"], row["rank"]) == (2, 2, 20, 1)

    versions = APIClient().get(f"/api/bots/{bot.pk}/versions/").json()["results"]
    ratings = {v["number"]: v["ratings"] for v in versions}
    assert [r["matches"] for r in ratings[1]] == [30] and [r["matches"] for r in ratings[2]] == [20]
    assert ratings[2][0]["ladder"] == "standard"
    out = StringIO()
    call_command("recompute_ratings", "--check", stdout=out)
    said = f"standard: {1 + len(BUILTIN)} ratings (2 bot versions), identical to the stored ones"
    assert said in out.getvalue(), out.getvalue()


def test_until_the_active_version_has_played_the_ranking_shows_an_earlier_one_provisionally() -> (
    None
):
    bot, entry, first, second = _bot()
    _played(first, entry, 40, place=1)
    services.ratings_recompute(ladder=entry.ladder)
    row = next(r for r in selectors.ladder_rankings(entry.ladder) if r["bot"]["id"] == bot.pk)
    assert (row["version"], row["rated_version"], row["matches"]) == (2, 1, 40)
    assert row["provisional"]  # (40 matches, but not the active version's)
    rankings = APIClient().get(f"/api/ladders/{entry.ladder.pk}/rankings/").json()
    assert [r["rated_version"] for r in rankings if r["bot"]["id"] == bot.pk] == [1]


def test_a_new_version_gets_its_first_ladder_matches_at_once() -> None:
    bot, entry, first, second = _bot()
    _played(first, entry, 25, place=1)  # the built-ins have 25 each too
    ladder = entry.ladder
    ladder.entries.exclude(builtin__in=("", *BUILTINS)).delete()  # (the others have none)
    ladder.concurrency, ladder.hands = 1, 1
    ladder.save()
    for seed in range(5):
        (match,) = services.ladder_fill(ladder=ladder, rng=random.Random(seed))
        assert match.seats.filter(version=second).exists(), seed  # v2 has played nothing yet
        Match.objects.filter(pk=match.pk).delete()


def test_the_migration_re_attributes_stored_matches_to_the_versions_that_played() -> None:
    bot, entry, first, second = _bot()
    _played(first, entry, 30, place=3)
    _played(second, entry, 20, place=0)
    # As stored before: one rating per entry, the bot's versions pooled, none per version.
    Rating.objects.create(entry=entry, rating=1500, low=1400, high=1600, matches=50)
    MIGRATION.refit(apps, None)
    fits = {r.version_id: r.matches for r in VersionRating.objects.filter(entry=entry)}
    assert fits == {first.pk: 30, second.pk: 20}
    assert Rating.objects.get(entry=entry).version_id == second.pk
    out = StringIO()
    call_command("recompute_ratings", "--check", stdout=out)
    assert "identical to the stored ones" in out.getvalue(), out.getvalue()


def test_the_bots_page_shows_each_versions_rating_the_takeovers_and_the_comparisons() -> None:
    bot, entry, first, second = _bot()
    _played(first, entry, 30, place=3)
    services.ratings_recompute(ladder=entry.ladder)
    _played(second, entry, 20, place=0)
    services.ratings_recompute(ladder=entry.ladder)
    Comparison.objects.create(
        bot=bot,
        older=first,
        newer=second,
        seed=1,
        status="finished",
        verdict="v2 is stronger than v1: −9.0 points a hand [−9.5, −8.5] over 40 duplicate "
        "deals (SPRT accepted)",
    )
    page = Client().get(f"/bots/{bot.pk}/").content.decode()
    versions = page.split('class="version-ratings"')
    assert len(versions) == 3  # a cell a version, newest first
    assert "20 matches)" in versions[1] and "30 matches)" in versions[2]
    assert "v2 is stronger than v1: −9.0 points a hand [−9.5, −8.5]" in page
    # the chart: one axis of matches (v2's from 30 on), marked where v2 took over
    assert page.count('class="takeover"') == 2 and ">v2</text>" in page
    assert "v1 from 30, v2 from 50" in page  # (its text alternative; v1's points were at 30)
