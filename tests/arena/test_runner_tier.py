"""The runner tier on real processes: a platform worker that holds the database and plays
nothing, runners that play and hold no secrets. A result is stored once and only under its
claim; a runner killed mid-match loses nothing; a runner that cannot sandbox turns uploads
into rejections with the reason and health red — nothing waits silently."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from rest_framework.test import APIClient

from arena import services
from arena.models import BotVersion, Ladder, LadderEntry, Match
from arena.services import dispatch as jobs
from bots_sdk.referee.jobs import run_job
from engine.record import verify
from tests.arena.live import health_listing, sandbox_env, slow_ladder_match, worker_env
from tests.support import DEADLINE, PROJECT_DIR, celery_worker, purge_queues, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

# A bot that looks for the platform's secrets wherever a bot could: its environment, its
# init's, the files a runner host might hold, a database socket, the database port.
LOOKER = b"""import os, socket, sys
from bots_sdk import Bot, lowest


def look():
    found = [k for k in os.environ if k in ("DATABASE_URL", "SECRET_KEY")]
    for path in ("/proc/1/environ", "/app/.env", "/var/run/postgresql/.s.PGSQL.5432",
                 "/run/postgresql/.s.PGSQL.5432", "/etc/bidel.env"):
        try:
            data = open(path, "rb").read()
            found.append(path if b"DATABASE_URL" in data or b"SECRET_KEY" in data or
                         path.endswith("5432") else "")
        except OSError:
            pass
    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=1).close()
        found.append("tcp 5432")
    except OSError:
        pass
    print("LOOKED", [f for f in found if f], file=sys.stderr, flush=True)


class Looker(Bot):
    def pass_cards(self, view):
        look()
        return view.hand[-3:]

    def play(self, view):
        return lowest(view.legal)
