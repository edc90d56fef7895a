"""Accounts as users expect: API tokens that expire, listed and revoked by their owner,
renewed for a fresh one; an e-mail address; a password reset by e-mail that works once and
ends every token and session. Through the real API (APIClient) and the pages (Django's test
client); mail read from Django's locmem back end, which the test run uses."""

from __future__ import annotations

import hashlib
import importlib
import re
import socketserver
import threading
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from arena import services
from arena.models import ApiToken
from arena.services.accounts import RESET_TASK
from tests.support import (
    SERVICE_VARIABLES,
    child_env,
    run_python,
    run_queued,
    settings_in_subprocess,
)

pytestmark = pytest.mark.django_db

PASSWORD = "a long passphrase"
NEW_PASSWORD = "another long passphrase"
MIGRATION = importlib.import_module("arena.migrations.0016_api_tokens")


def _user(name: str = "ada", email: str = "") -> Any:
    return services.user_create(username=name, password=PASSWORD, email=email)


def _log_in(username: str = "ada", **extra: str) -> dict[str, Any]:
    """A log-in through the API; ``extra`` goes in the body too (``name``: the token's)."""
    body = {"username": username, "password": PASSWORD, **extra}
    response = APIClient().post("/api/token/", body)
    assert response.status_code == 200, response.content
    return response.json()


