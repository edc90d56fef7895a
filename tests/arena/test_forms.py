"""The forms a bot author uses (sign up, log in, new bot, upload, challenge): each refuses
what the API refuses, in the API's words, and stores nothing when it does; what they accept
is what the API would have stored."""

from __future__ import annotations

import html
import io
import re
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from arena import services
from arena.models import Bot, BotVersion, Match
from engine.rules import PRESETS

pytestmark = pytest.mark.django_db

PASSWORD = "a long passphrase"
GOOD = (
    b"from bots_sdk import Bot, lowest\n\n\nclass Good(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n        return lowest(view.legal)\n"
)


def _form_messages(page: str) -> set[str]:
    """Every error message a form page shows (beside a field or above the form)."""
    blocks = re.findall(r'<(?:ul|div) class="errors"[^>]*>(.*?)</(?:ul|div)>', page, re.S)
    return {html.unescape(m).strip() for b in blocks for m in re.findall(r"<li>(.*?)</li>", b)}


def _api_messages(body: Any) -> set[str]:
    if isinstance(body, dict):
        return {m for value in body.values() for m in _api_messages(value)}
    if isinstance(body, list):
        return {m for value in body for m in _api_messages(value)}
    return {str(body)}


def _web(user: Any = None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _api(user: Any = None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def _both_refuse(web_response: Any, api_response: Any) -> set[str]:
    assert web_response.status_code == 400, web_response.content[:300]
    assert api_response.status_code == 400, api_response.content[:300]
    shown = _form_messages(web_response.content.decode())
    assert shown and shown == _api_messages(api_response.json())
    return shown


@pytest.mark.parametrize(
    "data",
    [
        {"username": "ab", "password": PASSWORD},
        {"username": "bob", "password": "short"},
        {"username": "bad name!", "password": ""},
        {"username": "taken", "password": PASSWORD},
    ],
)
def test_sign_up_refuses_what_the_api_refuses_in_its_words(data: dict[str, str]) -> None:
    from django.contrib.auth import get_user_model

    services.user_create(username="taken", password=PASSWORD)
    _both_refuse(_web().post("/signup/", data), _api().post("/api/users/", data))
    assert get_user_model().objects.count() == 1


def test_sign_up_then_log_in_and_out() -> None:
    client = _web()
    response = client.post("/signup/", {"username": "ada", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/account/"
    assert "ada" in client.get("/account/").content.decode()
    assert client.post("/logout/").status_code == 302
    assert client.get("/account/")["Location"].startswith("/login/?next=/account/")
    wrong = client.post("/login/", {"username": "ada", "password": "not the password"})
    api = _api().post("/api/token/", {"username": "ada", "password": "not the password"})
    assert _both_refuse(wrong, api) == {"Unable to log in with provided credentials."}
    right = client.post("/login/?next=/bots/new/", {"username": "ada", "password": PASSWORD})
    assert right["Location"] == "/bots/new/"
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example/"):
        elsewhere = _web().post(f"/login/?next={target}", {"username": "ada", "password": PASSWORD})
        assert elsewhere["Location"] == "/account/", target  # never sent off the site


def test_upload_help_says_any_py_name_works() -> None:
    user = services.user_create(username="ada", password=PASSWORD)
    bot = _active_bot(user, "ada-bot")
    page = _web(user).get(f"/bots/{bot.pk}/upload/").content.decode()
    assert "a .py file (any name)" in page


def test_account_page_makes_api_tokens_each_shown_once() -> None:
    user = services.user_create(username="ada", password=PASSWORD)
    client = _web(user)
    key_in = re.compile(r'id="token" readonly value="([A-Za-z0-9_-]{43})"')
    first = key_in.search(client.post("/account/").content.decode())
    assert first
    assert (
        APIClient().get("/api/bots/", HTTP_AUTHORIZATION=f"Token {first.group(1)}").status_code
        == 200
    )
    assert first.group(1) not in client.get("/account/").content.decode()  # never shown again
    second = key_in.search(client.post("/account/").content.decode())
    assert second and second.group(1) != first.group(1)
    # A second token is one more, not a replacement: both work.
    for n, key in enumerate((first.group(1), second.group(1))):
        made = APIClient().post(
            "/api/bots/", {"name": f"bot-{n}"}, HTTP_AUTHORIZATION=f"Token {key}"
        )
        assert made.status_code == 201, made.content


@pytest.mark.parametrize("name", ["", "a/b", "random", "Taken-Bot", "has space"])
def test_new_bot_refuses_what_the_api_refuses(name: str) -> None:
    user = services.user_create(username="ada", password=PASSWORD)
    services.bot_create(owner=user, name="taken-bot")
    _both_refuse(
        _web(user).post("/bots/new/", {"name": name}), _api(user).post("/api/bots/", {"name": name})
    )
    assert Bot.objects.count() == 1


def test_new_bot_form_chooses_the_ladders_it_joins_standard_ticked_by_default() -> None:
    user = services.user_create(username="ada", password=PASSWORD)
    client = _web(user)
    page = client.get("/bots/new/").content.decode()
    assert re.search(r'name="join_ladders" value="standard" checked', page), page
    client.post("/bots/new/", {"name": "joiner", "join_ladders": ["standard"]})
    client.post("/bots/new/", {"name": "loner"})  # nothing ticked: joins none
    assert list(Bot.objects.get(name="joiner").join_ladders.values_list("name", flat=True)) == [
        "standard"
    ]
    assert not Bot.objects.get(name="loner").join_ladders.exists()
    refused = client.post("/bots/new/", {"name": "lost", "join_ladders": ["nowhere"]})
    assert refused.status_code == 400 and not Bot.objects.filter(name="lost").exists()


def _zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in entries.items():
            archive.writestr(path, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("filename", "data"),
    [
        ("bot.py", b""),
        ("bot.py", b"def broken(:\n"),
        ("bot.py", b"\xff\xfe not utf-8"),
        ("bot.exe", b"MZ"),
        ("bot.zip", b"not a zip"),
        ("bot.zip", _zip({"helper.py": b"x = 1\n"})),
        ("bot.zip", _zip({"../escape.py": b"x = 1\n", "bot.py": GOOD})),
    ],
)
def test_upload_refuses_what_the_api_refuses_and_stores_nothing(filename: str, data: bytes) -> None:
    user = services.user_create(username="ada", password=PASSWORD)
    bot = services.bot_create(owner=user, name="ada-bot")
    web = _web(user).post(f"/bots/{bot.pk}/upload/", {"file": SimpleUploadedFile(filename, data)})
    api = _api(user).post(
        f"/api/bots/{bot.pk}/versions/",
        {"file": SimpleUploadedFile(filename, data)},
        format="multipart",
    )
    _both_refuse(web, api)
    assert not BotVersion.objects.exists()


def test_upload_without_a_file_is_refused_as_the_api_refuses_it() -> None:
    user = services.user_create(username="ada", password=PASSWORD)
    bot = services.bot_create(owner=user, name="ada-bot")
    web = _web(user).post(f"/bots/{bot.pk}/upload/", {})
    api = _api(user).post(f"/api/bots/{bot.pk}/versions/", {}, format="multipart")
    assert _both_refuse(web, api) == {"No file was submitted."}
    assert not BotVersion.objects.exists()


def test_upload_stores_a_version_and_only_the_owner_may() -> None:
    owner = services.user_create(username="ada", password=PASSWORD)
    other = services.user_create(username="eve", password=PASSWORD)
    bot = services.bot_create(owner=owner, name="ada-bot")
    assert _web(other).get(f"/bots/{bot.pk}/upload/").status_code == 403
    assert (
        _web(other)
        .post(f"/bots/{bot.pk}/upload/", {"file": SimpleUploadedFile("bot.py", GOOD)})
        .status_code
        == 403
    )
    assert _web().get(f"/bots/{bot.pk}/upload/").status_code == 302  # to the log-in page
    client = _web(owner)
    response = client.post(f"/bots/{bot.pk}/upload/", {"file": SimpleUploadedFile("bot.py", GOOD)})
    assert response.status_code == 302 and response["Location"] == f"/bots/{bot.pk}/"
    version = BotVersion.objects.get(bot=bot)
    assert bytes(version.code) == GOOD and version.status == "pending"
    page = client.get(f"/bots/{bot.pk}/").content.decode()
    assert "Version 1 uploaded" in page and 'http-equiv="refresh"' in page  # until validated
    services.version_validate(version_id=version.pk)
    assert 'http-equiv="refresh"' not in client.get(f"/bots/{bot.pk}/").content.decode()


def _active_bot(owner: Any, name: str) -> Bot:
    bot = services.bot_create(owner=owner, name=name)
    version = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
    services.version_validate(version_id=version.pk)
    return bot


FOUR = ["random", "low", "heuristic", "random"]


@pytest.mark.parametrize(
    ("seats", "rules", "hands"),
    [
        (["nobody-by-this-name", "random", "low", "heuristic"], "standard", ""),
        (["random", "low"], "standard", ""),  # too few seats
        (FOUR, "no_such_rules", ""),
        (FOUR, "standard", "many"),  # not a number
        (FOUR, "standard", "51"),  # more hands than a challenge may ask for
        (["random", "low", "heuristic"], "cancellation", ""),  # six to eleven players
    ],
)
def test_challenge_refuses_what_the_api_refuses(seats: list[str], rules: str, hands: str) -> None:
    user = services.user_create(username="ada", password=PASSWORD)
    form = {f"seat{i}": s for i, s in enumerate(seats, 1)} | {"rules": rules, "hands": hands}
    web = _web(user).post(f"/challenges/new/?seats={max(len(seats), 3)}", form)
    # What the form sends: the preset, with as many players as it names seats when that differs.
    usual = PRESETS[rules].get("players", 4) if rules in PRESETS else len(seats)
    spec: Any = rules if len(seats) == usual else {"preset": rules, "players": len(seats)}
    body: dict[str, Any] = {"seats": seats, "rules": spec} | ({"hands": hands} if hands else {})
    api = _api(user).post("/api/matches/", body, format="json")
    _both_refuse(web, api)
    assert not Match.objects.exists()


def test_challenge_by_bot_name_queues_the_match_the_api_would() -> None:
    user = services.user_create(username="ada", password=PASSWORD)
    bot = _active_bot(user, "ada-bot")
    client = _web(user)
    for asked, shown in (("abc", 4), ("99", 11), ("1", 3)):  # seat inputs: 3 to 11
        form = client.get(f"/challenges/new/?seats={asked}").content.decode()
        assert form.count('name="seat') == shown, asked
    page = client.get("/challenges/new/").content.decode()
    assert '<option value="ada-bot">' in page and '<option value="montecarlo"' in page
    # four seats chosen: none of the four is labelled optional
    assert page.count('name="seat') == 4 and "Seat 4 <small>(optional)" not in page
    response = client.post(
        "/challenges/new/",
        {
            "seat1": "ADA-BOT",
            "seat2": "random",
            "seat3": "low",
            "seat4": str(bot.pk),
            "rules": "omnibus",
            "hands": "2",
        },
    )
    match = Match.objects.get()
    assert response["Location"] == f"/matches/{match.pk}/"
    assert (match.kind, match.rules, match.hands, match.requested_by) == (
        "challenge",
        "omnibus",
        2,
        user,
    )
    assert [s.version.bot_id if s.version else s.builtin for s in match.seats.order_by("seat")] == [
        bot.pk,
        "random",
        "low",
        bot.pk,
    ]
    # Queued: its page waits for it live (the viewer connects to the match's feed).
    page = client.get(f"/matches/{match.pk}/").content.decode()
    assert f'data-live="/ws/matches/{match.pk}/live/"' in page
    five = client.post(
        "/challenges/new/?seats=5",
        {
            "seat1": "random",
            "seat2": "low",
            "seat3": "heuristic",
            "seat4": "random",
            "seat5": "low",
            "rules": "standard",
        },
    )
    assert five.status_code == 302
    assert Match.objects.order_by("-pk").first().rules == {"preset": "standard", "players": 5}  # type: ignore[union-attr]


def test_challenges_share_one_allowance_between_the_api_and_the_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "challenges", "2/hour")
    user = services.user_create(username="ada", password=PASSWORD)
    seats = ["random", "low", "heuristic", "random"]
    assert _api(user).post("/api/matches/", {"seats": seats}, format="json").status_code == 201
    form = {f"seat{i}": s for i, s in enumerate(seats, 1)} | {"rules": "standard"}
    assert _web(user).post("/challenges/new/", form).status_code == 302
    refused = _web(user).post("/challenges/new/", form)
    assert refused.status_code == 400
    assert any(
        m.startswith("Request was throttled.") for m in _form_messages(refused.content.decode())
    )
    assert _api(user).post("/api/matches/", {"seats": seats}, format="json").status_code == 429
    assert Match.objects.count() == 2