"""


def _runner_env(**extra: str) -> dict[str, str]:
    """A runner's environment: the broker's address only — no database, no secret key."""
    env = worker_env(**extra)
    for name in ("DATABASE_URL", "SECRET_KEY"):
        env.pop(name, None)
    return env


@pytest.fixture
def tiers(settings: Any) -> Iterator[tuple[Callable[..., Any], Callable[..., Any]]]:
    """Start platform workers (the ``celery`` queue) and runners (the ``runner`` queue)."""
    settings.BIDEL_UNSAFE_NO_SANDBOX = sandbox_env()["BIDEL_UNSAFE_NO_SANDBOX"] == "1"
    purge_queues("celery", "runner")
    with ExitStack() as stack:

        def platform(**extra: str) -> Any:
            name = f"platform-{uuid.uuid4().hex[:6]}@test"
            return stack.enter_context(
                celery_worker(env=worker_env(**extra), hostname=name, queues=["celery"])
            )

        def runner(**extra: str) -> Any:
            name = f"runner-{uuid.uuid4().hex[:6]}@test"
            return stack.enter_context(
                celery_worker(
                    env=_runner_env(**extra), hostname=name, queues=["runner"], app="hearts_runner"
                )
            )

        yield platform, runner


def _client(username: str) -> APIClient:
    client = APIClient()
    created = client.post("/api/users/", {"username": username, "password": "a long passphrase"})
    assert created.status_code == 201
    token = client.post(
        "/api/token/", {"username": username, "password": "a long passphrase"}
    ).json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def _settled(client: APIClient, bot: int, number: int = 1) -> Any:
    version = client.get(f"/api/bots/{bot}/versions/{number}/").json()
    return version if version["status"] in ("active", "rejected") else None


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split()]
    return found


def test_a_runner_with_no_secrets_validates_and_plays_uploads(tiers: Any) -> None:
    platform, runner = tiers
    platform()
    played_by = runner()
    for pid in _descendants(played_by.process.pid):  # the runner and its pool
        held = set(_environ(pid)) & {"DATABASE_URL", "SECRET_KEY"}
        assert not held, f"runner process {pid} holds {held}"
    client = _client("ada")
    bot = client.post("/api/bots/", {"name": "looker"}).json()["id"]
    upload = client.post(
        f"/api/bots/{bot}/versions/",
        {"file": SimpleUploadedFile("bot.py", LOOKER)},
        format="multipart",
    )
    assert upload.status_code == 201
    version = wait_until(
        lambda: _settled(client, bot), "validation by the runner", deadline=2 * DEADLINE
    )
    assert version["status"] == "active", version["validation_log"]
    assert "LOOKED []" in version["validation_log"]
    created = client.post(
        "/api/matches/", {"seats": [bot, "low", "random", "heuristic"], "hands": 1}, format="json"
    )
    assert created.status_code == 201, created.json()
    match_id = created.json()["id"]
    wait_until(
        lambda: Match.objects.filter(pk=match_id, status="finished").exists(),
        "the match played by the runner",
        deadline=2 * DEADLINE,
    )
    logs = client.get(f"/api/matches/{match_id}/logs/").json()
    assert "LOOKED []" in logs["seats"][0]["stderr"]
    _, health = health_listing(played_by.hostname, "runners")
    assert health["sandbox"]["ok"] is True


def test_a_runner_refuses_to_start_with_the_platforms_secrets() -> None:
    env = {**_runner_env(), "SECRET_KEY": "x" * 50, "DATABASE_URL": "sqlite:///nowhere.db"}
    done = subprocess.run(
        [sys.executable, "-m", "hearts_runner", f"--hostname=refused-{uuid.uuid4().hex[:6]}@t"],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "refusing to run bots with DATABASE_URL, SECRET_KEY" in done.stdout + done.stderr


def test_without_a_sandbox_uploads_are_rejected_with_the_reason_and_health_is_red(
    tiers: Any,
) -> None:
    platform, runner = tiers
    platform()
    refusing = runner(BIDEL_SANDBOX="jail", BIDEL_UNSAFE_NO_SANDBOX="")
    client = _client("grace")
    bot = client.post("/api/bots/", {"name": "unlucky"}).json()["id"]
    client.post(
        f"/api/bots/{bot}/versions/",
        {"file": SimpleUploadedFile("bot.py", LOOKER)},
        format="multipart",
    )
    version = wait_until(lambda: _settled(client, bot), "the refusal")
    assert version["status"] == "rejected"
    assert "not validated: no runner could sandbox it" in version["validation_log"]
    assert "unknown sandbox backend 'jail'" in version["validation_log"]
    response, health = health_listing(refusing.hostname, "runners")
    assert response.status_code == 503
    assert "no runner can sandbox bots" in health["sandbox"]["detail"]


def test_a_runner_killed_mid_match_loses_nothing_and_the_match_is_stored_once(
    tiers: Any,
) -> None:
    platform, runner = tiers
    ladder = Ladder.objects.get(name="standard")
    platform(MATCH_LEASE_SECONDS="3")
    first = runner()
    match = slow_ladder_match(ladder)  # (8 s at least: the kill lands mid-match)
    wait_until(lambda: Match.objects.get(pk=match.pk).playing_since, "a runner to begin")
    os.killpg(first.process.pid, signal.SIGKILL)  # the runner and its pool, mid-match
    first.process.wait(timeout=30)
    claims = {Match.objects.get(pk=match.pk).claim_token}
    runner()
    wait_until(
        lambda: (
            services.matches_reap()
            or Match.objects.get(pk=match.pk).status != "running"
            or Match.objects.get(pk=match.pk).claim_token not in claims
        ),
        "the lease to expire",
    )
    done = wait_until(
        lambda: Match.objects.filter(pk=match.pk, status="finished").first(),
        "the match to finish on the second runner",
        deadline=5 * DEADLINE,
    )
    assert done.attempts >= 2 and done.claim_token not in claims
    assert verify(done.record)["valid"] and done.seats.exclude(rank=None).count() == 4
    assert done.live_elo_applied
    total = sum(LadderEntry.objects.filter(ladder=ladder).values_list("live_elo", flat=True))
    entries = LadderEntry.objects.filter(ladder=ladder).count()
    assert abs(total - entries * 1500) < 1e-6  # applied once: live Elo is zero-sum per match


# --- the store, on the real database and the real engine, without a broker ----------------


def _claimed_match() -> Match:
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        hands=1,
        rules="standard",
        seats=[services.SeatSpec(builtin=b) for b in ("low", "random", "heuristic", "low")],
    )
    claimed = services.match_claim(match_id=match.pk, claim=jobs.new_claim())
    assert claimed is not None
    return claimed


def test_a_result_is_stored_once_and_only_under_its_claim() -> None:
    match = _claimed_match()
    result = run_job(jobs._match_job(match), unsafe=True).to_dict()
    forged = {**result, "claim": "0" * 32}
    assert jobs.job_store(result=forged) is False
    assert Match.objects.get(pk=match.pk).status == "running"
    other_game = {**result, "game": {**result["game"], "seed": match.seed + 1}}
    assert jobs.job_store(result=other_game) is False  # right claim, another match's game
    assert jobs.job_store(result=result) is True
    stored = Match.objects.get(pk=match.pk)
    assert stored.status == "finished" and stored.record["seed"] == match.seed
    assert jobs.job_store(result=result) is False  # a duplicate changes nothing


def test_the_runners_scores_are_stored_and_scores_its_record_does_not_give_are_refused() -> None:
    match = _claimed_match()
    result = run_job(jobs._match_job(match), unsafe=True).to_dict()
    game = result["game"]
    assert len(game["totals"]) == len(game["hand_scores"]) == 4
    # Seat 0 claims a point less than its record gives (a clean sheet was no lie when it
    # had scored nothing: the test then failed by chance).
    lucky = [game["totals"][0] - 1, *game["totals"][1:]]
    forged = {**result, "game": {**game, "totals": lucky}}
    jobs.job_store(result=forged)
    retried = Match.objects.get(pk=match.pk)
    assert retried.status == "queued" and "not its record's" in retried.error
    assert not retried.seats.exclude(score=None).exists()  # nothing of it was stored

    again = services.match_claim(match_id=match.pk, claim=jobs.new_claim())
    assert again is not None
    honest = run_job(jobs._match_job(again), unsafe=True).to_dict()
    assert jobs.job_store(result=honest) is True
    seats = list(Match.objects.get(pk=match.pk).seats.order_by("seat"))
    assert [s.score for s in seats] == honest["game"]["totals"]
    assert [s.hand_scores for s in seats] == honest["game"]["hand_scores"]


def test_a_stale_claims_result_is_refused_after_the_match_was_claimed_again() -> None:
    match = _claimed_match()
    stale = run_job(jobs._match_job(match), unsafe=True).to_dict()
    Match.objects.filter(pk=match.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    again = services.match_claim(match_id=match.pk, claim=jobs.new_claim())
    assert again is not None and again.attempts == 2
    assert jobs.job_store(result=stale) is False
    fresh = run_job(jobs._match_job(again), unsafe=True).to_dict()
    assert jobs.job_store(result=fresh) is True


def test_a_validation_no_runner_answers_ends_rejected_saying_so() -> None:
    owner = services.user_create(username="nobody", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="waiting")
    version = BotVersion.objects.create(
        bot=bot, number=1, filename="bot.py", code=LOOKER, sha256="x"
    )
    claimed, job = jobs._version_claim(version.pk)
    assert job is not None and claimed.status == "validating"
    assert jobs.versions_expire() == 0  # not yet
    BotVersion.objects.filter(pk=version.pk).update(
        claimed_at=timezone.now() - timedelta(seconds=jobs.VALIDATION_TIMEOUT + 1)
    )
    assert jobs.versions_expire() == 1
    expired = BotVersion.objects.get(pk=version.pk)
    assert expired.status == "rejected"
    assert "no runner played its validation within" in expired.validation_log