def _as(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def _refusal(key: str) -> str:
    """What the API says to ``key`` (it must be refused)."""
    response = _as(key).get("/api/users/me/")
    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"] == "Token"
    (said,) = response.json()["detail"]
    return str(said)


# --- tokens: made, listed, used -----------------------------------------------------------------


def test_a_log_in_makes_a_named_token_that_works_and_expires_in_api_token_days() -> None:
    _user()
    before = timezone.now()
    issued = _log_in(name="laptop")
    assert set(issued) == {
        "token",
        "id",
        "name",
        "prefix",
        "created",
        "last_used",
        "expires",
        "ends_with_session",
    }
    assert issued["name"] == "laptop" and issued["prefix"] == issued["token"][:8]
    assert issued["last_used"] is None
    expires = timezone.datetime.fromisoformat(issued["expires"].replace("Z", "+00:00"))
    days = timedelta(days=settings.API_TOKEN_DAYS)
    assert before + days <= expires <= timezone.now() + days
    me = _as(issued["token"]).get("/api/users/me/")
    assert me.status_code == 200 and me.json()["username"] == "ada"
    # Each log-in is a token of its own; the first keeps working.
    second = _log_in()
    assert second["token"] != issued["token"] and second["id"] != issued["id"]
    assert _as(issued["token"]).get("/api/users/me/").status_code == 200


def test_a_token_without_a_name_is_named_after_the_client_that_asked() -> None:
    _user()
    asked = APIClient(HTTP_USER_AGENT="bidel-cli/1.0 (linux)").post(
        "/api/token/", {"username": "ada", "password": PASSWORD}
    )
    assert asked.json()["name"] == "bidel-cli/1.0 (linux)"
    assert _log_in()["name"] == "API"  # no User-Agent at all


def test_only_a_digest_and_a_prefix_of_a_key_are_stored() -> None:
    _user()
    key = _log_in()["token"]
    (row,) = ApiToken.objects.values()
    assert row["digest"] == hashlib.sha256(key.encode()).hexdigest()
    assert row["prefix"] == key[:8]
    assert not [name for name, value in row.items() if value == key]


def test_the_list_shows_the_callers_tokens_and_never_a_key() -> None:
    _user()
    first, second = _log_in(name="laptop"), _log_in(name="ci")
    listed = _as(first["token"]).get("/api/tokens/")
    assert listed.status_code == 200
    rows = listed.json()
    assert [row["name"] for row in rows] == ["ci", "laptop"]  # newest first
    assert set(rows[0]) == {
        "id",
        "name",
        "prefix",
        "created",
        "last_used",
        "expires",
        "ends_with_session",
    }
    text = listed.content.decode()
    for key in (first["token"], second["token"]):
        assert key not in text and hashlib.sha256(key.encode()).hexdigest() not in text
    # The token that asked was used just now; the other never.
    used = {row["name"]: row["last_used"] for row in rows}
    assert used["laptop"] is not None and used["ci"] is None
    assert APIClient().get("/api/tokens/").status_code == 401


def test_a_token_past_its_expiry_is_refused_saying_so() -> None:
    _user()
    key = _log_in()["token"]
    ApiToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    said = _refusal(key)
    assert said.startswith("this token expired on ") and "POST /api/token/" in said
    assert _as(key).post("/api/token/renew/").status_code == 401  # nor renewed
    fresh = _log_in()["token"]
    assert _as(fresh).get("/api/tokens/").json()[0]["prefix"] == fresh[:8]  # the expired: gone


def test_an_unknown_or_malformed_key_is_refused() -> None:
    assert _refusal("x" * 43) == "Invalid token."
    assert _refusal("x" * 5000) == "Invalid token."
    for header in ("Token", "Token a b"):
        response = APIClient().get("/api/tokens/", HTTP_AUTHORIZATION=header)
        assert response.status_code == 401 and response.json()["detail"][0].startswith(
            "Invalid token header."
        )


# --- revoking -----------------------------------------------------------------------------------


def test_the_owner_revokes_one_token_and_its_holder_is_told() -> None:
    _user()
    kept, gone = _log_in(name="kept"), _log_in(name="gone")
    client = _as(kept["token"])
    assert client.delete(f"/api/tokens/{gone['id']}/").status_code == 204
    said = _refusal(gone["token"])
    assert said.startswith("this token was revoked by its owner on ")
    assert client.delete(f"/api/tokens/{gone['id']}/").status_code == 204  # again: harmless
    assert [row["name"] for row in client.get("/api/tokens/").json()] == ["kept"]
    # Revoking the token presented is a log-out.
    assert client.delete(f"/api/tokens/{kept['id']}/").status_code == 204
    assert _refusal(kept["token"]).startswith("this token was revoked by its owner")


def test_revoking_all_but_the_token_presented() -> None:
    _user()
    keys = [_log_in(name=f"t{n}")["token"] for n in range(3)]
    answer = _as(keys[1]).delete("/api/tokens/")
    assert answer.status_code == 200 and answer.json() == {"revoked": 2}
    assert _as(keys[1]).get("/api/users/me/").status_code == 200
    for key in (keys[0], keys[2]):
        assert _refusal(key).startswith("this token was revoked")


def test_another_user_can_neither_list_nor_revoke_my_tokens() -> None:
    _user("ada")
    _user("bob")
    ada, bob = _log_in("ada"), _log_in("bob")
    listed = _as(bob["token"]).get("/api/tokens/").json()
    assert [row["id"] for row in listed] == [bob["id"]]
    refused = _as(bob["token"]).delete(f"/api/tokens/{ada['id']}/")
    assert refused.status_code == 404 and refused.json() == {
        "detail": ["No ApiToken matches the given query."]
    }
    assert _as(bob["token"]).delete("/api/tokens/").json() == {"revoked": 0}
    assert _as(ada["token"]).get("/api/users/me/").status_code == 200
    assert _as(bob["token"]).delete("/api/tokens/99999999999999999/").status_code == 404


def test_one_token_beyond_the_limit_revokes_the_least_recently_used(settings: Any) -> None:
    settings.API_TOKENS_PER_USER = 3
    _user()
    keys = [_log_in(name=f"t{n}")["token"] for n in range(3)]
    _as(keys[0]).get("/api/users/me/")  # t0 used: t1 is now the least recently used
    fourth = _log_in(name="t3")["token"]
    said = _refusal(keys[1])
    assert "more tokens than an account may hold" in said and "least recently used" in said
    for key in (keys[0], keys[2], fourth):
        assert _as(key).get("/api/users/me/").status_code == 200
    # Dead tokens are remembered (to say why) only as many as live ones may be.
    for _ in range(6):
        _log_in()
    assert ApiToken.objects.filter(revoked__isnull=True).count() == 3
    assert ApiToken.objects.filter(revoked__isnull=False).count() == 3


# --- renewing -----------------------------------------------------------------------------------


def test_renewing_gives_a_fresh_token_and_ends_the_one_presented() -> None:
    _user()
    old = _log_in(name="laptop")
    ApiToken.objects.update(expires=timezone.now() + timedelta(days=1))  # about to expire
    renewed = _as(old["token"]).post("/api/token/renew/")
    assert renewed.status_code == 200, renewed.content
    new = renewed.json()
    assert new["name"] == "laptop" and new["token"] != old["token"]
    assert _as(new["token"]).get("/api/users/me/").status_code == 200
    said = _refusal(old["token"])
    assert said.startswith("this token was renewed on ") and "use the token the renewal" in said
    assert _as(old["token"]).post("/api/token/renew/").status_code == 401  # only once


def test_renewing_never_extends_a_tokens_life_past_its_log_in() -> None:
    """A thief holding a key and renewing it every day still loses it when the log-in that
    made it is API_TOKEN_DAYS old: only the password makes a token that lives longer."""
    _user()
    issued = _log_in(name="laptop")
    made = ApiToken.objects.get()
    key = issued["token"]
    for _ in range(3):
        key = _as(key).post("/api/token/renew/").json()["token"]
    last = ApiToken.objects.get(revoked__isnull=True)
    assert last.expires == made.expires
    ApiToken.objects.filter(pk=last.pk).update(expires=timezone.now() - timedelta(seconds=1))
    assert _as(key).post("/api/token/renew/").status_code == 401  # expired: log in again
    assert _as(key).get("/api/users/me/").status_code == 401


def test_renewing_needs_a_token_presented() -> None:
    user = _user()
    assert APIClient().post("/api/token/renew/").status_code == 401
    session = APIClient()
    session.force_login(user)
    refused = session.post("/api/token/renew/")
    assert refused.status_code == 400 and "Authorization: Token" in refused.json()["detail"][0]


# --- throttles ----------------------------------------------------------------------------------


def test_listing_revoking_and_renewing_are_throttled_per_user(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "tokens", "2/minute")
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "token", "1/hour")
    _user()
    key = _log_in()["token"]
    client = _as(key)
    assert client.get("/api/tokens/").status_code == 200
    assert client.delete("/api/tokens/").status_code == 200
    refused = client.get("/api/tokens/")
    assert refused.status_code == 429 and "Retry-After" in refused
    renewed = client.post("/api/token/renew/").json()["token"]
    again = _as(renewed).post("/api/token/renew/")
    assert again.status_code == 429 and _as(renewed).get("/api/users/me/").status_code == 200


