"""Jobs: what a runner receives and sends back. A job carries everything a game needs and a
result says, for every way a job can go wrong, why there is no game."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots_sdk.referee.jobs import Job, JobError, run_job
from bots_sdk.referee.participants import Participant
from engine.record import verify
from tests.sandboxes import sandbox_problem

HOSTILE = Path(__file__).parent / "hostile"
LOW_BOT = (
    b"from bots_sdk import Bot, lowest\n\n\nclass Low(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[:3]\n\n"
    b"    def play(self, view):\n        return lowest(view.legal)\n"
)


def _job(*seats: Participant, **overrides: object) -> Job:
    fields: dict = {
        "kind": "match",
        "ref": 7,
        "claim": "claim-7",
        "rules": "standard",
        "seed": 11,
        "hands": 1,
        "seats": seats,
    }
    fields.update(overrides)
    return Job(**fields)


def test_a_job_round_trips_through_json_with_its_code() -> None:
    job = _job(Participant.from_code("mine.py", LOW_BOT), *[Participant.of_builtin("low")] * 3)
    again = Job.from_dict(job.to_dict())
    assert again == job and again.seats[0].code == LOW_BOT


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"version": 99}, "not a version 1 job"),
        ("a string", "not a version 1 job"),
        ({"version": 1, "kind": "match"}, "malformed job"),
        (
            {**_job(Participant.of_builtin("low")).to_dict(), "seats": [{"builtin": "godlike"}]},
            "no built-in bot 'godlike'",
        ),
        (
            {
                **_job(Participant.of_builtin("low")).to_dict(),
                "seats": [{"filename": "a.py", "code": "!!!", "sha256": "0"}],
            },
            "code is malformed",
        ),
        ({**_job(Participant.of_builtin("low")).to_dict(), "seed": "lots"}, "malformed job"),
    ],
)
def test_a_malformed_job_is_refused_with_a_reason(data: object, message: str) -> None:
    with pytest.raises(JobError, match=message):
        Job.from_dict(data)


def test_code_that_does_not_match_its_sha256_is_not_run() -> None:
    seat = Participant(filename="mine.py", code=LOW_BOT, sha256="0" * 64)
    result = run_job(_job(seat, *[Participant.of_builtin("low")] * 3), unsafe=True)
    assert not result.ok and result.cause == "code" and result.game is None
    assert "does not match its sha256" in result.error and result.claim == "claim-7"


def test_rules_that_do_not_seat_the_job_fail_as_a_bad_job() -> None:
    result = run_job(_job(*[Participant.of_builtin("low")] * 3), unsafe=True)
    assert not result.ok and result.cause == "job" and "4 seats need 4 bots" in result.error


def test_a_runner_without_a_sandbox_says_so_instead_of_playing() -> None:
    mine = Participant.from_code("mine.py", LOW_BOT)
    result = run_job(_job(mine, *[Participant.of_builtin("low")] * 3), sandbox="jail")
    assert not result.ok and result.cause == "sandbox"
    assert "cannot sandbox bots on this runner" in result.error


def test_a_sandboxed_job_plays_and_returns_the_record_with_its_claim() -> None:
    problem = sandbox_problem("bubblewrap")
    if problem:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")
    crash = (HOSTILE / "crash.py").read_bytes()
    job = _job(
        Participant.from_code("mine.py", LOW_BOT),
        Participant.from_code("crash.py", crash),
        Participant.of_builtin("random"),
        Participant.of_builtin("heuristic"),
    )
    result = run_job(Job.from_dict(job.to_dict()), runner="r1")
    assert result.ok, result.error
    assert result.claim == "claim-7" and result.runner == "r1"
    assert verify(result.game)["valid"]
    assert not result.game["seats"][0]["faults"]
    assert result.game["seats"][1]["faults"][0]["class"] == "crash"  # the bot's fault, not ours
