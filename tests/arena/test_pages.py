"""The pages people read: rendered with real data, the replay frames computed by the engine,
query counts that do not grow with the number of matches."""

from __future__ import annotations

import html
import json
import random
import re

import pytest
from django.test import Client

from arena import services
from arena.models import Ladder, Match
from arena.replays import replay_frames
from engine.record import replay
from tests.arena.live import synthetic_history

pytestmark = pytest.mark.django_db


def _frames(page: str) -> dict:
    raw = re.search(r'data-frames="([^"]*)"', page)
    assert raw, "no replay on the page"
    return json.loads(html.unescape(raw.group(1)))


def test_match_page_replays_the_record_trick_by_trick() -> None:
    match = services.match_create(
        kind=Match.Kind.CHALLENGE, hands=2, seed=11,
        seats=[services.SeatSpec(builtin=b) for b in ["low", "random", "heuristic", "montecarlo"]],
    )  # fmt: skip
    services.match_run(match_id=match.pk)
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    frames = _frames(page)
    state = replay(Match.objects.get(pk=match.pk).record)
    assert len(frames["hands"]) == len(state.history) == 2
    for shown, hand in zip(frames["hands"], state.history, strict=True):
        assert [t["winner"] for t in shown["tricks"]] == [t.winner for t in hand.tricks]
        assert shown["scores"] == list(hand.scores)
        assert shown["tricks"][-1]["taken"] == list(hand.points)
        assert sorted(c for cards in shown["hands"] for c in cards) == sorted(
            c for t in hand.tricks for _, c in t.plays
        )
        assert all(len(cards) == 13 for cards in shown["hands"])  # after passing
    assert "Replay controls" in page and "replay.js" in page and "heuristic" in page


def test_home_ladder_and_bot_pages() -> None:
    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot", description="ducks low")
    data = (
        b"from bots_sdk import Bot, lowest\n\n\nclass B(Bot):\n"
        b"    def pass_cards(self, view):\n        return view.hand[:3]\n\n"
        b"    def play(self, view):\n        return lowest(view.legal)\n"
    )
    version = services.version_upload(bot=bot, user=owner, filename="bot.py", data=data)
    services.version_validate(version_id=version.pk)
    ladder = Ladder.objects.get(name="standard")
    ladder.hands, ladder.concurrency = 1, 2
    ladder.save()
    for m in services.ladder_fill(ladder=ladder, rng=random.Random(1)):
        services.match_run(match_id=m.pk)
    services.ratings_recompute(ladder=ladder)
    home = Client().get("/").content.decode()
    assert "Top ten of standard" in home and "Recent matches" in home
    ladder_page = Client().get(f"/ladders/{ladder.pk}/").content.decode()
    assert ladder_page.count('class="interval"') == 4 and "Live Elo" in ladder_page
    public = Client().get(f"/bots/{bot.pk}/").content.decode()
    assert "ducks low" in public and "Validation log" not in public
    client = Client()
    client.force_login(owner)
    assert "Validation log of version 1" in client.get(f"/bots/{bot.pk}/").content.decode()
    assert Client().get("/bots/9999/").status_code == 404


def test_page_queries_do_not_grow_with_matches(django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    ladder = Ladder.objects.get(name="standard")
    rng = random.Random(2)
    for total in (30, 300):
        synthetic_history(ladder, total, rng)
        services.ratings_recompute(ladder=ladder)
        with django_assert_max_num_queries(8):
            assert Client().get("/").status_code == 200
        with django_assert_max_num_queries(4):
            assert Client().get(f"/ladders/{ladder.pk}/").status_code == 200


def test_replay_frames_of_a_cancellation_game() -> None:
    from engine.rules import RuleSet
    from engine.simulate import random_game

    record = random_game(
        RuleSet.from_preset("cancellation", players=6, target=40), 3, random.Random(3)
    ).to_record()
    frames = replay_frames(record)
    assert frames["players"] == 6 and frames["winners"]
    running = [0] * 6
    for hand in frames["hands"]:
        running = [a + b for a, b in zip(running, hand["scores"], strict=True)]
        assert hand["totals"] == running
        assert all(len(t["plays"]) == 6 for t in hand["tricks"])
    assert running == replay(record).totals


def test_tournament_page_standings_crosstable_and_refresh() -> None:
    from arena import tournaments

    tournament = tournaments.tournament_create(
        name="cup", format="round_robin", bots=["random", "low", "heuristic", "montecarlo"],
        table_size=4, hands_per_table=1, duplicate=True,
    )  # fmt: skip
    tournaments.tournament_start(tournament_id=tournament.pk)
    running = Client().get(f"/tournaments/{tournament.pk}/").content.decode()
    assert 'http-equiv="refresh"' in running and "0 of 4 matches" in running
    for match in tournament.matches.all():
        services.match_run(match_id=match.pk)
    tournaments.tournament_advance(tournament_id=tournament.pk)
    page = Client().get(f"/tournaments/{tournament.pk}/").content.decode()
    assert 'http-equiv="refresh"' not in page and "4 of 4 matches" in page
    assert page.count('class="interval"') == 4 and "Crosstable" in page
    assert page.count("/4</td>") == 12  # every pair met at all four tables of the rotation
    assert page.count('href="/matches/') == 4
