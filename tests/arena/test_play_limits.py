"""People's games at ``/play/`` are bounded: one open game per visitor (address, browser, user),
``HUMAN_GAMES_MAX_OPEN`` in all, a person away or thinking too long is replaced by the fallback,
a game no people's runner begins ends saying so, and people's games have runners of their own,
so a bot match queued meanwhile is played at once. The seat's secret is a cookie, never an
address; the WebSocket handshake is checked by scheme, host and port."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from arena import services, tasks
from arena.models import Match, PlayHold
from arena.services import people
from bots_sdk.referee.participants import Participant
from bots_sdk.referee.players import PersonLimits
from bots_sdk.referee.runner import TimeControl, run_match
from engine.record import verify
from hearts_runner import live
from hearts_runner.config import PEOPLE_CONCURRENCY, PEOPLE_QUEUE, RUNNER_QUEUE
from tests.arena.live import sandbox_env, worker_env
from tests.support import DEADLINE, celery_worker, purge_queues, wait_until

TABLE = {"rules": "standard", "opponent1": "low", "opponent2": "low", "opponent3": "low"}


def _visitor(address: str) -> Client:
    """A browser with fresh cookies at ``address``."""
    return Client(REMOTE_ADDR=address)


def _sit(client: Client, **more: Any) -> Any:
    return client.post("/play/", {**TABLE, "hands": "1", **more})


def _made(response: Any) -> Match:
    assert response.status_code == 302, response.content.decode()[-1500:]
    return Match.objects.get(pk=int(response["Location"].strip("/").split("/")[-1]))


# --- one open game per visitor, a cap for everyone -----------------------------------------


@pytest.mark.django_db
def test_a_visitor_has_one_open_game_by_address_by_browser_and_by_user(
    django_user_model: Any,
) -> None:
    first = _visitor("203.0.113.1")
    game = _made(_sit(first))
    again = _sit(first)
    assert again.status_code == 409
    page = again.content.decode()
    assert f"you have a game open already (match {game.pk})" in page
    assert f'href="/play/{game.pk}/"' in page  # its own browser is shown the way back
    # Fresh cookies at the same address: no fresh visitor, and not shown another's game.
    neighbour = _sit(_visitor("203.0.113.1"))
    assert (
        neighbour.status_code == 409
        and f'href="/play/{game.pk}/"' not in neighbour.content.decode()
    )
    # The same browser (its seat cookie) from another address.
    moved = _visitor("198.51.100.7")
    moved.cookies[people.SEAT_COOKIE] = first.cookies[people.SEAT_COOKIE].value
    assert _sit(moved).status_code == 409
    # The same address over IPv6: one /64 is one visitor.
    _made(_sit(_visitor("2001:db8:5:6::1")))
    assert _sit(_visitor("2001:db8:5:6:ffff::2")).status_code == 409
    # A signed-in user, from two browsers and two addresses.
    user = django_user_model.objects.create_user(username="una", password="a long passphrase")
    mine, other = _visitor("192.0.2.10"), _visitor("192.0.2.11")
    mine.force_login(user)
    other.force_login(user)
    theirs = _made(_sit(mine))
    refused = _sit(other)
    assert refused.status_code == 409 and f'href="/play/{theirs.pk}/"' in refused.content.decode()
    assert Match.objects.filter(kind=Match.Kind.HUMAN).count() == 3  # nothing else queued
    # Leaving a game no runner began ends it, and the visitor may sit down again.
    left = first.post(f"/play/{game.pk}/leave/")
    assert left.status_code == 302 and left["Location"] == f"/matches/{game.pk}/"
    game.refresh_from_db()
    assert game.status == Match.Status.FAILED and "left" in game.error
    assert _made(_sit(first)).pk != game.pk
    # Only the seat's holder may leave it.
    assert _visitor("192.0.2.99").post(f"/play/{theirs.pk}/leave/").status_code == 404


@pytest.mark.django_db
def test_past_the_tables_for_people_a_visitor_is_told_and_nothing_is_queued(
    settings: Any,
) -> None:
    settings.HUMAN_GAMES_MAX_OPEN = 2
    for n in (1, 2):
        _made(_sit(_visitor(f"203.0.113.{n}")))
    full = _sit(_visitor("203.0.113.3"))
    assert full.status_code == 503
    assert "all 2 tables for people are taken" in full.content.decode()
    assert Match.objects.filter(kind=Match.Kind.HUMAN).count() == 2
    assert not PlayHold.objects.filter(key="address:203.0.113.3").exists()
    assert PlayHold.objects.filter(key__startswith="table:").count() == 2
    settings.HUMAN_GAMES_MAX_OPEN = 0
    closed = _sit(_visitor("203.0.113.4"))
    assert closed.status_code == 503 and "no tables for people" in closed.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_game_no_peoples_runner_begins_ends_saying_so(settings: Any) -> None:
    settings.HUMAN_START_SECONDS = 30
    visitor = people.Visitor(address="203.0.113.20")
    fresh, _ = people.human_game_open(
        visitor=people.Visitor(address="203.0.113.21"),
        opponents=[services.SeatSpec(builtin="low")] * 3,
    )
    match, token = people.human_game_open(
        visitor=visitor, opponents=[services.SeatSpec(builtin="low")] * 3
    )
    Match.objects.filter(pk=match.pk).update(created_at=timezone.now() - timedelta(seconds=31))
    tasks.matches_reap()  # the periodic reaper (beat)
    match.refresh_from_db()
    assert match.status == Match.Status.FAILED
    assert "no runner of people's games began it within 30 s" in match.error
    assert Match.objects.get(pk=fresh.pk).status == Match.Status.QUEUED  # not yet its time
    # Its runner, if one takes it late, is told the person has left; its holds are free.
    assert live.shared_mailbox().take(token, 5) == live.LEAVE_MESSAGE
    people.human_game_open(visitor=visitor, opponents=[services.SeatSpec(builtin="low")] * 3)


# --- the seat's secret: a cookie, not an address ---------------------------------------------


@pytest.mark.django_db
def test_the_old_address_with_the_secret_is_gone_and_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    visitor = _visitor("203.0.113.30")
    game = _made(_sit(visitor))
    token = visitor.cookies[people.SEAT_COOKIE].value
    with caplog.at_level(logging.WARNING, logger="django.request"):
        for client in (Client(), visitor):  # (the seat's own browser too)
            old = client.get(f"/play/{token}/", follow=True)
            assert old.redirect_chain == [("/play/", 302)]
            assert token not in old.content.decode() and "its match number" in old.content.decode()
        Client().get("/matches/99999999/")  # a plain 404 is logged (the check can fail)
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert token not in logged and "/matches/99999999/" in logged
    page = visitor.get(f"/play/{game.pk}/")
    assert page.status_code == 200 and token not in page.content.decode()


# --- the WebSocket handshake's origin ----------------------------------------------------------


def _handshake(path: str, *, origin: str | None, host: str, scheme: str = "ws") -> Any:
    from asgiref.testing import ApplicationCommunicator

    from hearts_platform.asgi import application

    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    scope = {
        "type": "websocket",
        "scheme": scheme,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": headers,
        "subprotocols": [],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }

    async def connect() -> str:
        socket = ApplicationCommunicator(application, scope)
        await socket.send_input({"type": "websocket.connect"})
        first = await socket.receive_output(10)
        if first["type"] == "websocket.accept":
            await socket.send_input({"type": "websocket.disconnect", "code": 1000})
            await socket.wait(10)
        return str(first["type"])

    return asyncio.run(connect())


@pytest.mark.django_db(transaction=True)
def test_the_socket_handshake_is_checked_by_scheme_host_and_port(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["localhost", "bidel.example"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://bidel.example"]
    match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(builtin="low")] * 4, hands=1
    )
    path = f"/ws/matches/{match.pk}/live/"
    accepted = "websocket.accept"
    assert _handshake(path, origin="http://localhost:8000", host="localhost:8000") == accepted
    for origin in (
        "http://localhost:8001",  # another port of the same host: another site
        "https://localhost:8000",  # another scheme
        "http://localhost",  # port 80, not 8000
        "http://evil.example:8000",
        "null",
        "",
        None,
    ):
        refused = _handshake(path, origin=origin, host="localhost:8000")
        assert refused == "websocket.close", origin
    # A Host that is not ours is refused whatever the origin says (a rebound name).
    assert _handshake(path, origin="http://evil.example", host="evil.example") == "websocket.close"
    # Behind a proxy that ends TLS: the trusted origin, by its scheme.
    assert _handshake(path, origin="https://bidel.example", host="bidel.example") == accepted
    assert _handshake(path, origin="http://bidel.example:443", host="bidel.example") == (
        "websocket.close"
    )
    assert (
        _handshake(path, origin="https://bidel.example", host="bidel.example", scheme="wss")
        == accepted
    )


@pytest.mark.django_db(transaction=True)
def test_an_open_seat_page_marks_its_seat_present_and_hears_when_its_game_ends() -> None:
    from asgiref.testing import ApplicationCommunicator

    from hearts_platform.asgi import application

    visitor = _visitor("203.0.113.40")
    game = _made(_sit(visitor))
    token = visitor.cookies[people.SEAT_COOKIE].value
    presence = live.shared_presence()
    path = f"/ws/play/{game.pk}/"
    scope = {
        "type": "websocket",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [
            (b"host", b"localhost"),
            (b"origin", b"http://localhost"),
            (b"cookie", f"{people.SEAT_COOKIE}={token}".encode()),
        ],
        "subprotocols": [],
        "client": ("203.0.113.40", 50000),
        "server": ("127.0.0.1", 8000),
    }

    async def scenario() -> list[dict[str, Any]]:
        page = ApplicationCommunicator(application, scope)
        await page.send_input({"type": "websocket.connect"})
        assert (await page.receive_output(DEADLINE))["type"] == "websocket.accept"
        hello = json.loads((await page.receive_output(DEADLINE))["text"])
        assert (hello["type"], hello["started"]) == ("hello", False)
        # (polling the store the runner reads, in a thread: the page's socket runs meanwhile)
        await asyncio.to_thread(
            wait_until,
            lambda: presence.present(token),
            "the open page to mark its seat present",
            interval=0.05,
        )
        # The person leaves in another tab: the page hears that its game is over.
        await asyncio.to_thread(lambda: visitor.post(f"/play/{game.pk}/leave/"))
        said = []
        while True:
            out = await page.receive_output(DEADLINE)
            if out["type"] == "websocket.close":
                break
            said.append(json.loads(out["text"]))
        await page.send_input({"type": "websocket.disconnect", "code": 1000})  # as a server does
        await page.wait(DEADLINE)
        return said

    said = asyncio.run(scenario())
    assert said[-1] == {"type": "finished", "status": "failed"}
    assert not presence.present(token)  # the closed page's mark is cleared


# --- the runner's side: away, the game's thinking time, the bank ------------------------------


def _persons_game(limits: PersonLimits, clock: TimeControl) -> tuple[Any, str]:
    """A one-hand game, seat 0 a person over the real feed, mailbox and presence store."""
    token = uuid.uuid4().hex
    claim = uuid.uuid4().hex
    seats = [Participant.of_person(token)] + [Participant.of_builtin("low")] * 3
    people_for = live.people_for(claim, limits)
    return (
        lambda: run_match("standard", 3, seats, hands=1, people=people_for, human_clock=clock),
        token,
    )


def test_a_person_with_no_page_open_is_replaced_after_the_away_limit() -> None:
    play, _ = _persons_game(PersonLimits(away=1, game=600), TimeControl(30, 120, True))
    result = play()
    seat = result.games[0].seats[0]
    assert seat.replaced
    assert [f["detail"] for f in seat.faults] == ["no page of this seat open for 1 s"]
    assert len(result.games[0].record["hands"][0]["plays"]) == 52  # the game went on
    assert verify(result.games[0].record)["valid"]


def test_a_persons_thinking_time_for_the_game_is_capped() -> None:
    play, token = _persons_game(PersonLimits(away=600, game=1), TimeControl(30, 120, True))
    live.shared_presence().touch(token)  # the page is open (one mark lasts PRESENT_SECONDS)
    try:
        result = play()
    finally:
        live.shared_presence().clear(token)
    seat = result.games[0].seats[0]
    assert seat.replaced
    assert [f["detail"] for f in seat.faults] == [
        "no answer in 1 s",
        "your thinking time for the game (1 s) is spent",
    ]


def test_a_person_who_times_out_spends_the_bank_once_not_at_every_timeout(
    tmp_path: Path,
) -> None:
    asked: list[float] = []

    class Page:  # an open page that never answers
        def send(self, message: dict[str, Any]) -> None:
            if message["type"] == "decide":
                asked.append(message["seconds"])

        def receive(self, timeout: float) -> Any:
            return None

        def present(self) -> bool:
            return True

    from bots_sdk.referee.players import PersonPlayer

    seats = [Participant.of_person("t")] + [Participant.of_builtin("low")] * 3
    result = run_match(
        "standard",
        3,
        seats,
        hands=1,
        people=lambda participant: PersonPlayer(Page(), PersonLimits(away=600, game=600)),
        human_clock=TimeControl(0.2, 0.5, timeout_spends_bank=True),
    )
    assert result.games[0].seats[0].replaced and len(asked) == 3
    assert asked[0] == pytest.approx(0.7) and asked[1:] == [pytest.approx(0.2)] * 2


# --- the crowd: idle people's games end at their limit, a bot match is played meanwhile -------


@pytest.fixture
def tiers(settings: Any) -> Iterator[Any]:
    """A platform worker, a bots' runner and a people's runner, on real processes; a person
    away this long (seconds) is replaced."""
    settings.BIDEL_UNSAFE_NO_SANDBOX = sandbox_env()["BIDEL_UNSAFE_NO_SANDBOX"] == "1"
    purge_queues("celery", RUNNER_QUEUE, PEOPLE_QUEUE)
    away = "20"
    with ExitStack() as stack:
        tag = uuid.uuid4().hex[:6]
        platform_env = worker_env(HUMAN_AWAY_SECONDS=away, HUMAN_GAMES_MAX_OPEN="4")
        stack.enter_context(
            celery_worker(env=platform_env, hostname=f"platform-{tag}@test", queues=["celery"])
        )
        runner_env = worker_env()
        for name in ("DATABASE_URL", "SECRET_KEY"):
            runner_env.pop(name, None)
        stack.enter_context(
            celery_worker(
                env=runner_env,
                hostname=f"bots-{tag}@test",
                queues=[RUNNER_QUEUE],
                app="hearts_runner",
            )
        )
        stack.enter_context(
            celery_worker(
                env=runner_env,
                hostname=f"people-{tag}@test",
                queues=[PEOPLE_QUEUE],
                concurrency=PEOPLE_CONCURRENCY,
                app="hearts_runner",
            )
        )
        yield int(away)


@pytest.mark.django_db(transaction=True)
def test_a_crowd_of_idle_games_ends_at_its_limit_while_a_bot_match_is_played(
    tiers: int, settings: Any
) -> None:
    settings.HUMAN_GAMES_MAX_OPEN = 4
    visitors = [_visitor(f"203.0.113.{50 + n}") for n in range(4)]
    crowd = [_made(_sit(v)) for v in visitors]
    assert _sit(_visitor("203.0.113.60")).status_code == 503  # every table taken
    # The first visitor keeps the page open (what its socket does) until it leaves the table.
    leaver = visitors[0].cookies[people.SEAT_COOKIE].value
    presence = live.shared_presence()

    def all_begun() -> bool:
        presence.touch(leaver)
        began = Match.objects.filter(pk__in=[m.pk for m in crowd], playing_since__isnull=False)
        return began.count() == 4

    wait_until(all_begun, "the people's runner to begin all four games", deadline=2 * DEADLINE)
    assert visitors[0].post(f"/play/{crowd[0].pk}/leave/").status_code == 302
    # Every people's slot is held by an idle person: a challenge queued now is played at once.
    challenge = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(builtin="low")] * 4, hands=1
    )
    wait_until(  # (within the suite's one deadline: not after the idle games' limit)
        lambda: Match.objects.filter(pk=challenge.pk, status=Match.Status.FINISHED).exists(),
        "the challenge to finish while the idle games hold every people's slot",
    )
    ended_by = ["you left the table"] + [f"no page of this seat open for {tiers} s"] * 3
    for game, why in zip(crowd, ended_by, strict=True):
        finished = wait_until(
            lambda pk=game.pk: Match.objects.filter(pk=pk, status=Match.Status.FINISHED).first(),
            f"the idle game {game.pk} to end",
            deadline=2 * DEADLINE + tiers,
        )
        person = finished.seats.get(seat=0)
        details = [f["detail"] for f in person.faults]
        assert details == [why], details
        assert person.rank is not None and person.score is not None  # a defined result
        assert verify(finished.record)["valid"]
    # The holds went with the games: the first visitor may sit down again.
    _made(_sit(_visitor("203.0.113.50")))