# --- tokens made before expiry ------------------------------------------------------------------


def test_a_key_made_before_tokens_expired_keeps_working_after_the_migration() -> None:
    user = _user()
    old_key = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"  # DRF's kind: 40 hexadecimal digits
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamp "
            "with time zone NOT NULL, user_id bigint NOT NULL UNIQUE)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token (key, created, user_id) VALUES (%s, %s, %s)",
            [old_key, timezone.now() - timedelta(days=400), user.pk],
        )

    MIGRATION.forwards(apps, SimpleNamespace(connection=connection))  # what it uses of an editor

    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM authtoken_token")
        assert cursor.fetchone() == (0,)  # no key left in the clear
    (token,) = ApiToken.objects.all()
    assert token.prefix == "9944b091" and token.created < timezone.now() - timedelta(days=399)
    assert token.expires > timezone.now() + timedelta(days=settings.API_TOKEN_DAYS - 1)
    assert _as(old_key).get("/api/users/me/").json()["username"] == "ada"
    listed = _as(old_key).get("/api/tokens/").json()
    assert listed[0]["name"] == "made before tokens expired"


# --- the account page ---------------------------------------------------------------------------


def _web(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_account_page_makes_a_token_shown_once_lists_and_revokes() -> None:
    user = _user()
    web = _web(user)
    made = web.post("/account/", {"name": "my laptop"})
    assert made.status_code == 200
    page = made.content.decode()
    key = re.search(r'id="token" readonly value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    assert "it is not shown again" in page
    assert _as(key).get("/api/users/me/").status_code == 200
    listed = web.get("/account/").content.decode()
    assert key not in listed  # never again
    assert "my laptop" in listed and f"{key[:8]}…" in listed
    (token,) = ApiToken.objects.all()
    revoked = web.post(f"/account/tokens/{token.pk}/revoke/")
    assert revoked.status_code == 302 and revoked["Location"] == "/account/"
    assert "was revoked" in web.get("/account/").content.decode()
    assert _refusal(key).startswith("this token was revoked by its owner")
    # Another user's token is no such token.
    bob_token, _ = services.token_create(user=_user("bob"), name="bob's")
    assert web.post(f"/account/tokens/{bob_token.pk}/revoke/").status_code == 404
    assert ApiToken.objects.get(pk=bob_token.pk).revoked is None


def _page_token(web: Client, name: str) -> str:
    made = web.post("/account/", {"name": name})
    assert made.status_code == 200, made.content
    return re.search(r'id="token" readonly value="([^"]+)"', made.content.decode()).group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize("door", ["/logout/", "/admin/logout/"])
def test_a_sessions_token_ends_at_its_log_out_from_any_door(door: str) -> None:
    """A stolen session cannot leave behind a credential that outlives it: what the account
    page made ends when the session logs out (the site's log-out or the admin's), never after
    the session's own expiry; a token made with the password (bidel login) stays, and so do
    another session's."""
    user = _user()
    user.is_staff = True  # (the admin's log-out needs a staff session)
    user.save(update_fields=["is_staff"])
    web, elsewhere = Client(), Client()
    for client in (web, elsewhere):
        assert client.post("/login/", {"username": "ada", "password": PASSWORD}).status_code == 302
    page_key = _page_token(web, "from the page")
    other_key = _page_token(elsewhere, "another browser")
    password_key = _log_in(name="laptop")["token"]
    made = ApiToken.objects.get(name="from the page")
    assert made.expires <= web.session.get_expiry_date() + timedelta(seconds=1)
    listed = {t["name"]: t for t in _as(password_key).get("/api/tokens/").json()}
    assert listed["from the page"]["ends_with_session"] is True
    assert listed["laptop"]["ends_with_session"] is False
    renewed = _as(page_key).post("/api/token/renew/").json()["token"]  # still the session's
    assert _as(renewed).get("/api/users/me/").status_code == 200

    assert web.post(door).status_code in (200, 302)

    said = _refusal(renewed)
    assert said.startswith("this token ended on ") and "the web session that made it" in said
    assert _as(password_key).get("/api/users/me/").status_code == 200
    assert _as(other_key).get("/api/users/me/").status_code == 200
    assert elsewhere.get("/account/").status_code == 200


def test_the_account_page_makes_tokens_within_the_allowance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "token", "1/hour")
    web = _web(_user())
    assert web.post("/account/").status_code == 200
    refused = web.post("/account/")
    assert refused.status_code == 429 and "Request was throttled." in refused.content.decode()
    assert ApiToken.objects.count() == 1


# --- the e-mail address -------------------------------------------------------------------------


def test_an_email_is_given_at_sign_up_by_either_door_and_changed_with_the_password() -> None:
    api = APIClient().post(
        "/api/users/", {"username": "ada", "password": PASSWORD, "email": "Ada@Example.ORG"}
    )
    assert api.status_code == 201 and "email" not in api.json()  # the public shape
    assert get_user_model().objects.get(username="ada").email == "Ada@example.org"
    bad = APIClient().post("/api/users/", {"username": "x_y", "password": PASSWORD, "email": "no"})
    assert bad.status_code == 400 and list(bad.json()) == ["email"]
    page = Client().post(
        "/signup/", {"username": "grace", "password": PASSWORD, "email": "grace@example.org"}
    )
    assert page.status_code == 302
    assert get_user_model().objects.get(username="grace").email == "grace@example.org"
    assert Client().post("/signup/", {"username": "bob", "password": PASSWORD}).status_code == 302

    client = _as(_log_in("ada")["token"])
    assert client.get("/api/users/me/").json()["email"] == "Ada@example.org"
    wrong = client.patch("/api/users/me/", {"email": "thief@example.org", "password": "guess"})
    assert wrong.status_code == 400 and wrong.json() == {"password": ["that is not your password"]}
    right = client.patch("/api/users/me/", {"email": "ada@new.example", "password": PASSWORD})
    assert right.status_code == 200 and right.json()["email"] == "ada@new.example"
    assert client.patch("/api/users/me/", {"email": "ada@x.example"}).status_code == 400

    web = _web(get_user_model().objects.get(username="grace"))
    refused = web.post("/account/email/", {"email": "g@example.org", "password": "nope"})
    assert refused.status_code == 400 and "that is not your password" in refused.content.decode()
    saved = web.post("/account/email/", {"email": "g@example.org", "password": PASSWORD})
    assert saved.status_code == 302
    assert get_user_model().objects.get(username="grace").email == "g@example.org"


def test_guessing_the_password_to_change_the_email_locks_out_as_log_ins_do() -> None:
    _user(email="ada@example.org")
    client = _as(_log_in()["token"])
    for _ in range(settings.LOGIN_MAX_FAILURES):
        wrong = client.patch("/api/users/me/", {"email": "thief@example.org", "password": "guess"})
        assert wrong.status_code == 400
    right = client.patch("/api/users/me/", {"email": "thief@example.org", "password": PASSWORD})
    assert right.status_code == 429 and "too many failed log-ins" in right.json()["detail"][0]
    assert "Retry-After" in right
    page = _web(get_user_model().objects.get(username="ada"))
    locked = page.post("/account/email/", {"email": "thief@example.org", "password": PASSWORD})
    assert locked.status_code == 429 and "too many failed log-ins" in locked.content.decode()
    assert get_user_model().objects.get(username="ada").email == "ada@example.org"
    # The log-in itself is locked from that address too: the same count.
    refused = APIClient().post("/api/token/", {"username": "ada", "password": PASSWORD})
    assert refused.status_code == 429


# --- password reset -----------------------------------------------------------------------------

_LINK = re.compile(r"https?://testserver/password-reset/([^/\s]+)/([^/\s]+)/")


def _reset_link(to: str) -> tuple[str, str]:
    (message,) = [m for m in mail.outbox if m.to == [to]]
    found = _LINK.search(message.body)
    assert found, message.body
    return found.group(1), found.group(2)


def _mailed() -> int:
    """The reset mails the requests so far asked for, sent as a worker sends them (a
    request only queues its mail: its time must say nothing of the address)."""
    return run_queued(RESET_TASK)


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_the_reset_by_the_api_end_to_end() -> None:
    _user(email="ada@example.org")
    key = _log_in()["token"]
    browser = Client()
    assert browser.post("/login/", {"username": "ada", "password": PASSWORD}).status_code == 302
    assert browser.get("/account/").status_code == 200

    asked = APIClient().post("/api/password-reset/", {"email": "ADA@example.org"})
    assert asked.status_code == 200
    assert mail.outbox == [] and _mailed() == 1  # sent by a worker, after the answer
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["ada@example.org"]
    assert "Bidel" in mail.outbox[0].subject and "ada" in mail.outbox[0].body
    uid, token = _reset_link("ada@example.org")

    weak = APIClient().post(
        "/api/password-reset/confirm/", {"uid": uid, "token": token, "new_password": "12345678901"}
    )
    assert (
        weak.status_code == 400
        and "This password is entirely numeric." in (weak.json()["new_password"])
    )
    done = APIClient().post(
        "/api/password-reset/confirm/", {"uid": uid, "token": token, "new_password": NEW_PASSWORD}
    )
    assert done.status_code == 200, done.content  # the refused try lost nothing
    old = APIClient().post("/api/token/", {"username": "ada", "password": PASSWORD})
    assert old.status_code == 400
    new = APIClient().post("/api/token/", {"username": "ada", "password": NEW_PASSWORD})
    assert new.status_code == 200
    assert "the account's password was reset" in _refusal(key)
    assert browser.get("/account/").status_code == 302  # the session ended too
    again = APIClient().post(
        "/api/password-reset/confirm/", {"uid": uid, "token": token, "new_password": PASSWORD}
    )
    assert again.status_code == 400 and "was used already" in again.json()["token"][0]


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_the_reset_answers_the_same_for_an_address_nobody_has() -> None:
    _user(email="ada@example.org")
    known = APIClient().post("/api/password-reset/", {"email": "ada@example.org"})
    unknown = APIClient().post("/api/password-reset/", {"email": "nobody@example.org"})
    assert (known.status_code, known.json()) == (unknown.status_code, unknown.json())
    assert _mailed() == 2  # both asked, the same way; one mail
    assert [m.to for m in mail.outbox] == [["ada@example.org"]]
    page_known = Client().post("/password-reset/", {"email": "ada@example.org"})
    page_unknown = Client().post("/password-reset/", {"email": "nobody@example.org"})
    assert page_known.status_code == page_unknown.status_code == 302
    assert page_known["Location"] == page_unknown["Location"] == "/password-reset/sent/"
    assert _mailed() == 2 and len(mail.outbox) == 2
    bad = APIClient().post("/api/password-reset/", {"email": "not an address"})
    assert bad.status_code == 400 and list(bad.json()) == ["email"]


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_a_reset_asked_under_a_host_not_ours_sends_no_mail() -> None:
    _user(email="ada@example.org")
    forged = APIClient(HTTP_HOST="attacker.example").post(
        "/api/password-reset/", {"email": "ada@example.org"}
    )
    assert forged.status_code == 400
    page = Client(HTTP_HOST="attacker.example").post(
        "/password-reset/", {"email": "ada@example.org"}
    )
    assert page.status_code == 400
    assert _mailed() == 0 and mail.outbox == []


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_a_reset_link_points_at_the_sites_address_whatever_host_the_request_named(
    settings: Any,
) -> None:
    _user(email="ada@example.org")
    settings.SITE_URL = "https://bidel.example"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "127.0.0.1"]
    APIClient(HTTP_HOST="127.0.0.1:1").post("/api/password-reset/", {"email": "ada@example.org"})
    Client(HTTP_HOST="127.0.0.1:1").post("/password-reset/", {"email": "ada@example.org"})
    assert _mailed() == 2
    for message in mail.outbox:
        links = re.findall(r"https?://\S+", message.body)
        assert links and all(link.startswith("https://bidel.example/") for link in links), links


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_without_the_sites_address_a_production_site_refuses_resets_saying_why(
    settings: Any,
) -> None:
    _user(email="ada@example.org")
    settings.SITE_URL, settings.DEBUG = "", False
    api = APIClient().post("/api/password-reset/", {"email": "ada@example.org"})
    assert api.status_code == 503 and "SITE_URL" in api.json()["detail"][0]
    page = Client().post("/password-reset/", {"email": "ada@example.org"})
    assert page.status_code == 503 and "SITE_URL" in page.content.decode()
    assert _mailed() == 0 and mail.outbox == []


