"""Lists that may hold millions of matches cost what they show: the count stops at a cap and
says so, the pages go on past it to the end, a page can start anywhere (``before``), and a bot's
matches are found through the seats' index however few it played."""

from __future__ import annotations

import random

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from arena.models import Bot, BotVersion, Ladder, Match, MatchSeat
from arena.paging import COUNT_CAP
from bots_sdk.builtin import BUILTIN
from tests.arena.live import synthetic_history

pytestmark = pytest.mark.django_db
PAGE = 50  # the API's page size


def _rare_bot(ladder: Ladder) -> tuple[Bot, list[int]]:
    """A bot that played three matches (two of them as its second version), among many."""
    owner = get_user_model().objects.create_user("ada", password="a long passphrase")
    bot = Bot.objects.create(owner=owner, name="rare")
    versions = [
        BotVersion.objects.create(
            bot=bot, number=n, filename="bot.py", code=b"x", sha256=str(n) * 64, status=status
        )
        for n, status in ((1, "retired"), (2, "active"))
    ]
    builtins = list(ladder.entries.exclude(builtin=""))[:3]
    played = []
    for version in (versions[0], versions[1], versions[1]):
        match = Match.objects.create(
            kind="ladder", status="finished", ladder=ladder, seed=1, rules="standard"
        )
        MatchSeat.objects.create(match=match, seat=0, version=version, rank=0, score=0)
        for seat, entry in enumerate(builtins, 1):
            MatchSeat.objects.create(
                match=match, seat=seat, entry=entry, builtin=entry.builtin, rank=seat, score=seat
            )
        played.append(match.pk)
    return bot, played


def test_the_match_list_counts_to_its_cap_and_pages_on_to_the_end() -> None:
    ladder = Ladder.objects.get(name="standard")
    synthetic_history(ladder, COUNT_CAP + 70, random.Random(1))
    client = APIClient()
    first = client.get("/api/matches/").json()
    assert (first["count"], first["count_capped"]) == (COUNT_CAP, True)
    assert len(first["results"]) == PAGE and first["next"]
    last_counted = (COUNT_CAP // PAGE) + 1  # the first page past the count
    past = client.get(f"/api/matches/?page={last_counted}").json()
    assert len(past["results"]) == PAGE and past["next"]
    end = client.get(f"/api/matches/?page={last_counted + 1}").json()
    assert len(end["results"]) == 20 and end["next"] is None
    # past the end, as for any list: a 404 saying so
    beyond = client.get(f"/api/matches/?page={last_counted + 2}")
    assert beyond.status_code == 404 and "Invalid page" in str(beyond.json())
    ids = [m["id"] for m in end["results"]]
    assert ids == sorted(ids, reverse=True) and min(ids) == Match.objects.order_by("pk")[0].pk
    # following next from the first page reaches every match once
    seen, url = [], "/api/matches/"
    while url:
        page = client.get(url).json()
        seen += [m["id"] for m in page["results"]]
        url = page["next"]
    assert len(seen) == len(set(seen)) == COUNT_CAP + 70
    # a short list is counted exactly
    few = client.get("/api/matches/?status=queued").json()
    assert (few["count"], few["count_capped"], few["results"]) == (0, False, [])


def test_a_page_starts_anywhere_with_before() -> None:
    ladder = Ladder.objects.get(name="standard")
    synthetic_history(ladder, 120, random.Random(2))
    ids = list(Match.objects.order_by("-pk").values_list("pk", flat=True))
    page = APIClient().get(f"/api/matches/?before={ids[99]}").json()
    assert [m["id"] for m in page["results"]] == ids[100:]
    assert page["count"] == 20 and not page["count_capped"]
    bad = APIClient().get("/api/matches/?before=soon")
    assert bad.status_code == 400 and "before" in bad.json()


def test_a_bots_few_matches_are_found_among_many() -> None:
    ladder = Ladder.objects.get(name="standard")
    synthetic_history(ladder, 300, random.Random(3))
    bot, played = _rare_bot(ladder)
    client = APIClient()
    found = client.get(f"/api/matches/?bot={bot.pk}").json()
    assert [m["id"] for m in found["results"]] == played[::-1] and found["count"] == 3
    second = client.get(f"/api/matches/?bot={bot.pk}&version=2").json()
    assert [m["id"] for m in second["results"]] == played[:0:-1]
    against = client.get(f"/api/matches/?opponent={bot.pk}&kind=ladder").json()
    assert against["count"] == 3
    builtin = ladder.entries.exclude(builtin="").first().builtin
    both = client.get(f"/api/matches/?bot={bot.pk}&opponent={builtin}").json()
    assert both["count"] == 3
    page = Client().get(f"/bots/{bot.pk}/").content.decode()
    assert all(f"/matches/{pk}/" in page for pk in played)


def test_the_matches_page_past_its_count_says_no_total() -> None:
    ladder = Ladder.objects.get(name="standard")
    synthetic_history(ladder, COUNT_CAP + 30, random.Random(4))
    client = Client()
    first = client.get("/matches/").content.decode()
    assert "Page 1<" in first and "Page 1 of" not in first and 'rel="next"' in first
    pages = -(-(COUNT_CAP + 30) // 25)
    last = client.get(f"/matches/?page={pages}").content.decode()
    assert f"Page {pages}<" in last and 'rel="next"' not in last and 'rel="prev"' in last


def test_a_ladder_of_many_shows_its_rankings_a_hundred_at_a_time() -> None:
    from arena import services
    from arena.models import LadderEntry

    ladder = Ladder.objects.get(name="standard")
    owner = get_user_model().objects.create_user("many", password="a long passphrase")
    for i in range(130):
        bot = Bot.objects.create(owner=owner, name=f"entrant-{i:03d}")
        BotVersion.objects.create(
            bot=bot, number=1, filename="bot.py", code=b"x", sha256="0" * 64, status="active"
        )
        LadderEntry.objects.create(ladder=ladder, bot=bot)
    synthetic_history(ladder, 40, random.Random(5))
    services.ratings_recompute(ladder=ladder)
    client = Client()
    first = client.get(f"/ladders/{ladder.pk}/").content.decode()
    second = client.get(f"/ladders/{ladder.pk}/?page=2").content.decode()
    rows = lambda page: page.count("<tr>") - 1  # noqa: E731  (less the header's)
    assert (rows(first), rows(second)) == (100, 130 + len(BUILTIN) - 100)
    assert 'rel="next"' in first and "Lower ranks" in first and 'rel="prev"' in second
    shown = {name for name in (f"entrant-{i:03d}" for i in range(130)) if name in first + second}
    assert len(shown) == 130  # every entry on one page or the other
