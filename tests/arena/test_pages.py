"""The pages people read: rendered with real data, the replay frames computed by the engine,
query counts that do not grow with the number of matches."""

from __future__ import annotations

import html
import json
import random
import re
from typing import Any

import pytest
from django.test import Client

from arena import selectors, services
from arena.models import Ladder, Match
from bots_sdk.builtin import BUILTIN
from bots_sdk.referee.frames import replay_frames
from engine.record import replay
from tests.arena.live import synthetic_history

pytestmark = pytest.mark.django_db


def _frames(page: str) -> dict:
    raw = re.search(r'data-frames="([^"]*)"', page)
    assert raw, "no replay on the page"
    return json.loads(html.unescape(raw.group(1)))


def test_match_page_replays_the_record_trick_by_trick() -> None:
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        hands=2,
        seed=11,
        seats=[services.SeatSpec(builtin=b) for b in ["low", "random", "heuristic", "montecarlo"]],
    )
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
    # the eight built-ins and ada-bot, which joined with its first active version
    assert ladder_page.count('class="interval"') == 9 and "Live Elo" in ladder_page
    assert "; 9 bots entered." in home  # (the count the standings list: built-ins too)
    # A built-in is offered with its rating, so an opponent is picked by strength.
    rated = selectors.builtin_ratings(ladder)
    assert rated and set(rated) <= set(BUILTIN)
    bots_page = Client().get("/bots/").content.decode()
    play_form = Client().get("/play/").content.decode()
    for name, rating in rated.items():
        assert f">{name}</a> (rated {rating:.0f} on standard): " in bots_page, name
        assert f'<option value="{name}" label="{name} (rated {rating:.0f})">' in play_form
    listed = bots_page[bots_page.index('href="/bots/builtin/random/">random</a>') :]
    levels = [listed.index(f'/">{name}</a>') for name in ("strong-1", "strong-3", "strong")]
    assert levels == sorted(levels)  # the strength levels in order, the top one last
    # the bot's page: its matches named with their versions, and a link to all of them
    bot_page = Client().get(f"/bots/{bot.pk}/").content.decode()
    assert f'<a href="/bots/{bot.pk}/">ada-bot v1</a>' in bot_page
    assert f'href="/matches/?bot={bot.pk}">Every match of ada-bot</a>' in bot_page
    by_name = Client().get("/matches/", {"bot": "ADA-BOT"}).content.decode()
    by_id = Client().get("/matches/", {"bot": str(bot.pk)}).content.decode()
    assert by_name.count('href="/matches/') == by_id.count('href="/matches/')
    assert by_name.count(f'<a href="/bots/{bot.pk}/">ada-bot v1</a>') >= 1
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


@pytest.mark.parametrize(
    ("spec", "first", "second"),
    [
        ("persian", 1, -1),  # counterclockwise (RULES.md §7): right is the next seat
        ({"preset": "persian", "direction": "clockwise"}, -1, 1),
        ("standard", 1, -1),  # clockwise: left is the next seat
    ],
)
def test_replay_frames_name_the_seat_each_pass_reaches(spec: Any, first: int, second: int) -> None:
    from engine.rules import RuleSet
    from engine.simulate import random_game

    rules = RuleSet.from_spec(spec)
    record = random_game(rules, 5, random.Random(5)).to_record()
    frames = replay_frames(record)
    assert frames["direction"] == rules.direction  # (the viewer seats the table by it)
    hands = [h for h in frames["hands"] if not h["void"]]
    assert [h["number"] for h in hands[:2]] == [0, 1]
    for hand, step in zip(hands[:2], (first, second), strict=True):
        assert hand["pass_direction"] == rules.pass_cycle[hand["number"] % 4]
        assert hand["pass_to"] == [(seat + step) % 4 for seat in range(4)]
        for seat, cards in enumerate(hand["passes"]):
            assert hand["received"][(seat + step) % 4] == sorted(cards)


