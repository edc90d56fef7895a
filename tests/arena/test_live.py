"""Live feeds: what a runner publishes while it plays (the real engine and runner), the feeds
themselves (files, and real Redis), and the web tier's follower and cursor."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings

from arena import spectators
from bots_sdk.referee.frames import LiveFrames, hand_frame, point_values, replay_frames
from bots_sdk.referee.jobs import Job, run_job
from bots_sdk.referee.participants import Participant
from bots_sdk.referee.runner import run_match
from engine.rules import PRESETS, RuleSet
from engine.state import GameState, Phase
from hearts_runner import live
from hearts_runner.live import FileFeed, Publisher, RedisFeed
from tests.support import DEADLINE, requires_redis

CARD = re.compile(r'"([2-9TJQKA][CDHS])"')


def _job(rules: str, live_for: str, seats: tuple[str, ...] = ("heuristic", "low") * 2) -> Job:
    return Job(
        kind="match",
        ref=1,
        claim="c",
        rules=rules,
        seed=11,
        hands=2,
        seats=tuple(Participant.of_builtin(b) for b in seats),
        live=live_for,
    )


def _published(job: Job) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    events: list[dict[str, Any]] = []
    publisher = Publisher(_ListFeed(events), "match-1", "run")
    result = run_job(job, publish=publisher)
    assert result.ok, result.error
    return events, result.game or {}


class _ListFeed:
    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events

    def reset(self, key: str) -> None:
        self.events.clear()

    def publish(self, key: str, event: dict[str, Any]) -> None:
        self.events.append(json.loads(json.dumps(event)))  # as it travels: JSON


@pytest.mark.parametrize("rules", ["standard", "hokm_40", "moon_choice"])
def test_the_live_feed_of_a_match_ends_as_its_replay(rules: str) -> None:
    events, game = _published(_job(rules, "all"))
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "table" and events[-1]["type"] == "end"
    frames = [e for e in events if e["type"] == "frame"]
    assert len(frames) > 2 * 52 // 4 * 4 - 10  # a frame for every decision
    last_of_hand = {e["hand"]: e["frame"] for e in frames}
    stored = replay_frames(game)["hands"]
    assert len(last_of_hand) == len(stored)
    for hand, frame in last_of_hand.items():
        for field in ("dealt", "hands", "passes", "tricks", "points", "scores", "totals"):
            assert frame[field] == stored[hand][field], (hand, field)


@pytest.mark.parametrize("rules", ["standard", "hokm_40", "persian"])
def test_a_bystanders_feed_never_carries_a_card_before_it_is_played(rules: str) -> None:
    events, game = _published(_job(rules, "bystander"))
    plays = [hand["plays"] for hand in game["hands"]]
    frames = [e for e in events if e["type"] == "frame"]
    assert frames
    for event in frames:
        shown = [c for trick in event["frame"]["tricks"] for _, c in trick["plays"]]
        assert shown == plays[event["hand"]][: len(shown)]  # what was played, in order
        mentioned = set(CARD.findall(json.dumps(event)))
        assert mentioned <= set(shown), (event["seq"], mentioned - set(shown))
    # Each seat's card count goes down by one per card it plays.
    first = frames[0]["frame"]
    assert sum(first["held"]) == sum(len(d) for d in game["hands"][0]["deal"])


def _frame_from_scratch(state: GameState) -> tuple[int, dict[str, Any]]:
    """A frame of the hand in progress as a bot's observation shows it, nothing remembered."""
    if state.phase in (Phase.HAND_OVER, Phase.GAME_OVER):
        return LiveFrames()(state)
    seen = state.observation(state.current)
    entry = state.current_hand_json()
    assert entry is not None
    leader = seen.leader if seen.leader is not None else state.current
    frame = hand_frame(
        state.rules,
        state.hand_number,
        entry,
        seen.tricks,
        point_values(state.rules),
        None,
        current=(leader, seen.trick),
    )
    frame["totals_before"] = list(state.totals)
    return len(state.history), frame


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_games_live_frames_are_the_frames_built_from_scratch(preset: str) -> None:
    """The feed's frames are built from what the hand's earlier frames worked out; each one
    is the frame of its state alone, in every preset, across hands (passes, trumps, redeals)."""
    import random

    state, rng = GameState(RuleSet.from_preset(preset), seed=29), random.Random(3)
    frames, seen = LiveFrames(), 0
    while not state.is_game_over and seen < 4 * 60:
        expected = json.loads(json.dumps(_frame_from_scratch(state)))
        assert json.loads(json.dumps(frames(state))) == expected, (preset, seen)
        if state.phase is Phase.HAND_OVER:
            state.next_hand()
        else:
            state.apply(rng.choice(state.legal_actions()))
        seen += 1
    assert seen > 52