def test_the_sites_address_is_checked_when_the_settings_load(tmp_path: Path) -> None:
    base = {"BIDEL_VAR_DIR": str(tmp_path), "DEBUG": "1"}
    good = settings_in_subprocess(child_env({**base, "SITE_URL": "https://b.example/"}), "SITE_URL")
    assert good == {"SITE_URL": "https://b.example"}
    for bad in ("b.example", "ftp://b.example", "https://b.example/path", "https://u@b.example"):
        with pytest.raises(AssertionError, match="SITE_URL"):
            settings_in_subprocess(child_env({**base, "SITE_URL": bad}), "SITE_URL")


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_made_up_and_mangled_links_are_refused_without_a_500() -> None:
    user = _user(email="ada@example.org")
    APIClient().post("/api/password-reset/", {"email": "ada@example.org"})
    _mailed()
    uid, token = _reset_link("ada@example.org")
    for bad_uid, bad_token in [
        (uid, token[:-2] + "xx"),
        ("MTIzNDU2Nzg5", token),  # another account's id
        ("!!!", token),
        ("", token),
        ("OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5", token),  # an id past any integer column
    ]:
        body = {"uid": bad_uid, "token": bad_token, "new_password": NEW_PASSWORD}
        response = APIClient().post("/api/password-reset/confirm/", body)
        assert response.status_code == 400, (bad_uid, response.content)
    user.refresh_from_db()
    assert user.check_password(PASSWORD)
    assert Client().get("/password-reset/!!!/nothing/").status_code == 200  # says so, in words


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_the_reset_by_the_pages_end_to_end() -> None:
    _user(email="ada@example.org")
    key = _log_in()["token"]
    login = Client().get("/login/").content.decode()
    assert 'href="/password-reset/"' in login
    asked = Client().post("/password-reset/", {"email": "ada@example.org"})
    assert asked.status_code == 302
    _mailed()
    assert "Look in your mailbox" in Client().get(asked["Location"]).content.decode()
    uid, token = _reset_link("ada@example.org")

    browser = Client()
    opened = browser.get(f"/password-reset/{uid}/{token}/")
    assert opened.status_code == 302 and token not in opened["Location"]  # out of the address bar
    form = browser.get(opened["Location"]).content.decode()
    assert 'name="new_password1"' in form and 'name="new_password2"' in form
    mismatch = browser.post(
        opened["Location"], {"new_password1": NEW_PASSWORD, "new_password2": "something else"}
    )
    assert mismatch.status_code == 400
    done = browser.post(
        opened["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert done.status_code == 302 and done["Location"] == "/password-reset/done/"
    assert "Your password was changed" in browser.get(done["Location"]).content.decode()
    assert "the account's password was reset" in _refusal(key)
    logged_in = Client().post("/login/", {"username": "ada", "password": NEW_PASSWORD})
    assert logged_in.status_code == 302

    used = Client().get(f"/password-reset/{uid}/{token}/")
    assert used.status_code == 200 and "This link does not work" in used.content.decode()


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_reset_mails_are_throttled_per_email_address_whoever_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "password_reset_email", "2/hour")
    _user(email="ada@example.org")
    for n, door in enumerate(("api", "page")):
        address = f"192.0.2.{n + 1}"
        if door == "api":
            ok = APIClient(REMOTE_ADDR=address).post(
                "/api/password-reset/", {"email": "ada@example.org"}
            )
            assert ok.status_code == 200
        else:
            page = Client(REMOTE_ADDR=address).post(
                "/password-reset/", {"email": "ada@example.org"}
            )
            assert page.status_code == 302
    refused = APIClient(REMOTE_ADDR="192.0.2.9").post(
        "/api/password-reset/", {"email": "Ada@Example.org"}
    )
    assert refused.status_code == 429 and "Retry-After" in refused
    page = Client(REMOTE_ADDR="192.0.2.10").post("/password-reset/", {"email": "ada@example.org"})
    assert page.status_code == 429 and "Request was throttled." in page.content.decode()
    assert _mailed() == 2 and len(mail.outbox) == 2
    # An address nobody has is counted alike: being refused says nothing of who has one.
    for _ in range(2):
        APIClient().post("/api/password-reset/", {"email": "nobody@example.org"})
    assert (
        APIClient().post("/api/password-reset/", {"email": "nobody@example.org"}).status_code == 429
    )
    # Another address has its own allowance.
    other = APIClient(REMOTE_ADDR="192.0.2.11").post(
        "/api/password-reset/", {"email": "grace@example.org"}
    )
    assert other.status_code == 200


def test_resets_are_throttled_per_client_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "password_reset", "2/hour")
    assert APIClient().post("/api/password-reset/", {"email": "a@example.org"}).status_code == 200
    assert Client().post("/password-reset/", {"email": "b@example.org"}).status_code == 302
    refused = APIClient().post("/api/password-reset/", {"email": "c@example.org"})
    assert refused.status_code == 429
    confirm = APIClient().post(
        "/api/password-reset/confirm/", {"uid": "MQ", "token": "x", "new_password": NEW_PASSWORD}
    )
    assert confirm.status_code == 429
    elsewhere = APIClient(REMOTE_ADDR="192.0.2.7")
    assert elsewhere.post("/api/password-reset/", {"email": "c@example.org"}).status_code == 200


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_the_reset_pages_speak_persian() -> None:
    persian = Client(HTTP_ACCEPT_LANGUAGE="fa")
    page = persian.get("/password-reset/").content.decode()
    assert '<html lang="fa" dir="rtl">' in page and "Choose a new password" not in page
    _user(email="ada@example.org")
    persian.post("/password-reset/", {"email": "ada@example.org"})
    _mailed()
    (message,) = mail.outbox  # in the language it was asked in, though a worker wrote it
    assert "Bidel" not in message.subject and _LINK.search(message.body)


