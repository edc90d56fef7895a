"""Analyses on the platform: a finished match's seat valued decision by decision by the runners
(``runner.analyse``), kept once per match, seat and samples, read by anyone through
``/api/matches/{id}/analysis/{seat}/``, asked for against a per-user allowance; and the luck of
the deal each match keeps per seat. The numbers are :mod:`bots_sdk.analysis`'s: the API's, a
runner's and ``bidel analyse``'s are one."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from arena import services
from arena.models import Analysis, Match, MatchSeat
from bots_sdk.analysis import METHOD, analyse_game
from bots_sdk.remote import Platform
from engine.rules import RuleSet
from engine.state import GameState
from tests.arena.browser import web_server
from tests.arena.live import worker_env
from tests.arena.test_author_loop import _bidel
from tests.support import DEADLINE, celery_worker, purge_queues, wait_until

PASSWORD = "a long passphrase"
#: Plays its highest legal card: it takes its own queen of spades whenever it can.
HIGHEST = (
    b"from bots_sdk import Bot, highest\n\n\nclass High(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[:3]\n\n"
    b"    def play(self, view):\n        return highest(view.legal)\n"
)


def _client(username: str) -> APIClient:
    get_user_model().objects.create_user(username, password=PASSWORD)
    client = APIClient()
    token = client.post("/api/token/", {"username": username, "password": PASSWORD}).json()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token['token']}")
    return client


def _finished(seats: list[services.SeatSpec], seed: int = 11, hands: int = 1) -> Match:
    match = services.match_create(kind=Match.Kind.CHALLENGE, seats=seats, hands=hands, seed=seed)
    services.match_run(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED, match.error
    return match


def _builtins(*names: str) -> list[services.SeatSpec]:
    return [services.SeatSpec(builtin=name) for name in names]


@pytest.mark.django_db
def test_a_seat_is_asked_for_made_once_and_read_by_anyone_with_the_librarys_numbers() -> None:
    match = _finished(_builtins("heuristic", "random", "low", "montecarlo"))
    ada, bea = _client("ada"), _client("bea")
    address = f"/api/matches/{match.pk}/analysis/1/"
    assert ada.get(address, {"samples": 16}).status_code == 404  # nobody asked yet
    asked = ada.post(address, {"samples": 16}, format="json")
    assert asked.status_code == 202, asked.json()
    assert asked.json()["status"] == "queued" and asked.json()["method"] == METHOD
    analysis = Analysis.objects.get(match=match, seat=1, samples=16)
    services.analysis_run(analysis_id=analysis.pk)  # (a runner's job, played here)
    done = APIClient().get(address, {"samples": 16})  # anyone reads it
    assert done.status_code == 200 and done.json()["status"] == "done"
    document = done.json()
    expected = analyse_game(APIClient().get(f"/api/matches/{match.pk}/record/").json(), 1, 16)
    same = json.loads(json.dumps(expected.to_dict()))
    assert {k: document[k] for k in same} == same  # the library's numbers, every one
    assert document["decisions"], "a hand of heuristic play has choices to value"
    # Asked again, by someone else: the kept one, at once, and not counted against them.
    again = bea.post(address, {"samples": 16}, format="json")
    assert again.status_code == 200 and again.json()["decisions"] == document["decisions"]
    assert Analysis.objects.filter(match=match).count() == 1
    assert Analysis.objects.get().requested_by.username == "ada"


@pytest.mark.django_db
def test_taking_ones_own_queen_is_marked_a_blunder_on_the_platform() -> None:
    owner = get_user_model().objects.create_user("ada", password=PASSWORD)
    bot = services.bot_create(owner=owner, name="highest")
    version = services.version_upload(bot=bot, user=owner, filename="bot.py", data=HIGHEST)
    services.version_validate(version_id=version.pk)
    version.refresh_from_db()
    assert version.status == "active", version.validation_log
    seats = [services.SeatSpec(version=version), *_builtins("low", "low", "low")]
    for seed in range(1, 60):  # a deal where it wins a trick with its queen, a lower spade held
        match = _finished(seats, seed=seed)
        taken = _queen_taken_over_a_lower_spade(match.record, seat=0)
        if taken is not None:
            break
    else:
        pytest.fail("no deal in 60 where the highest-card bot takes its own queen")
    client = _client("bea")
    address = f"/api/matches/{match.pk}/analysis/0/"
    assert client.post(address, {"samples": 64}, format="json").status_code == 202
    services.analysis_run(analysis_id=Analysis.objects.get(match=match).pk)
    document = client.get(address, {"samples": 64}).json()
    queen = [d for d in document["decisions"] if (d["hand"], d["trick"]) == (0, taken)]
    assert len(queen) == 1 and queen[0]["played"] == "QS", document["decisions"]
    assert queen[0]["mark"] == "blunder", queen[0]
    assert queen[0]["interval"][0] > 0  # lost for sure, not by the samples' chance
    assert document["marks"]["blunder"] >= 1


def _queen_taken_over_a_lower_spade(record: dict[str, Any], seat: int) -> int | None:
    """The trick (from 0) where ``seat`` played the Q♠ holding a lower legal spade and took
    it; None if it never did."""
    hand = record["hands"][0]
    state = GameState(RuleSet.from_spec(record["rules"]), record["seed"], deal=hand["deal"])
    for who, cards in enumerate(hand["passes"] or []):
        for card in cards:
            state.apply(card, seat=who)
    queen_trick, lower_held = None, False
    for card in hand["plays"]:
        if state.current == seat and card == "QS":
            queen_trick = len(state.observation(seat).tricks)
            lower_held = any(c[1] == "S" and c[0] in "23456789TJ" for c in state.legal_actions())
        state.apply(card)
    if queen_trick is None or not lower_held:
        return None
    tricks = state.observation(seat).tricks
    return queen_trick if tricks[queen_trick].winner == seat else None


@pytest.mark.django_db
def test_the_allowance_counts_new_analyses_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "analyses", "2/day")
    match = _finished(_builtins("heuristic", "random", "low", "random"))
    ada, bea = _client("ada"), _client("bea")
    for seat in (0, 1):
        assert (
            ada.post(f"/api/matches/{match.pk}/analysis/{seat}/", {"samples": 4}).status_code == 202
        )
    refused = ada.post(f"/api/matches/{match.pk}/analysis/2/", {"samples": 4})
    assert refused.status_code == 429 and "2/day" in refused.json()["detail"][0]
    assert int(refused["Retry-After"]) > 0
    assert not Analysis.objects.filter(seat=2).exists()  # nothing stored for the refusal
    # One that exists costs nothing, to ada or anyone: bea asks for ada's, then two of her own.
    assert ada.post(f"/api/matches/{match.pk}/analysis/1/", {"samples": 4}).status_code == 202
    assert bea.post(f"/api/matches/{match.pk}/analysis/0/", {"samples": 4}).status_code == 202
    for seat in (2, 3):
        assert (
            bea.post(f"/api/matches/{match.pk}/analysis/{seat}/", {"samples": 4}).status_code == 202
        )
    assert Analysis.objects.filter(requested_by__username="bea").count() == 2


@pytest.mark.django_db
def test_what_cannot_be_analysed_is_refused_in_words_and_stores_nothing() -> None:
    finished = _finished(_builtins("low", "low", "low", "low"))
    long = _finished(_builtins("low", "low", "low", "low"), hands=30)  # 30 × 2000: too much
    queued = services.match_create(kind=Match.Kind.CHALLENGE, seats=_builtins(*["low"] * 4))
    ada = _client("ada")
    cases = [
        (f"/api/matches/{queued.pk}/analysis/0/", {}, 400, "has not finished"),
        (f"/api/matches/{finished.pk}/analysis/4/", {}, 400, "a seat is 0 to 3"),
        (f"/api/matches/{finished.pk}/analysis/0/", {"samples": 1}, 400, "2"),
        (f"/api/matches/{finished.pk}/analysis/0/", {"samples": "many"}, 400, "integer"),
        (f"/api/matches/{finished.pk}/analysis/0/", {"samples": 10**6}, 400, "2000"),
        (f"/api/matches/{long.pk}/analysis/0/", {"samples": 2000}, 400, "at most 1333 samples"),
        ("/api/matches/999999/analysis/0/", {}, 404, ""),
    ]
    for address, body, code, words in cases:
        answer = ada.post(address, body, format="json")
        assert answer.status_code == code, (address, body, answer.content)
        assert words in json.dumps(answer.json()), answer.json()
    anonymous = APIClient().post(f"/api/matches/{finished.pk}/analysis/0/", {})
    assert anonymous.status_code in (401, 403)
    assert not Analysis.objects.exists()


@pytest.mark.django_db
def test_a_stale_or_forged_result_changes_nothing_and_a_lost_one_fails_then_goes_again() -> None:
    match = _finished(_builtins("heuristic", "random", "low", "random"))
    analysis = services.analysis_request(user=None, match_id=match.pk, seat=0, samples=4)
    forged = {
        "kind": "analysis",
        "ref": analysis.pk,
        "claim": "not-the-token",
        "ok": True,
        "report": {"decisions": []},
    }
    assert services.job_store(result=forged) is False
    analysis.refresh_from_db()
    assert analysis.status == "queued" and analysis.report is None
    # No runner answers: the reaper fails it, saying so; asking again sends it again.
    Analysis.objects.filter(pk=analysis.pk).update(sent_at=timezone.now() - timedelta(hours=2))
    assert services.analyses_expire() == 1
    analysis.refresh_from_db()
    assert analysis.status == "failed" and "no runner" in analysis.error
    again = services.analysis_request(user=None, match_id=match.pk, seat=0, samples=4)
    assert again.pk == analysis.pk and again.status == "queued" and again.claim_token
    assert again.claim_token != analysis.claim_token
    # The first claim's late answer is refused; the new claim's is kept.
    late = {**forged, "claim": analysis.claim_token}
    assert services.job_store(result=late) is False
    assert services.analysis_run(analysis_id=again.pk).status == "done"


@pytest.mark.django_db
def test_every_seat_keeps_its_luck_and_the_hands_luck_adds_up_to_their_points() -> None:
    match = _finished(_builtins("heuristic", "random", "low", "montecarlo"), seed=5, hands=3)
    seats = list(MatchSeat.objects.filter(match=match).order_by("seat"))
    assert all(len(seat.hand_expected) == 3 for seat in seats)
    for hand in range(3):
        values = [seat.hand_expected[hand] for seat in seats]
        total = sum(values)
        # 26 points a hand, or 78 where a playout shot the moon: the expectation lies between.
        assert 26 - 0.01 <= total <= 78 + 0.01, values  # (each rounded to 0.001)
        assert all(0 <= value <= 26 for value in values)
    for seat in seats:
        assert math.isclose(seat.expected, sum(seat.hand_expected), abs_tol=0.01)
    shown = APIClient().get(f"/api/matches/{match.pk}/").json()["seats"]
    assert [s["expected"] for s in shown] == [seat.expected for seat in seats]
    assert [s["hand_expected"] for s in shown] == [seat.hand_expected for seat in seats]
    page = APIClient().get(f"/matches/{match.pk}/").content.decode()
    assert "Cards worth" in page and f"{seats[0].expected:.1f}" in page


@pytest.mark.django_db
def test_a_runners_luck_of_another_shape_is_not_kept() -> None:
    match = services.match_create(kind=Match.Kind.CHALLENGE, seats=_builtins(*["low"] * 4), hands=1)
    claimed = services.match_claim(match_id=match.pk, claim="t")
    from bots_sdk.referee.runner import run_match

    game = run_match("standard", match.seed, ["low"] * 4, hands=1).games[0].to_dict()
    stored = services.match_finish(
        match_id=match.pk, attempt=claimed.attempts, result=game, claim="t", luck=[[1, 2]]
    )
    assert stored
    assert [s.expected for s in MatchSeat.objects.filter(match=match)] == [None] * 4


# --- on the runners, as an author asks from the terminal --------------------------------------


@pytest.fixture
def platform() -> Iterator[str]:
    purge_queues("celery", "runner")
    env = worker_env()
    with ExitStack() as stack:
        server = stack.enter_context(web_server(env))
        stack.enter_context(
            celery_worker(
                env=env,
                hostname=f"analyst-{uuid.uuid4().hex[:6]}@test",
                queues=["celery", "runner"],
            )
        )
        yield server.url


@pytest.mark.django_db(transaction=True)
def test_a_runner_analyses_a_seat_and_bidel_gives_the_same_numbers_here_and_there(
    platform: str, tmp_path: Path
) -> None:
    get_user_model().objects.create_user("ada", password=PASSWORD)
    login = ["login", "--username", "ada", "--password-stdin"]
    assert _bidel(tmp_path, platform, *login, stdin=PASSWORD).returncode == 0
    token = json.loads((tmp_path / "bidel" / "credentials.json").read_text())
    client = Platform(platform, token["platforms"][platform]["token"])
    match_id = client.post(
        "/api/matches/", {"seats": ["heuristic", "random", "low", "montecarlo"], "hands": 1}
    )["id"]
    finished = Match.objects.filter(pk=match_id, status="finished")
    wait_until(finished.exists, "the match", deadline=5 * DEADLINE)
    args = ["analyse", str(match_id), "--seat", "2", "--samples", "12", "--json"]
    there = _bidel(tmp_path, platform, *args, "--platform")  # asks, waits for the runner
    assert there.returncode == 0, there.stdout + there.stderr
    here = _bidel(tmp_path, platform, *args)  # computed in the author's own process
    assert here.returncode == 0, here.stderr
    assert json.loads(there.stdout) == json.loads(here.stdout)
    stored = Analysis.objects.get(match_id=match_id, seat=1, samples=12)
    assert stored.status == "done" and stored.requested_by.username == "ada"
    document = client.get(f"/api/matches/{match_id}/analysis/1/", samples=12)
    assert document["decisions"] == json.loads(here.stdout)["decisions"]
    # The match the runner played kept its luck too (the runner valued it).
    assert all(seat.expected is not None for seat in MatchSeat.objects.filter(match_id=match_id))