def test_an_observer_that_fails_never_touches_the_match() -> None:
    calls = []

    def broken(game: int, state: Any) -> None:
        calls.append(game)
        raise RuntimeError("the feed is down")

    watched = run_match("standard", 3, ["low"] * 4, hands=1, observer=broken)
    unwatched = run_match("standard", 3, ["low"] * 4, hands=1)
    assert calls == [0]  # it failed once and was not called again
    assert watched.games[0].record == unwatched.games[0].record


def test_a_publisher_whose_feed_fails_goes_quiet() -> None:
    class Down:
        def reset(self, key: str) -> None:
            raise ConnectionError("no server")

        def publish(self, key: str, event: dict[str, Any]) -> None:
            raise AssertionError("never called once the feed failed")

    publisher = Publisher(Down(), "match-1", "run")  # type: ignore[arg-type]
    publisher({"type": "table"})
    assert publisher.failed


class _SlowFeed:
    """A feed whose sends wait for the test's go-ahead: what the referee hands a background
    publisher meanwhile piles up and leaves in order, in fewer sends than events."""

    def __init__(self) -> None:
        import threading

        self.batches: list[list[str]] = []
        self.go = threading.Event()

    def reset(self, key: str) -> None:
        pass

    def publish(self, key: str, event: dict[str, Any]) -> None:
        raise AssertionError("a background publisher sends its events together")

    def publish_lines(self, key: str, lines: list[str]) -> None:
        self.go.wait(30)
        self.batches.append(lines)


def test_a_background_publisher_never_keeps_the_referee_waiting_and_loses_nothing() -> None:
    feed = _SlowFeed()
    publisher = Publisher(feed, "match-1", "run", background=True)  # type: ignore[arg-type]
    for n in range(200):
        publisher({"type": "frame", "n": n})  # returns at once: the feed is stuck
    assert sum(len(b) for b in feed.batches) == 0
    feed.go.set()
    publisher.close()
    sent = [json.loads(line) for batch in feed.batches for line in batch]
    assert [e["seq"] for e in sent] == [e["n"] for e in sent] == list(range(200))
    assert len(feed.batches) < 200  # what piled up went out together
    publisher({"type": "late"})  # after close: dropped, never raised
    assert sum(len(b) for b in feed.batches) == 200


def test_a_background_publisher_gives_up_a_feed_that_falls_too_far_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live, "BACKLOG_LIMIT", 50)
    feed = _SlowFeed()
    publisher = Publisher(feed, "match-1", "run", background=True)  # type: ignore[arg-type]
    for n in range(120):
        publisher({"type": "frame", "n": n})
    assert publisher.failed  # the match goes on unwatched; the runner's memory stays bounded
    feed.go.set()
    publisher.close()
    assert sum(len(b) for b in feed.batches) <= 50


def test_run_job_hands_over_a_background_feed_complete() -> None:
    events: list[dict[str, Any]] = []
    publisher = Publisher(_ListFeed(events), "match-1", "run", background=True)
    result = run_job(_job("standard", "all"), publish=publisher)
    assert result.ok
    assert events[-1]["type"] == "end"  # sent before run_job returned
    assert [e["seq"] for e in events] == list(range(len(events)))


