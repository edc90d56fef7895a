"""Work without a bound, tried as a hostile author would: a game to a target no hand can reach,
and the live feed such a game writes, each ending at its documented limit (docs/operations.md,
"Limits on work"). On the platform, with real workers: tests/arena/test_bounded_work.py."""

from __future__ import annotations

import json
from pathlib import Path

from bots_sdk.referee.jobs import Job, run_job
from bots_sdk.referee.participants import Participant
from bots_sdk.referee.runner import TimeControl, run_match
from engine.record import verify
from engine.rules import RuleSet
from engine.state import MAX_HANDS
from hearts_runner.live import FileFeed, Publisher

ZERO = {"preset": "standard", "heart_points": [0] * 13, "queen_points": 0}
SEATS = ["random", "low", "random", "low"]


def test_a_game_no_hand_can_score_ends_at_the_hand_cap_with_a_defined_result() -> None:
    job = Job(
        kind="match",
        ref=1,
        claim="c",
        rules=RuleSet.from_spec(ZERO).to_spec(),
        seed=7,
        hands=None,
        seats=tuple(Participant.of_builtin(b) for b in SEATS),
    )
    result = run_job(job)
    assert result.ok, result.error
    game = result.game or {}
    assert len(game["hands"]) == MAX_HANDS
    checked = verify(game)
    assert checked["valid"] and checked["game_over"] and checked["ended_at_hand_cap"]
    assert checked["winners"] == [0, 1, 2, 3]  # every total 0: a shared win


def test_a_live_feed_past_its_cap_is_cut_and_the_match_plays_on(tmp_path: Path) -> None:
    feed = FileFeed(tmp_path)
    cap = 200_000
    publisher = Publisher(feed, "match-9", "run", background=True, max_bytes=cap)
    job = Job(
        kind="match",
        ref=9,
        claim="c",
        rules=RuleSet.from_spec(ZERO).to_spec(),
        seed=3,
        hands=None,
        seats=tuple(Participant.of_builtin(b) for b in SEATS),
        live="all",
    )
    result = run_job(job, publish=publisher)
    assert result.ok, result.error
    assert len((result.game or {})["hands"]) == MAX_HANDS
    written = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert written < cap + 10_000, written  # the cap, and the two events past it
    events = [json.loads(line) for line in feed.history("match-9")]
    assert [e["type"] for e in events[-2:]] == ["cut", "end"]
    assert events[-2]["limit"] == cap
    assert [e["seq"] for e in events] == list(range(len(events)))


def test_a_match_of_slow_bots_ends_when_its_budget_is_spent_ranked_on_its_totals() -> None:
    slow = str(Path(__file__).parent / "bots" / "slowpoke.py")
    # 13 plays and a pass of 0.1 s each: a hand takes 1.4 s at least, so a budget of 2 s ends
    # the game after its first or second hand, however fast the machine
    result = run_match(
        RuleSet.from_spec(ZERO),
        5,
        [slow, "low", "random", "low"],
        time_control=TimeControl(move=5, bank=10),
        budget=2.0,
    )
    game = result.games[0]
    assert game.over_budget and game.to_dict()["stopped"] == "budget"
    assert game.seats[0].faults == [], game.seats[0].stderr[-2000:]
    assert 1 <= len(game.state.history) <= 2
    checked = verify(game.record)
    assert checked["valid"] and not checked["game_over"]