def test_tournament_page_standings_crosstable_and_refresh() -> None:
    from arena.services import tournaments

    tournament = tournaments.tournament_create(
        name="cup",
        format="round_robin",
        bots=["random", "low", "heuristic", "montecarlo"],
        table_size=4,
        hands_per_table=1,
        duplicate=True,
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    running = Client().get(f"/tournaments/{tournament.pk}/").content.decode()
    assert 'http-equiv="refresh"' in running and "0 of 4 matches" in running
    first = tournament.matches.order_by("pk").first()
    assert first is not None
    services.match_claim(match_id=first.pk, claim="c")  # a table being played: shown live
    running = Client().get(f"/tournaments/{tournament.pk}/").content.decode()
    assert running.count('class="live-table"') == 1
    assert f'data-live="/ws/matches/{first.pk}/live/"' in running
    Match.objects.filter(pk=first.pk).update(status=Match.Status.QUEUED, claim_token="")
    for match in tournament.matches.all():
        services.match_run(match_id=match.pk)
    tournaments.tournament_advance(tournament_id=tournament.pk)
    page = Client().get(f"/tournaments/{tournament.pk}/").content.decode()
    assert 'http-equiv="refresh"' not in page and "4 of 4 matches" in page
    assert "live-table" not in page
    assert page.count('class="interval"') == 4 and "Crosstable" in page
    assert page.count("/4</td>") == 12  # every pair met at all four tables of the rotation
    assert page.count('href="/matches/') == 4 + 1  # the four tables, and the header's index
    assert "Round 1, table 1, rotation 1" in page and "rotation 0" not in page  # from 1
    # The luck of the deals beside the points: each entrant's cards worth a hand, as stored.
    from arena import selectors

    rows = selectors.tournament_standings(tournament)
    assert all(row.expected_per_hand is not None for row in rows)
    assert "Cards worth per hand" in page
    for row in rows:
        assert f"{row.expected_per_hand:.2f}" in page
    # Duplicate: every entrant held every seat's cards once, so their luck is one figure.
    assert len({row.expected_per_hand for row in rows}) == 1


def _bot_with_history(matches: int, rng: random.Random) -> tuple[Any, Any, Any]:
    """A user's bot in the standard ladder with ``matches`` finished ladder matches (random
    finishing orders, no game played) and a refit after each tenth of them."""
    from arena.models import BotVersion, LadderEntry

    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    version = BotVersion.objects.create(
        bot=bot,
        number=1,
        filename="bot.py",
        code=b"x = 1\n",
        sha256="0" * 64,
        status="active",
        validation_log="ok",
    )
    ladder = Ladder.objects.get(name="standard")
    entry = LadderEntry.objects.create(ladder=ladder, bot=bot)
    _grow(ladder, entry, version, matches, rng)
    return owner, bot, ladder


def _grow(ladder: Any, entry: Any, version: Any, total: int, rng: random.Random) -> None:
    from arena.models import LadderEntry, MatchSeat

    others = list(LadderEntry.objects.filter(ladder=ladder).exclude(pk=entry.pk).order_by("pk"))
    have = Match.objects.filter(ladder=ladder).count()
    step = max(1, (total - have) // 10)
    for start in range(have, total, step):
        batch = Match.objects.bulk_create(
            Match(kind="ladder", status="finished", ladder=ladder, seed=i, rules="standard")
            for i in range(start, min(start + step, total))
        )
        seats = []
        for m in batch:
            table = [entry, *rng.sample(others, 3)]
            for s, (e, r) in enumerate(zip(table, rng.sample(range(4), 4), strict=True)):
                seats.append(
                    MatchSeat(
                        match=m,
                        seat=s,
                        entry=e,
                        builtin=e.builtin,
                        rank=r,
                        score=r,
                        version=version if e == entry else None,
                        stderr="thinking\n" if e == entry else "",
                    )
                )
        MatchSeat.objects.bulk_create(seats)
        services.ratings_recompute(ladder=ladder)


def test_rating_history_gains_a_point_per_refit_for_entries_that_played() -> None:
    from arena.models import LadderEntry, RatingPoint

    owner, bot, ladder = _bot_with_history(40, random.Random(1))
    entry = LadderEntry.objects.get(bot=bot)
    points = list(RatingPoint.objects.filter(entry=entry).order_by("at", "pk"))
    assert len(points) == 10  # a refit after each tenth of the matches
    assert [p.matches for p in points] == list(range(4, 41, 4))
    assert (points[-1].rating, points[-1].low) == (entry.rating.rating, entry.rating.low)
    services.ratings_recompute(ladder=ladder)  # nobody played since: no new point
    assert RatingPoint.objects.filter(entry=entry).count() == 10
    page = Client().get(f"/bots/{bot.pk}/").content.decode()
    chart = re.search(r"<svg .*?</svg>", page, re.S)
    assert chart and chart.group(0).count("<circle") == 10
    assert "between 4 and 40 matches played" in chart.group(0)  # the text alternative


def test_rating_history_is_thinned_by_the_database_keeping_both_ends() -> None:
    from datetime import timedelta

    from django.utils import timezone

    from arena.models import LadderEntry, RatingPoint
    from arena.selectors import rating_history

    owner, bot, ladder = _bot_with_history(4, random.Random(2))
    entry = LadderEntry.objects.get(bot=bot)
    RatingPoint.objects.filter(entry=entry).delete()
    start = timezone.now()
    RatingPoint.objects.bulk_create(
        RatingPoint(
            entry=entry, rating=i, low=i - 1, high=i + 1, matches=i, at=start + timedelta(minutes=i)
        )
        for i in range(1000)
    )
    rows = rating_history([entry.pk], points=200)
    played = [row[5] for row in rows]
    assert 190 <= len(rows) <= 201 and played == sorted(played)
    assert played[0] == 0 and played[-1] == 999  # the oldest and the newest
    gaps = {b - a for a, b in zip(played, played[1:], strict=False)}
    assert max(gaps) <= 5  # evenly spread
    assert len(rating_history([entry.pk], points=2000)) == 1000


def test_every_page_keeps_its_query_count_as_matches_grow() -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from arena.models import BotVersion, LadderEntry
    from arena.services import tournaments

    rng = random.Random(3)
    owner, bot, ladder = _bot_with_history(30, rng)
    tournament = tournaments.tournament_create(
        name="cup",
        format="round_robin",
        bots=["random", "low", "heuristic", "montecarlo"],
        table_size=4,
        hands_per_table=1,
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    match = tournament.matches.get()
    services.match_run(match_id=match.pk)
    pages = {
        "home": "/",
        "ladder": f"/ladders/{ladder.pk}/",
        "bot": f"/bots/{bot.pk}/",
        "match": f"/matches/{match.pk}/",
        "tournament": f"/tournaments/{tournament.pk}/",
        "sign up": "/signup/",
        "log in": "/login/",
        "tournaments": "/tournaments/",
        "bots": "/bots/?q=bot",
        "matches": f"/matches/?bot={bot.pk}&opponent=low&kind=ladder",
        "matches, page 2": "/matches/?page=2",
        "built-in": "/bots/builtin/heuristic/",
        "guide": "/docs/bots/",
    }
    owned = {
        "bot (owner)": f"/bots/{bot.pk}/",
        "account": "/account/",
        "new bot": "/bots/new/",
        "upload": f"/bots/{bot.pk}/upload/",
        "challenge": "/challenges/new/",
    }

    def counts() -> dict[str, int]:
        found = {}
        for name, path in {**pages, **owned}.items():
            client = Client()
            if name in owned:
                client.force_login(owner)
            with CaptureQueriesContext(connection) as queries:
                response = client.get(path)
            assert response.status_code == 200, name
            assert re.fullmatch(r"app;dur=[0-9.]+", response.headers["Server-Timing"])
            found[name] = len(queries)
        return found

    small = counts()
    version = BotVersion.objects.get(bot=bot)
    _grow(ladder, LadderEntry.objects.get(bot=bot), version, 300, rng)
    assert counts() == small


def test_indexes_are_paged_filtered_and_linked_from_every_page() -> None:
    from arena.models import Tournament
    from arena.services import tournaments

    owner, bot, ladder = _bot_with_history(60, random.Random(4))
    finished = tournaments.tournament_create(
        name="Old cup",
        format="round_robin",
        bots=["random", "low", "heuristic", "montecarlo"],
        hands_per_table=1,
    )
    Tournament.objects.filter(pk=finished.pk).update(status="finished")
    home = Client().get("/").content.decode()
    for index in ('href="/tournaments/"', 'href="/bots/"', 'href="/matches/"'):
        assert index in home  # in the header of every page
    listed = Client().get("/tournaments/?status=finished").content.decode()
    assert "Old cup" in listed and f'href="/tournaments/{finished.pk}/"' in listed
    assert "Old cup" not in Client().get("/tournaments/?status=running").content.decode()
    bots = Client().get("/bots/?q=ADA").content.decode()
    assert f'href="/bots/{bot.pk}/"' in bots and "not rated" not in bots.split("Built-in")[0]
    assert "No bots match" in Client().get("/bots/?q=nobody").content.decode()
    assert 'href="/bots/builtin/montecarlo/"' in bots
    first = Client().get(f"/matches/?bot={bot.pk}").content.decode()
    assert "Page 1 of 3" in first and 'rel="next"' in first  # 60 matches, 25 a page
    assert f"bot={bot.pk}&amp;page=2" in first  # the pager keeps the filters
    last = Client().get(f"/matches/?bot={bot.pk}&page=99").content.decode()
    assert "Page 3 of 3" in last  # past the end: the last page, not an error
    shown = re.findall(r'<a href="/matches/(\d+)/">', first)
    assert len(shown) == 25 and shown == sorted(shown, key=int, reverse=True)
    # scores beside each seat; opponents by built-in name narrow the list
    assert re.search(r"ada-bot v1</a> \d", first)  # (the version each match seated)
    against = Client().get(f"/matches/?bot={bot.pk}&opponent=nobody-here")
    assert against.status_code == 200  # a name no bot has: no match, not an error
    assert "No matches found." in against.content.decode()
    with_low = Client().get(f"/matches/?bot={bot.pk}&opponent=low").content.decode()
    expected = set(
        Match.objects.filter(seats__version__bot=bot)
        .filter(seats__builtin="low")
        .values_list("pk", flat=True)
    )
    shown_low = {int(pk) for pk in re.findall(r'<a href="/matches/(\d+)/">', with_low)}
    assert shown_low and shown_low <= expected and len(expected) < 60


def test_built_ins_have_pages_and_the_guides_are_served() -> None:
    page = Client().get("/bots/builtin/heuristic/").content.decode()
    assert "heuristic" in page and "built-in bot" in page and "Ratings" in page
    assert Client().get("/bots/builtin/nosuch/").status_code == 404
    guide = Client().get("/docs/bots/").content.decode()
    assert (
        '<h1 id="writing-a-bidel-bot">Writing a Bidel bot</h1>' in guide
        and 'href="/docs/protocol/"' in guide
    )
    assert "<script" not in guide.split('<article class="guide"')[1]
    assert Client().get("/docs/secrets/").status_code == 404
    home = Client().get("/").content.decode()
    assert "Write a bot in three steps" in home and 'href="/docs/bots/"' in home
    assert re.search(r"Now: \d+ match(es)? playing, \d+ queued", home)


def _sit_down(client: Client, rules: str = "hokm_40") -> tuple[Match, str]:
    response = client.post(
        "/play/",
        {
            "rules": rules,
            "opponent1": "heuristic",
            "opponent2": "low",
            "opponent3": "random",
            "hands": "1",
        },
    )
    assert response.status_code == 302, response.content.decode()[-2000:]
    match = Match.objects.get(pk=int(response["Location"].strip("/").split("/")[-1]))
    cookie = response.cookies["bidel_seat"]
    assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/"
    token = cookie.value
    assert token not in response["Location"]
    return match, token


def test_anyone_sits_down_against_bots_and_the_runner_gets_a_persons_seat() -> None:
    from arena.services.dispatch import _match_job

    client = Client()
    match, token = _sit_down(client)
    assert match.kind == Match.Kind.HUMAN and match.requested_by is None and match.ladder is None
    assert match.hands == 1
    seats = list(match.seats.order_by("seat"))
    assert [s.builtin for s in seats] == ["", "heuristic", "low", "random"]
    assert seats[0].human_token == token and seats[0].person is None
    job = _match_job(match)
    assert job.live == "bystander"  # its spectators see what a bystander sees
    assert job.seats[0].human == token and job.seats[1].builtin == "heuristic"
    page = client.get(f"/play/{match.pk}/").content.decode()
    assert f'data-play="/ws/play/{match.pk}/"' in page and token not in page
    assert f'data-live="/ws/matches/{match.pk}/live/"' in page
    # Another browser is refused the seat; the old address (the secret in the path) is gone.
    assert Client().get(f"/play/{match.pk}/").status_code == 404
    assert Client().get(f"/play/{token}/")["Location"] == "/play/"
    assert Client().get("/play/999999/").status_code == 404  # no such game
    # The match's public page never carries the person's token.
    assert token not in Client().get(f"/matches/{match.pk}/").content.decode()
    assert token not in Client().get(f"/api/matches/{match.pk}/").content.decode()


def test_the_play_form_says_what_is_wrong_in_the_apis_words() -> None:
    response = Client().post(
        "/play/", {"rules": "standard", "opponent1": "nobody-such", "opponent2": "low"}
    )
    assert response.status_code == 400
    assert "neither a bot id nor a built-in" in response.content.decode()
    assert not Match.objects.filter(kind=Match.Kind.HUMAN).exists()


def test_a_signed_in_person_finds_their_games_on_their_account(django_user_model: Any) -> None:
    user = django_user_model.objects.create_user(username="pat", password="pw-long-enough-1")
    client = Client()
    client.force_login(user)
    match, token = _sit_down(client, "standard")
    assert match.seats.get(seat=0).person == user and match.requested_by == user
    page = client.get("/account/").content.decode()
    assert f'href="/play/{match.pk}/"' in page and token not in page
    # Signed in in another browser (no seat cookie): the same seat.
    elsewhere = Client()
    elsewhere.force_login(user)
    assert elsewhere.get(f"/play/{match.pk}/").status_code == 200


def test_a_persons_game_holds_its_claim_for_hours_not_minutes() -> None:
    match, _ = _sit_down(Client(), "standard")
    claimed = services.match_claim(match_id=match.pk, claim="c")
    assert claimed is not None and claimed.lease_until is not None
    held = (claimed.lease_until - claimed.started_at).total_seconds()
    assert held == services.HUMAN_LEASE_SECONDS > services.LEASE_SECONDS
    bots = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(builtin="low")] * 4, hands=1
    )
    claimed = services.match_claim(match_id=bots.pk, claim="d")
    assert claimed is not None and claimed.lease_until is not None
    held = (claimed.lease_until - claimed.started_at).total_seconds()
    assert held == services.LEASE_SECONDS


def test_a_bot_page_offers_to_play_against_the_bot() -> None:
    owner = services.user_create(username="ida", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ida-bot")
    page = Client().get(f"/bots/{bot.pk}/").content.decode()
    assert 'href="/play/?opponent=ida-bot"' in page
    form = Client().get("/play/?opponent=ida-bot").content.decode()
    assert 'id="id_opponent1" name="opponent1" type="text" value="ida-bot"' in form


#: Plays a card it does not hold at its first decision of every hand: a fault in each hand.
FAULTY_BOT = b"""\
import sys
from bots_sdk import Bot, lowest


class Faulty(Bot):
    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        if len(view.hand) == 13:
            print("about to cheat", file=sys.stderr)
            return next(c for c in ("2C", "3C", "4C", "5C") if c not in view.hand)
        return lowest(view.legal)
"""


def _faulty_match() -> tuple[Any, Any, Match]:
    """ada's bot, FAULTY_BOT, at the first seat of a finished one-hand challenge."""
    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    faulty = services.version_upload(bot=bot, user=owner, filename="bot.py", data=FAULTY_BOT)
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=[services.SeatSpec(version=faulty)]
        + [services.SeatSpec(builtin=b) for b in ("random", "low", "heuristic")],
        hands=1,
        seed=5,
        requested_by=owner,
    )
    services.match_run(match_id=match.pk)
    return owner, bot, match


def test_pages_count_seats_and_hands_from_1_while_the_json_keeps_indexes() -> None:
    owner, bot, match = _faulty_match()
    client = Client()
    client.force_login(owner)
    page = client.get(f"/matches/{match.pk}/").content.decode()
    # What the replay viewer reads stays the record's: the fault of the first seat in the first
    # hand is at index 0 (replay.js says "illegal in hand 1": tests/arena/test_browser.py).
    faults = _frames(page)["faults"]
    assert [(f["class"], f["hand"]) for f in faults[0]] == [("illegal", 0)]
    assert faults[1:] == [[], [], []]
    seats = re.search(r"<caption>Seats</caption>.*?<tbody>(.*?)</tbody>", page, re.S)
    assert seats and re.findall(r"<tr><td>(\d+)</td>", seats.group(1)) == ["1", "2", "3", "4"]
    assert "Seat 1: ada-bot" in page and "Seat 0" not in page  # the owner's stderr
    assert f"Match {match.pk}, seat 1<" in client.get(f"/bots/{bot.pk}/").content.decode()
    persian = Client(HTTP_ACCEPT_LANGUAGE="fa")
    persian.force_login(owner)
    page = persian.get(f"/matches/{match.pk}/").content.decode()
    assert "جایگاه ۱: ada-bot" in page and "<tr><td>۱</td>" in page and "<tr><td>۰</td>" not in page
    # A person's own game: the first seat is theirs, seat 1 to them.
    player = Client()
    game, _ = _sit_down(player, "standard")
    assert game.seats.get(seat=0).human_token
    mine = player.get(f"/play/{game.pk}/").content.decode()
    assert f"Match {game.pk}, you sit in seat 1." in mine and 'data-seat="0"' in mine


def test_the_owner_reads_the_seats_timeline_on_the_match_page() -> None:
    """Decision by decision: the time charged, the bank left, the lines written at the very
    decision that wrote them, the fault where it happened — for the owner alone."""
    owner, _, match = _faulty_match()
    client = Client()
    client.force_login(owner)
    page = client.get(f"/matches/{match.pk}/").content.decode()
    table = re.search(r'<table class="timeline">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert table, "the owner's timeline"
    rows = re.findall(r"<tr( class=\"fault\")?>(.*?)</tr>", table.group(1), re.S)
    assert len(rows) == 14  # the pass and thirteen plays
    faulted, cells = rows[1]  # the first play: the illegal card, and its line
    assert faulted and "fault: illegal" in cells and "about to cheat" in cells
    assert "<meter" in cells and re.search(r"<td>1</td><td>1</td><td>play", cells)
    assert all("about to cheat" not in cells for _, cells in rows[2:])
    assert not any(mark for mark, _ in rows[2:])
    other = Client()
    other.force_login(services.user_create(username="eve", password="a long passphrase"))
    assert 'class="timeline"' not in other.get(f"/matches/{match.pk}/").content.decode()