def _follow_and_publish(feed: Any, key: str) -> tuple[list[str], list[str]]:
    """Follow ``key`` while a publisher writes to it; what the follower got, and the history."""

    async def scenario() -> list[str]:
        ready = asyncio.Event()
        got: list[str] = []

        async def follow() -> None:
            async for line in feed.follow(key, ready):
                got.append(line)
                if json.loads(line)["type"] == "end":
                    return

        task = asyncio.create_task(follow())
        await ready.wait()
        publisher = Publisher(feed, key, "r1")
        for n in range(50):
            await asyncio.to_thread(publisher, {"type": "frame", "n": n})
        await asyncio.to_thread(publisher, {"type": "end"})
        await asyncio.wait_for(task, DEADLINE)
        return got

    got = asyncio.run(scenario())
    return got, feed.history(key)


def test_a_file_feed_is_followed_and_kept(tmp_path: Path) -> None:
    feed = FileFeed(tmp_path / "live")
    got, history = _follow_and_publish(feed, "match-5")
    assert got == history
    assert [json.loads(line)["seq"] for line in got] == list(range(51))
    Publisher(feed, "match-5", "r2")  # a new run starts from nothing
    assert feed.history("match-5") == []


def test_a_file_feeds_folder_sheds_the_feeds_nothing_wrote_to_for_hours(tmp_path: Path) -> None:
    feed = FileFeed(tmp_path / "live")
    for key in ("match-1", "match-2"):
        Publisher(feed, key, "r")({"type": "table"})
    hours_ago = time.time() - live.TTL_SECONDS - 60
    os.utime(feed.path("match-1"), (hours_ago, hours_ago))
    Publisher(feed, "match-3", "r")  # a runner starting a match sweeps the folder
    assert not feed.path("match-1").exists()
    assert feed.history("match-2") and feed.path("match-3").exists()


def _feed_of(feed: FileFeed, key: str, size: int, *, written: float | None = None) -> None:
    """A feed of about ``size`` bytes, as a runner writes it (last written at ``written``)."""
    publisher = Publisher(feed, key, "r")
    while not feed.path(key).exists() or feed.path(key).stat().st_size < size:
        publisher({"type": "frame", "pad": "x" * 200})
    if written is not None:
        os.utime(feed.path(key), (written, written))


def _over(feed: FileFeed, key: str, at: float) -> None:
    """The platform's word that ``key``'s match is over for good, as said at ``at``."""
    feed.retire(key, live.RETIRED_TTL_SECONDS)
    os.utime(feed.mark(key), (at, at))


def test_finished_feeds_go_after_their_grace_and_a_live_one_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena import tasks

    monkeypatch.setenv("BIDEL_VAR_DIR", str(tmp_path))
    monkeypatch.delenv("REDIS_URL", raising=False)
    live.shared_feed.cache_clear()  # the feed of this environment: tmp_path/live
    try:
        feed = live.shared_feed()
        assert isinstance(feed, FileFeed) and feed.folder == tmp_path / "live"
        for key in ("match-1", "match-2", "match-3"):
            Publisher(feed, key, "r")({"type": "table"})
        live.announce("match-1", {"type": "stored", "status": "finished"}, final=True)
        live.announce("match-2", {"type": "stored", "status": "queued"})  # to be played again
        feed.retire("match-3", 0)  # over, its grace already spent
        assert tasks.live_feeds_sweep() == 1  # the platform's periodic sweep
        assert not feed.path("match-3").exists() and not feed.mark("match-3").exists()
        assert json.loads(feed.history("match-1")[-1])["status"] == "finished"  # its grace
        assert feed.history("match-2")
        later = time.time() + live.RETIRED_TTL_SECONDS + 1
        assert feed.sweep(now=later) == 1
        assert not feed.path("match-1").exists() and not feed.mark("match-1").exists()
        assert feed.history("match-2")  # live: never swept until quiet for TTL_SECONDS
        assert feed.sweep(now=time.time() + live.TTL_SECONDS + 1) == 1
        assert os.listdir(feed.folder) == []
    finally:
        live.shared_feed.cache_clear()


def test_a_runner_opening_a_feed_sweeps_the_finished_and_a_replayed_key_is_live_again(
    tmp_path: Path,
) -> None:
    feed = FileFeed(tmp_path / "live")
    for key in ("match-1", "match-2"):
        Publisher(feed, key, "r")({"type": "table"})
        feed.retire(key, 0)
    Publisher(feed, "match-2", "r2")({"type": "table"})  # a new run: its mark goes
    assert not feed.path("match-1").exists()
    assert feed.history("match-2") and not feed.mark("match-2").exists()
    # an event after the mark (a late runner's) makes a feed live again, as in Redis
    _feed_of(feed, "match-3", 100, written=time.time())
    _over(feed, "match-3", at=time.time() - 10)
    assert feed.sweep(now=time.time() + live.RETIRED_TTL_SECONDS + 1) == 0
    assert feed.history("match-3") and not feed.mark("match-3").exists()


