"""Requests with bounds: challenges (target, hands, card points, open challenges per user),
every query parameter, sign-up, log-in and token throttles, the log-in lockout, and Django's
password validators — the form and the API refusing alike, never a 500."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from arena import services
from arena.models import ApiToken, Match

pytestmark = pytest.mark.django_db

PASSWORD = "a long passphrase"
SEATS = ["random", "low", "heuristic", "random"]


def _form_messages(page: str) -> set[str]:
    blocks = re.findall(r'<(?:ul|div) class="errors"[^>]*>(.*?)</(?:ul|div)>', page, re.S)
    return {html.unescape(m).strip() for b in blocks for m in re.findall(r"<li>(.*?)</li>", b)}


def _api_messages(body: Any) -> set[str]:
    if isinstance(body, dict):
        return {m for value in body.values() for m in _api_messages(value)}
    if isinstance(body, list):
        return {m for value in body for m in _api_messages(value)}
    return {str(body)}


def _user(name: str = "ada") -> Any:
    return services.user_create(username=name, password=PASSWORD)


def _api(user: Any = None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def _web(user: Any = None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


# --- challenges ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "limit"),
    [
        ({"rules": {"preset": "standard", "target": 1_000_000}}, "over the limit of 500"),
        ({"rules": {"preset": "standard", "target": 10**40}, "hands": 3}, "over the limit of 500"),
        ({"rules": {"preset": "standard", "queen_points": 10**12}}, "limited to -100 to 100"),
        ({"rules": {"preset": "standard", "heart_points": [-1000] * 13}}, "limited to -100"),
        ({"rules": {"preset": "standard", "moon_points": 10**9}}, "limited to -100 to 100"),
        ({"rules": {"preset": "standard", "heart_points": [0] * 13, "queen_points": 0}}, "never"),
        (
            {"rules": {"preset": "omnibus", "heart_points": [-1] * 13, "queen_points": -13}},
            "give a number of hands",
        ),
        ({"hands": 51}, "less than or equal to 50"),
        ({"hands": 10**30}, "less than or equal to 50"),
        ({"seats": ["low"] * 12}, "no more than 11"),
        ({"seats": [10**30, "low", "low", "low"]}, "neither a bot id nor a built-in"),
        ({"seats": [-1, "low", "low", "low"]}, "neither a bot id nor a built-in"),
    ],
)
def test_a_challenge_past_a_limit_is_a_400_naming_it(body: dict[str, Any], limit: str) -> None:
    response = _api(_user()).post("/api/matches/", {"seats": SEATS, **body}, format="json")
    assert response.status_code == 400, response.content
    assert limit in str(response.json())
    assert not Match.objects.exists()


def test_a_challenge_within_the_limits_is_queued() -> None:
    response = _api(_user()).post(
        "/api/matches/",
        {"seats": SEATS, "rules": {"preset": "standard", "target": 500}},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert Match.objects.get().rules == {"preset": "standard", "target": 500}


def test_open_challenges_per_user_are_capped_at_both_doors(settings: Any) -> None:
    settings.CHALLENGE_MAX_OPEN = 2
    user, other = _user("ada"), _user("eve")
    api, web = _api(user), _web(user)
    form = {f"seat{i}": s for i, s in enumerate(SEATS, 1)} | {"rules": "standard", "hands": "1"}
    assert api.post("/api/matches/", {"seats": SEATS, "hands": 1}, format="json").status_code == 201
    assert web.post("/challenges/new/", form).status_code == 302
    refused_api = api.post("/api/matches/", {"seats": SEATS, "hands": 1}, format="json")
    refused_web = web.post("/challenges/new/", form)
    assert refused_api.status_code == refused_web.status_code == 400
    said = _api_messages(refused_api.json())
    assert said == _form_messages(refused_web.content.decode())
    assert any("the limit is 2" in m for m in said)
    assert _api(other).post("/api/matches/", {"seats": SEATS}, format="json").status_code == 201
    # A finished challenge frees its place.
    first = Match.objects.filter(requested_by=user).order_by("pk").first()
    assert first is not None and services.match_run(match_id=first.pk) is not None
    assert api.post("/api/matches/", {"seats": SEATS, "hands": 1}, format="json").status_code == 201
    assert Match.objects.filter(requested_by=user).count() == 3


# --- query parameters and paths --------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        {"ladder": "1" * 23},
        {"bot": "²"},
        {"bot": "٣"},
        {"tournament": "abc"},
        {"ladder": "-1"},
        {"bot": "a bot"},
        {"opponent": "³"},
        {"tournament": "1.5"},
        {"ladder": " 1"},
        {"ladder": "1\x00"},
        {"status": "weird"},
        {"kind": "nope"},
        {"page": "abc"},
        {"page": "0"},
        {"page": "-1"},
        {"page": "1" * 23},
        {"page": "1e3"},
        {"page": "²"},
    ],
)
def test_every_bad_query_parameter_is_a_400(query: dict[str, str]) -> None:
    response = APIClient().get("/api/matches/", query)
    assert response.status_code == 400, response.content
    name = next(iter(query))
    assert name in response.json()


@pytest.mark.parametrize("path", ["/api/bots/", "/api/ladders/", "/api/tournaments/"])
def test_every_list_refuses_a_bad_page(path: str) -> None:
    assert APIClient().get(path, {"page": "²"}).status_code == 400
    assert APIClient().get(path, {"page": "1"}).status_code == 200
    assert APIClient().get(path, {"page": "last"}).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/api/matches/12345678901234567890123/",
        "/api/bots/12345678901234567890123/",
        "/api/bots/1/versions/12345678901234567890123/",
        "/api/ladders/-1/",
        "/api/tournaments/12345678901234567890123/standings/",
        "/ladders/12345678901234567890123/",
        "/bots/12345678901234567890123/",
        "/matches/12345678901234567890123/",
        "/tournaments/12345678901234567890123/",
        "/api/matches/²/",
    ],
)
def test_out_of_range_ids_in_paths_are_404s(path: str) -> None:
    assert Client().get(path).status_code == 404


@pytest.mark.parametrize("name", ["bot", "opponent", "tournament"])
@pytest.mark.parametrize("value", ["²", "٣", "1" * 19, "1" * 23, "0", "-1", " 1", "1\x00", "x"])
def test_the_match_list_page_takes_no_odd_id_for_a_filter(name: str, value: str) -> None:
    """Not an id, not a 500 ("²" is a digit to str.isdigit, and int("²") raises): the list,
    that filter left aside (an opponent may also be named: it matches no one)."""
    response = Client().get("/matches/", {name: value})
    assert response.status_code == 200, response.content[:2000]


def test_the_challenge_form_takes_no_odd_digits_for_an_id() -> None:
    user = _user()
    form = {"seat1": "²", "seat2": "1" * 23, "seat3": "low", "seat4": "low", "rules": "standard"}
    response = _web(user).post("/challenges/new/", form)
    assert response.status_code == 400
    assert not Match.objects.exists()


# --- throttles and the log-in lockout ---------------------------------------------------------


def test_sign_up_is_throttled_per_address_at_both_doors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "signup", "2/hour")

    def sign_up(client: Any, name: str) -> Any:
        return client.post("/api/users/", {"username": name, "password": PASSWORD})

    assert sign_up(APIClient(), "user1").status_code == 201
    assert Client().post("/signup/", {"username": "user2", "password": PASSWORD}).status_code == 302
    api = sign_up(APIClient(), "user3")
    web = Client().post("/signup/", {"username": "user4", "password": PASSWORD})
    assert api.status_code == web.status_code == 429
    assert any(m.startswith("Request was throttled.") for m in _form_messages(web.content.decode()))
    assert get_user_model().objects.count() == 2
    # Another address has its own allowance; a forwarded header does not buy a new one.
    assert sign_up(APIClient(REMOTE_ADDR="192.0.2.7"), "user5").status_code == 201
    assert sign_up(APIClient(HTTP_X_FORWARDED_FOR="198.51.100.9"), "user6").status_code == 429


def test_the_token_endpoint_is_throttled_per_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "login", "3/minute")
    _user()
    for _ in range(3):
        ok = APIClient().post("/api/token/", {"username": "ada", "password": PASSWORD})
        assert ok.status_code == 200 and ok.json()["token"]
    refused = APIClient().post("/api/token/", {"username": "ada", "password": PASSWORD})
    assert refused.status_code == 429 and "Retry-After" in refused


def test_making_tokens_on_the_account_page_is_throttled_per_user(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "token", "2/hour")
    user = _user()
    web = _web(user)
    assert web.post("/account/").status_code == 200
    assert web.post("/account/").status_code == 200
    refused = web.post("/account/")
    assert refused.status_code == 429 and "Request was throttled." in refused.content.decode()
    assert ApiToken.objects.filter(user=user).count() == 2  # no third token


def test_five_failed_log_ins_lock_the_username_from_that_address_at_both_doors(
    settings: Any,
) -> None:
    settings.LOGIN_MAX_FAILURES = 5
    _user("ada")
    wrong = {"username": "ada", "password": "not the password"}
    for attempt in range(5):
        door = (
            Client().post("/login/", wrong)
            if attempt % 2
            else APIClient().post("/api/token/", wrong)
        )
        assert door.status_code == 400, attempt
    right = {"username": "ADA", "password": PASSWORD}  # usernames are counted case-blind
    web = Client().post("/login/", right)
    api = APIClient().post("/api/token/", right)
    assert web.status_code == api.status_code == 429
    said = _form_messages(web.content.decode())
    detail = api.json()["detail"]
    assert said == set(detail) and "too many failed log-ins" in detail[0]
    # Another address, or another username from this one, is not locked.
    ada = {"username": "ada", "password": PASSWORD}
    assert APIClient(REMOTE_ADDR="192.0.2.7").post("/api/token/", ada).status_code == 200
    _user("grace")
    grace = APIClient().post("/api/token/", {"username": "grace", "password": PASSWORD})
    assert grace.status_code == 200


def test_a_successful_log_in_forgets_the_failures(settings: Any) -> None:
    settings.LOGIN_MAX_FAILURES = 3
    _user("ada")
    wrong = {"username": "ada", "password": "not the password"}
    for _ in range(2):
        assert Client().post("/login/", wrong).status_code == 400
    assert Client().post("/login/", {"username": "ada", "password": PASSWORD}).status_code == 302
    for _ in range(2):
        assert Client().post("/login/", wrong).status_code == 400
    assert Client().post("/login/", {"username": "ada", "password": PASSWORD}).status_code == 302


def test_the_token_endpoint_takes_any_body_without_a_500() -> None:
    for body in ([1, 2], "text", {"username": ["x"], "password": {"a": 1}}, {"username": "\x00"}):
        response = APIClient().post("/api/token/", body, format="json")
        assert response.status_code == 400, body


# --- passwords --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("username", "password", "said"),
    [
        ("ada", "password123", "This password is too common."),
        ("ada", "12345678901234", "This password is entirely numeric."),
        ("lovelace-ada", "lovelace-ada1", "The password is too similar to the username."),
        ("ada", "short", "Ensure this field has at least 10 characters."),
    ],
)
def test_weak_passwords_are_refused_at_both_doors(username: str, password: str, said: str) -> None:
    data = {"username": username, "password": password}
    api = APIClient().post("/api/users/", data)
    web = Client().post("/signup/", data)
    assert api.status_code == web.status_code == 400
    assert said in _api_messages(api.json())
    assert _api_messages(api.json()) == _form_messages(web.content.decode())
    assert not get_user_model().objects.exists()
