"""A hostile bot on real worker processes: it writes NUL and undecodable bytes to its stderr
and calls itself by a dirty name; uploaded and challenged through the API, validated and
played by a worker, its results are stored and every page and answer showing them is a 200.
A second version that also crashes with a dirty exception ends rejected, never stuck."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from arena.models import BotVersion, Ladder, Match, MatchSeat
from tests.arena.live import sandbox_env, worker_env
from tests.support import DEADLINE, celery_worker, purge_queues, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

NOISY = (
    b"import os\n"
    b"from bots_sdk import Bot, lowest\n\n\n"
    b"class Noisy(Bot):\n"
    b"    name = 'noisy\\x00\\ud800'\n\n"
    b"    def pass_cards(self, view):\n"
    b"        os.write(2, b'pass nul:\\x00 cesu:\\xed\\xa0\\x80 end\\n')\n"
    b"        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n"
    b"        os.write(2, b'play \\x00\\n')\n"
    b"        return lowest(view.legal)\n"
)
CRASHING = NOISY.replace(
    b"        return view.hand[-3:]\n", b"        raise ValueError('boom\\x00\\ud800')\n"
)


def _safe(text: str) -> bool:
    return "\x00" not in text and not any("\ud800" <= c <= "\udfff" for c in text)


def _version(client: APIClient, bot: int, number: int) -> Any:
    version = client.get(f"/api/bots/{bot}/versions/{number}/").json()
    return version if version["status"] in ("active", "rejected") else None


def test_a_bot_writing_nul_is_validated_played_stored_and_shown(settings: Any) -> None:
    settings.BIDEL_UNSAFE_NO_SANDBOX = sandbox_env()["BIDEL_UNSAFE_NO_SANDBOX"] == "1"
    client = APIClient()
    assert (
        client.post(
            "/api/users/", {"username": "mallory", "password": "a long passphrase"}
        ).status_code
        == 201
    )
    token = client.post(
        "/api/token/", {"username": "mallory", "password": "a long passphrase"}
    ).json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    bot = client.post("/api/bots/", {"name": "noisy"}).json()["id"]
    name = f"hostile-{uuid.uuid4().hex[:6]}@test"
    purge_queues("celery", "runner")
    with celery_worker(env=worker_env(), hostname=name, queues=["celery", "runner"]):
        for number, code in ((1, NOISY), (2, CRASHING)):
            upload = client.post(
                f"/api/bots/{bot}/versions/",
                {"file": SimpleUploadedFile("bot.py", code)},
                format="multipart",
            )
            assert upload.status_code == 201
            version = wait_until(
                lambda n=number: _version(client, bot, n), "validation", deadline=2 * DEADLINE
            )
            assert _safe(version["validation_log"])
            if number == 1:
                assert version["status"] == "active", version["validation_log"]
                created = client.post(
                    "/api/matches/",
                    {"seats": [bot, "low", "random", "heuristic"], "hands": 1},
                    format="json",
                )
                assert created.status_code == 201, created.json()
                match_id = created.json()["id"]
                wait_until(
                    lambda m=match_id: Match.objects.filter(pk=m, status="finished").exists(),
                    "the match played by the worker",
                    deadline=2 * DEADLINE,
                )
            else:
                assert version["status"] == "rejected"
                assert "crash" in version["validation_log"]
    assert not BotVersion.objects.filter(status__in=["pending", "validating"]).exists()
    seat = MatchSeat.objects.get(match_id=match_id, seat=0)
    assert "pass nul" in seat.stderr and _safe(seat.stderr)
    owner = Client()
    owner.force_login(BotVersion.objects.get(number=1).bot.owner)
    ladder = Ladder.objects.get(name="standard").pk
    for web in (owner, Client()):
        for url in ("/", f"/matches/{match_id}/", f"/bots/{bot}/", f"/ladders/{ladder}/"):
            assert web.get(url).status_code == 200, url
    for url in (
        "/api/matches/",
        f"/api/matches/{match_id}/",
        f"/api/matches/{match_id}/record/",
        f"/api/matches/{match_id}/logs/",
        f"/api/bots/{bot}/versions/1/",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
    logs = client.get(f"/api/matches/{match_id}/logs/").json()
    assert "pass nul" in logs["seats"][0]["stderr"]