def test_a_file_feeds_folder_is_held_to_its_size_oldest_finished_first(tmp_path: Path) -> None:
    feed = FileFeed(tmp_path / "live")  # (its own size: far off)
    now = time.time()
    _feed_of(feed, "match-9", 3_000)  # being played
    for n, key in enumerate(("match-1", "match-2", "match-3")):  # finished, 1 first
        _feed_of(feed, key, 2_000, written=now - 60 + n)
        _over(feed, key, at=now - 60 + n + 0.5)
    sizes = {p.stem: p.stat().st_size for p in feed.folder.glob("*.jsonl")}
    assert sum(sizes.values()) > 6_000 + sizes["match-1"]  # two must go
    assert FileFeed(feed.folder, max_bytes=6_000).sweep() == 2
    kept = {p.stem: p.stat().st_size for p in feed.folder.glob("*.jsonl")}
    assert sorted(kept) == ["match-3", "match-9"] and sum(kept.values()) <= 6_000
    assert sorted(p.stem for p in feed.folder.glob("*.over")) == ["match-3"]
    # past the size with live feeds alone: the finished go, never a live one
    assert FileFeed(feed.folder, max_bytes=1_000).sweep() == 1
    assert [p.stem for p in feed.folder.glob("*.jsonl")] == ["match-9"]
    assert feed.history("match-9")


def test_the_file_feeds_size_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIDEL_LIVE_FILES_MAX_BYTES", "1000")
    assert live.live_files_max_bytes() == 1000
    monkeypatch.setenv("BIDEL_LIVE_FILES_MAX_BYTES", "0")
    with pytest.raises(ValueError, match="BIDEL_LIVE_FILES_MAX_BYTES must be a positive"):
        live.live_files_max_bytes()