# --- the settings -------------------------------------------------------------------------------


def test_mail_is_printed_in_the_demo_and_sent_by_smtp_in_production(tmp_path: Path) -> None:
    base: dict[str, str | None] = {name: None for name in SERVICE_VARIABLES}
    base.update({"BIDEL_VAR_DIR": str(tmp_path), "EMAIL_BACKEND": None})
    demo = settings_in_subprocess(child_env({**base, "DEBUG": "1"}), "EMAIL_BACKEND")
    assert demo["EMAIL_BACKEND"] == "django.core.mail.backends.console.EmailBackend"
    production = {
        **base,
        "DEBUG": "0",
        "SECRET_KEY": "x" * 50,
        "EMAIL_HOST": "smtp.example.org",
        "EMAIL_PORT": "587",
        "EMAIL_HOST_USER": "bidel",
        "EMAIL_HOST_PASSWORD": "secret",
        "EMAIL_USE_TLS": "1",
        "DEFAULT_FROM_EMAIL": "Bidel <noreply@example.org>",
        "API_TOKEN_DAYS": "30",
    }
    expected = {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "smtp.example.org",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "bidel",
        "EMAIL_HOST_PASSWORD": "secret",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
        "DEFAULT_FROM_EMAIL": "Bidel <noreply@example.org>",
        "API_TOKEN_DAYS": 30,
    }
    assert settings_in_subprocess(child_env(production), *expected) == expected


@pytest.mark.parametrize(
    ("variables", "said"),
    [
        ({"EMAIL_BACKEND": "smpt"}, "EMAIL_BACKEND='smpt' is neither one of"),
        ({"EMAIL_USE_TLS": "1", "EMAIL_USE_SSL": "1"}, "exclude each other"),
        ({"PASSWORD_RESET_EMAIL_RATE": "three"}, "is not a rate"),
        ({"API_TOKEN_DAYS": "0"}, "API_TOKEN_DAYS=0 must be at least 1"),
    ],
)
def test_a_mail_or_token_setting_that_cannot_work_stops_the_start(
    tmp_path: Path, variables: dict[str, str], said: str
) -> None:
    base: dict[str, str | None] = {name: None for name in SERVICE_VARIABLES}
    env = child_env({**base, "BIDEL_VAR_DIR": str(tmp_path), "DEBUG": "1", **variables})
    code = "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'hearts_platform.settings'"
    started = run_python(f"{code}; django.setup()", env)
    assert started.returncode != 0 and said in started.stderr, started.stderr


def test_the_new_endpoints_are_in_the_schema_with_the_one_error_shape() -> None:
    import yaml

    schema = yaml.safe_load(APIClient().get("/api/schema/").content)
    paths = schema["paths"]
    assert {"post"} <= set(paths["/api/token/renew/"])
    assert {"get", "delete"} <= set(paths["/api/tokens/"])
    assert {"delete"} <= set(paths["/api/tokens/{id}/"])
    assert {"post"} <= set(paths["/api/password-reset/"])
    assert {"post"} <= set(paths["/api/password-reset/confirm/"])
    assert "patch" in paths["/api/users/me/"]
    error = paths["/api/tokens/"]["get"]["responses"]["401"]["content"]["application/json"]
    assert error["schema"]["additionalProperties"] == {"type": "array", "items": {"type": "string"}}
    listed = schema["components"]["schemas"]["ApiToken"]["properties"]
    assert set(listed) == {
        "id",
        "name",
        "prefix",
        "created",
        "last_used",
        "expires",
        "ends_with_session",
    }