@requires_redis
def test_a_feed_whose_match_is_over_for_good_is_dropped_soon(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every frame of a match stays in Redis while it runs (a late spectator's catching up);
    once it is stored the page shows the replay, and the feed (about a MiB a match) goes."""
    feed = RedisFeed(settings.REDIS_URL)
    monkeypatch.setattr(live, "shared_feed", lambda: feed)
    key = f"test-{uuid.uuid4().hex}"
    try:
        publisher = Publisher(feed, key, "r1", background=True)
        for n in range(5):
            publisher({"type": "frame", "n": n})
        publisher.close()
        live.announce(key, {"type": "stored", "status": "queued"})  # to be played again
        assert feed.client.ttl(feed.name(key)) > live.RETIRED_TTL_SECONDS
        live.announce(key, {"type": "stored", "status": "finished"}, final=True)
        events = [json.loads(line) for line in feed.history(key)]
        assert [e["seq"] for e in events] == list(range(7)) and events[-1]["status"] == "finished"
        assert 0 < feed.client.ttl(feed.name(key)) <= live.RETIRED_TTL_SECONDS
        assert feed.sweep() == 0  # Redis expires its keys itself
    finally:
        feed.client.delete(feed.name(key))


@requires_redis
def test_a_redis_feed_is_followed_and_kept() -> None:
    feed = RedisFeed(settings.REDIS_URL)
    key = f"test-{uuid.uuid4().hex}"
    try:
        got, history = _follow_and_publish(feed, key)
        assert got == history
        assert [json.loads(line)["seq"] for line in got] == list(range(51))
        assert 0 < feed.client.ttl(feed.name(key)) <= 6 * 3600
    finally:
        feed.reset(key)


@requires_redis
def test_a_redis_feed_is_heard_in_its_own_database_only() -> None:
    """Two installations on one Redis server, each in its database, each with its match 1: a
    spectator of one never sees the other's events (a channel is the whole server's)."""
    ours = RedisFeed(settings.REDIS_URL)
    url = urlsplit(settings.REDIS_URL)
    theirs = RedisFeed(urlunsplit(url._replace(path=f"/{(ours.database + 8) % 16}")))
    assert theirs.database != ours.database
    key = f"test-{uuid.uuid4().hex}"

    async def scenario() -> list[str]:
        ready = asyncio.Event()
        got: list[str] = []

        async def follow() -> None:
            async for line in ours.follow(key, ready):
                got.append(line)
                if json.loads(line)["type"] == "end":
                    return

        task = asyncio.create_task(follow())
        await ready.wait()
        # theirs first, on the same connection's server: had it reached us, it would be first
        await asyncio.to_thread(theirs.publish, key, {"type": "frame", "from": "theirs"})
        await asyncio.to_thread(ours.publish, key, {"type": "end", "from": "ours"})
        await asyncio.wait_for(task, DEADLINE)
        return got

    try:
        got = asyncio.run(scenario())
        assert [json.loads(line)["from"] for line in got] == ["ours"]
    finally:
        ours.reset(key)
        theirs.reset(key)


def test_the_cursor_drops_repeats_and_starts_over_on_a_new_run() -> None:
    def event(run: str, seq: int) -> spectators.Event:
        return spectators.Event(run, seq, "frame", "{}")

    cursor = spectators.Cursor()
    assert not cursor.admit(event("a", 3))  # a run is joined at its start
    assert [cursor.admit(event("a", s)) for s in (0, 1, 1, 0, 2)] == [
        True,
        True,
        False,
        False,
        True,
    ]
    assert cursor.admit(event("b", 0)) and cursor.admit(event("b", 1))
    assert not cursor.admit(event("a", 3))  # the lost runner's run is over


def _person_seat(tmp_path: Path, answer: Any) -> tuple[Any, list[dict[str, Any]]]:
    """A person's seat over the real file mailbox and feed; ``answer(question)`` is what the
    person's page sends back (None: nothing, the person left)."""
    from bots_sdk.referee.players import PersonPlayer
    from hearts_runner.live import FileMailbox

    feed, mailbox = FileFeed(tmp_path / "live"), FileMailbox(tmp_path / "answers")
    sent: list[dict[str, Any]] = []

    class Page:
        question: dict[str, Any] = {}

        def send(self, message: dict[str, Any]) -> None:
            feed.publish("seat-t", message)
            sent.append(message)
            if message["type"] == "decide":
                self.question = message
            if message["type"] in ("decide", "refused"):  # (asked again after a refusal)
                reply = answer(self.question)
                if reply is not None:
                    mailbox.put("t", json.dumps(reply))

        def receive(self, timeout: float) -> Any:
            text = mailbox.take("t", timeout)
            return None if text is None else json.loads(text)

        def present(self) -> bool:
            return True  # the page stays open (the away limit is tests/arena/test_play_limits)

    return (lambda participant: PersonPlayer(Page())), sent


def test_a_person_who_leaves_is_replaced_by_the_fallback_when_the_clock_runs_out(
    tmp_path: Path,
) -> None:
    from bots_sdk.referee.runner import TimeControl

    people, sent = _person_seat(tmp_path, lambda question: None)
    seats = [Participant.of_person("t")] + [Participant.of_builtin("low")] * 3
    result = run_match(
        "standard", 4, seats, hands=1, people=people, human_clock=TimeControl(0.2, 0.1)
    )
    seat = result.games[0].seats[0]
    assert [f["class"] for f in seat.faults] == ["timeout"] * 3
    assert seat.replaced  # the fallback played the rest
    assert sum(m["type"] == "decide" for m in sent) == 3
    assert len(result.games[0].record["hands"][0]["plays"]) == 52  # the game went on


def test_a_persons_illegal_answer_is_refused_and_asked_again(tmp_path: Path) -> None:
    def answer(question: dict[str, Any]) -> dict[str, Any]:
        view = question["view"]
        if question["decision"] == "play":
            illegal = [c for c in view["hand"] if c not in view["legal"]]
            if illegal and not question.get("tried"):
                question["tried"] = True
                return {"id": question["id"], "action": illegal[0]}
            return {"id": question["id"], "action": view["legal"][0]}
        if question["decision"] == "pass":
            return {"id": question["id"], "action": view["hand"][: question["count"]]}
        return {"id": question["id"], "action": view["legal"][0]}

    people, sent = _person_seat(tmp_path, answer)
    seats = [Participant.of_person("t")] + [Participant.of_builtin("low")] * 3
    result = run_match("standard", 6, seats, hands=1, people=people)
    assert result.games[0].seats[0].faults == []  # refused, asked again: never a fault
    assert any(m["type"] == "refused" for m in sent)
    assert sum(m["type"] == "accepted" for m in sent) == 14  # the pass and 13 cards


@pytest.mark.django_db(transaction=True)
def test_the_sockets_refuse_unknown_games_and_pass_only_well_formed_answers() -> None:
    from asgiref.testing import ApplicationCommunicator

    from arena import services
    from hearts_platform.asgi import application
    from hearts_runner.live import shared_mailbox

    match, token = services.human_game_create(
        user=None, opponents=[services.SeatSpec(builtin="low")] * 3
    )

    def socket(path: str, cookie: str = "") -> ApplicationCommunicator:  # a browser's, over ASGI
        headers = [(b"host", b"localhost"), (b"origin", b"http://localhost")]
        if cookie:
            headers.append((b"cookie", f"bidel_seat={cookie}".encode()))
        scope = {
            "type": "websocket",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "headers": headers,
            "subprotocols": [],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        return ApplicationCommunicator(application, scope)

    async def refused(number: int, cookie: str = "") -> None:
        """Not this visitor's seat: told so after the handshake, then closed (4403)."""
        other = socket(f"/ws/play/{number}/", cookie)
        await other.send_input({"type": "websocket.connect"})
        assert (await other.receive_output(DEADLINE))["type"] == "websocket.accept"
        said = json.loads((await other.receive_output(DEADLINE))["text"])
        assert said == {"type": "refused", "match": number}
        closed = await other.receive_output(DEADLINE)
        assert (closed["type"], closed.get("code")) == ("websocket.close", 4403)

    async def scenario() -> None:
        # The old address with the secret in it is no socket at all, as unknown games are.
        for path in (f"/ws/play/{token}/", "/ws/play/no-such/", "/ws/matches/999999/live/"):
            unknown = socket(path, token)
            await unknown.send_input({"type": "websocket.connect"})
            closed = await unknown.receive_output(DEADLINE)
            assert (closed["type"], closed.get("code")) == ("websocket.close", 4404), path
        await refused(match.pk)  # no seat cookie
        await refused(match.pk, "not-the-secret")
        await refused(match.pk + 1000, token)  # the secret of another game
        seat = socket(f"/ws/play/{match.pk}/", token)
        await seat.send_input({"type": "websocket.connect"})
        assert (await seat.receive_output(DEADLINE))["type"] == "websocket.accept"
        hello = json.loads((await seat.receive_output(DEADLINE))["text"])
        assert (hello["type"], hello["seat"], hello["status"]) == ("hello", 0, "queued")
        assert hello["match"] == match.pk and token not in json.dumps(hello)
        for junk in (
            "not JSON",
            "[1, 2]",
            json.dumps({"action": "2C"}),  # no question number
            json.dumps({"id": "1", "action": "2C"}),  # not an integer
            json.dumps({"id": 1, "action": "x" * 5000}),  # longer than any answer
            "[" * 999 + "]" * 999,  # nested past any parser's recursion, within the length
            json.dumps({"id": 1, "action": [[[[[[[[[[[[[[[[[["2C"]]]]]]]]]]]]]]]]]]}),
        ):
            await seat.send_input({"type": "websocket.receive", "text": junk})
        answer = json.dumps({"id": 1, "action": "2C", "more": "dropped"})
        await seat.send_input({"type": "websocket.receive", "text": answer})
        await seat.send_input({"type": "websocket.disconnect", "code": 1000})
        await seat.wait(DEADLINE)

    asyncio.run(scenario())
    mailbox = shared_mailbox()
    taken = mailbox.take(token, 5)
    assert taken is not None and json.loads(taken) == {"id": 1, "action": "2C"}
    assert mailbox.take(token, 0.05) is None  # the junk never reached the runner