class HeldRelay(socketserver.ThreadingTCPServer):
    """An SMTP relay on 127.0.0.1 that greets nobody until :attr:`open` is set (a distant, busy
    or hung mail server, as production may meet): it keeps every message it is given."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        self.received: list[str] = []
        self.open = threading.Event()
        super().__init__(("127.0.0.1", 0), _Relay)


class _Relay(socketserver.StreamRequestHandler):
    server: HeldRelay

    def handle(self) -> None:
        self.server.open.wait(timeout=600)  # what a request must never wait for
        self.wfile.write(b"220 slow.example ESMTP\r\n")
        data: list[str] = []
        reading = False
        for raw in self.rfile:
            line = raw.decode(errors="replace").rstrip("\r\n")
            if reading:
                if line == ".":
                    reading = False
                    self.server.received.append("\n".join(data))
                    self.wfile.write(b"250 queued\r\n")
                else:
                    data.append(line)
                continue
            verb = line.split(" ", 1)[0].upper()
            if verb == "DATA":
                reading, data = True, []
                self.wfile.write(b"354 go on\r\n")
            elif verb == "QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            else:
                self.wfile.write(b"250 ok\r\n")


@pytest.mark.django_db(transaction=True)  # (the request's mail is queued once it commits)
def test_a_reset_answers_a_known_address_as_an_unknown_one_without_waiting_on_the_mail(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """At both doors, with a mail relay that answers nobody until the test lets it: a reset for
    an address that has an account is answered, as one for an address that has none, while the
    relay is held (a request that sent its mail would hang on it, then fail on the mail
    timeout), with the same answer; a worker sends the mails once the relay answers. So the
    time a reset takes says nothing of the address: the mail, the one slow part, is never in it."""
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "password_reset", "1000/hour")
    relay = HeldRelay()
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", relay.server_address[1]
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 60
    for n in range(5):
        _user(f"known{n}", email=f"known{n}@example.org")

    def ask(door: str, address: str) -> tuple[int, bytes]:
        if door == "api":
            answer = APIClient().post("/api/password-reset/", {"email": address})
            assert answer.status_code == 200, answer.content
            return answer.status_code, answer.content
        answer = Client().post("/password-reset/", {"email": address})
        assert answer.status_code == 302, answer.content
        return answer.status_code, answer["Location"].encode()

    try:
        for door in ("api", "page"):
            for n in range(5):
                known = ask(door, f"known{n}@example.org")
                assert ask(door, f"{door}-nobody{n}@example.org") == known
        assert relay.received == []  # nothing sent while answering
        relay.open.set()
        assert _mailed() == 20  # then a worker sends the five accounts' mails, at each door
        assert len(relay.received) == 10
        assert all("known" in message for message in relay.received)
    finally:
        relay.open.set()
        relay.shutdown()
        relay.server_close()
