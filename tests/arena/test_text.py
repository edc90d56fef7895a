"""Text a bot controls is clean before it is stored: NUL and lone surrogates in its stderr,
fault details and name never lose a result, never leave a version in ``validating``, and
never make a page or an API answer fail — on SQLite and on PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import DataError, transaction
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.test import APIClient

from arena import services
from arena.models import BotVersion, Ladder, Match, MatchSeat
from arena.text import REPLACEMENT, clean_json, clean_text
from bots_sdk.referee.runner import run_match
from bots_sdk.sandbox import SandboxUnavailable, default_launcher
from engine.record import verify
from tests.support import requires_postgres

DIRT = "nul:\x00 lone:\ud800 low:\udfff"
#: An uploaded bot that writes NUL and undecodable bytes to its stderr, calls itself by a dirty
#: name, and crashes with a dirty exception on its first decision.
HOSTILE = (
    b"import os\n"
    b"from bots_sdk import Bot, lowest\n\n\n"
    b"class Hostile(Bot):\n"
    b"    name = 'evil\\x00\\ud800'\n\n"
    b"    def pass_cards(self, view):\n"
    b"        os.write(2, b'stderr nul:\\x00 cesu:\\xed\\xa0\\x80 end\\n')\n"
    b"        raise ValueError('boom\\x00\\ud800')\n\n"
    b"    def play(self, view):\n"
    b"        return lowest(view.legal)\n"
)
GOOD = (
    b"from bots_sdk import Bot, lowest\n\n\nclass Good(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n        return lowest(view.legal)\n"
)


def _unsafe(text: str) -> bool:
    return "\x00" in text or any("\ud800" <= c <= "\udfff" for c in text)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# --- the pure guard --------------------------------------------------------------------------


def test_clean_text_replaces_nul_and_lone_surrogates_and_keeps_the_rest() -> None:
    assert clean_text(DIRT) == f"nul:{REPLACEMENT} lone:{REPLACEMENT} low:{REPLACEMENT}"
    assert clean_text("plain, بی‌دل ♥") == "plain, بی‌دل ♥"
    assert clean_text("\ud83d\ude00") == "😀"  # a split pair is joined, not replaced
    assert clean_text("\ude00\ud83d") == REPLACEMENT * 2  # reversed: two lone halves


def test_clean_json_cleans_every_string_keys_included() -> None:
    dirty = {"a\x00": [DIRT, {"b\ud800": ("c\x00", 1, 2.5, None, True)}], "ok": "ok"}
    cleaned = clean_json(dirty)
    assert cleaned == {
        f"a{REPLACEMENT}": [
            clean_text(DIRT),
            {f"b{REPLACEMENT}": [f"c{REPLACEMENT}", 1, 2.5, None, True]},
        ],
        "ok": "ok",
    }
    assert not any(_unsafe(s) for s in _strings(cleaned))


#: Text with what breaks storage mixed in (hypothesis leaves surrogates out by default).
TEXT = st.text(st.sampled_from(["\x00", "\ud800", "\udfff", "\ud83d", "\ude00", "a", "é", "♥"]))
JSON = st.recursive(
    TEXT | st.text() | st.integers() | st.none(),
    lambda inner: st.lists(inner) | st.dictionaries(TEXT, inner),
)


@given(JSON)
def test_cleaned_json_always_encodes_as_utf8(value: Any) -> None:
    import json

    cleaned = clean_json(value)
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")  # never raises
    assert "\x00" not in json.dumps(cleaned, ensure_ascii=False)
    assert clean_json(cleaned) == cleaned  # once is enough


# --- stored through the services -------------------------------------------------------------


@pytest.fixture(autouse=True)
def sandbox_or_unsafe(settings: Any) -> None:
    try:
        default_launcher()
    except SandboxUnavailable:
        settings.BIDEL_UNSAFE_NO_SANDBOX = True  # a development machine without a sandbox


@pytest.fixture
def world(db: None) -> dict[str, Any]:
    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    version = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD)
    services.version_validate(version_id=version.pk)
    return {"owner": owner, "bot": bot, "version": BotVersion.objects.get(pk=version.pk)}


def _dirty_result(match: Match) -> dict[str, Any]:
    """A real game record, with what a hostile bot could have put in its seat's extras."""
    result = (
        run_match(
            match.rules,
            seed=match.seed,
            bots=["low", "random", "heuristic", "low"],
            hands=match.hands,
        )
        .games[0]
        .to_dict()
    )
    seat = result["seats"][0]
    seat["bot"] = f"evil {DIRT}"
    seat["stderr"] = f"line one\n{DIRT}\n" * 3
    seat["faults"].append(
        {
            "class": "crash",
            "detail": f"ValueError: {DIRT}",
            "decision": "pass",
            "hand": 0,
            "play": None,
        }
    )
    seat[f"extra{DIRT}"] = {DIRT: [DIRT]}
    return result


def _every_view_answers(client: Client, api: APIClient, match: Match, world: dict) -> None:
    bot, ladder = world["bot"], Ladder.objects.get(name="standard")
    for url in ("/", f"/matches/{match.pk}/", f"/bots/{bot.pk}/", f"/ladders/{ladder.pk}/"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert "\x00" not in response.content.decode()
    for url in (
        "/api/matches/",
        f"/api/matches/{match.pk}/",
        f"/api/matches/{match.pk}/record/",
        f"/api/bots/{bot.pk}/",
        f"/api/bots/{bot.pk}/versions/",
        f"/api/ladders/{ladder.pk}/",
        f"/api/ladders/{ladder.pk}/rankings/",
    ):
        response = api.get(url)
        assert response.status_code == 200, url
        response.json()  # valid JSON, UTF-8


@pytest.mark.django_db
def test_a_result_with_nul_and_surrogates_is_stored_and_every_page_shows_it(world) -> None:  # type: ignore[no-untyped-def]
    seats = [services.SeatSpec(version=world["version"])] + [
        services.SeatSpec(builtin=b) for b in ("random", "heuristic", "low")
    ]
    match = services.match_create(kind=Match.Kind.CHALLENGE, seats=seats, hands=2)
    claimed = services.match_claim(match_id=match.pk)
    assert claimed is not None
    result = _dirty_result(claimed)
    assert services.match_finish(match_id=match.pk, attempt=claimed.attempts, result=result)
    stored = Match.objects.get(pk=match.pk)
    assert stored.status == Match.Status.FINISHED and verify(stored.record)["valid"]
    assert not any(_unsafe(s) for s in _strings(stored.record))
    seat = MatchSeat.objects.get(match=match, seat=0)
    assert not _unsafe(seat.stderr) and clean_text(DIRT) in seat.stderr
    assert seat.faults[-1]["detail"] == f"ValueError: {clean_text(DIRT)}"
    owner = Client()
    owner.force_login(world["owner"])
    owner_api = APIClient()
    owner_api.force_authenticate(world["owner"])
    _every_view_answers(owner, owner_api, stored, world)
    _every_view_answers(Client(), APIClient(), stored, world)
    logs = owner_api.get(f"/api/matches/{match.pk}/logs/").json()
    assert clean_text(DIRT) in logs["seats"][0]["stderr"]
    assert clean_text(DIRT) in owner.get(f"/matches/{match.pk}/").content.decode()


@pytest.mark.django_db
def test_a_platform_error_with_nul_is_stored(world) -> None:  # type: ignore[no-untyped-def]
    match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(builtin="low")] * 4, hands=1
    )
    services.match_claim(match_id=match.pk)
    services.match_attempt_failed(match_id=match.pk, attempt=1, error=f"RuntimeError({DIRT!s})")
    match.refresh_from_db()
    assert match.status == Match.Status.QUEUED and not _unsafe(match.error)


@pytest.mark.django_db
def test_an_uploaded_bot_writing_nul_is_rejected_with_a_clean_log_and_plays_clean(world) -> None:  # type: ignore[no-untyped-def]
    owner, bot = world["owner"], world["bot"]
    hostile = services.version_upload(bot=bot, user=owner, filename="bot.py", data=HOSTILE)
    rejected = services.version_validate(version_id=hostile.pk)
    assert rejected.status == BotVersion.Status.REJECTED  # ended: not stuck in validating
    assert "crash" in rejected.validation_log and not _unsafe(rejected.validation_log)
    owner_api = APIClient()
    owner_api.force_authenticate(owner)
    shown = owner_api.get(f"/api/bots/{bot.pk}/versions/{rejected.number}/")
    assert shown.status_code == 200 and "crash" in shown.json()["validation_log"]
    # The same code in a real match (the hostile version seated directly): stored, shown.
    seats = [services.SeatSpec(version=rejected)] + [
        services.SeatSpec(builtin=b) for b in ("random", "heuristic", "low")
    ]
    match = services.match_create(kind=Match.Kind.CHALLENGE, seats=seats, hands=1)
    finished = services.match_run(match_id=match.pk)
    assert finished is not None and finished.status == Match.Status.FINISHED
    seat = finished.seats.get(seat=0)
    assert seat.faults and "stderr nul" in seat.stderr
    assert not any(_unsafe(s) for s in [seat.stderr, *_strings(seat.faults)])
    owner_web = Client()
    owner_web.force_login(owner)
    _every_view_answers(owner_web, owner_api, finished, world)


@requires_postgres
@pytest.mark.django_db
def test_postgres_refuses_what_the_guard_replaces(world) -> None:  # type: ignore[no-untyped-def]
    """Why the guard exists: PostgreSQL will not store U+0000, in text or in jsonb."""
    match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(builtin="low")] * 4, hands=1
    )
    for field, value in (("record", {"stderr": "a\x00b"}), ("error", "a\x00b")):
        with pytest.raises((DataError, ValueError)), transaction.atomic():
            Match.objects.filter(pk=match.pk).update(**{field: value})
    Match.objects.filter(pk=match.pk).update(
        record=clean_json({"stderr": "a\x00b"}), error=clean_text("a\x00b")
    )


@pytest.mark.django_db
def test_an_error_echoing_a_lone_surrogate_is_a_400_not_a_500() -> None:
    """DRF repeats a refused choice in its message; UTF-8 cannot carry the surrogate."""
    import json

    staff = services.user_create(username="boss", password="a long passphrase")
    staff.is_staff = True
    staff.save()
    client = APIClient()
    client.force_authenticate(staff)
    body = json.dumps({"name": "cup", "format": "\ud800", "bots": ["low", "random"]})
    response = client.post("/api/tournaments/", body, content_type="application/json")
    assert response.status_code == 400
    assert REPLACEMENT in response.json()["format"][0]
    seats = json.dumps({"seats": ["\ud800\x00", "low", "low", "low"], "rules": {"\ud800": 1}})
    user = APIClient()
    user.force_authenticate(staff)
    assert user.post("/api/matches/", seats, content_type="application/json").status_code == 400


@pytest.mark.skipif(
    django_settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql",
    reason="PostgreSQL never stored such rows (it refuses them): nothing to migrate",
)
@pytest.mark.django_db
def test_the_migration_cleans_rows_stored_before_the_guard() -> None:
    import importlib

    from django.apps import apps

    migration = importlib.import_module("arena.migrations.0005_clean_stored_text")
    match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(builtin="low")] * 4, hands=1
    )
    clean = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(builtin="low")] * 4, hands=1
    )
    # What SQLite kept when a write bypassed the guard: JSON with escaped NUL and surrogates.
    Match.objects.filter(pk=match.pk).update(record={"seats": [{"stderr": DIRT}], "ok": "😀"})
    Match.objects.filter(pk=clean.pk).update(record={"seats": [{"stderr": "fine"}]})
    MatchSeat.objects.filter(match=match, seat=0).update(faults=[{"detail": DIRT}])
    assert Client().get(f"/api/matches/{match.pk}/record/").status_code == 200  # the fallback
    migration.clean_stored_text(apps, None)
    match.refresh_from_db()
    assert match.record == {"seats": [{"stderr": clean_text(DIRT)}], "ok": "😀"}
    assert MatchSeat.objects.get(match=match, seat=0).faults == [{"detail": clean_text(DIRT)}]
    assert Match.objects.get(pk=clean.pk).record == {"seats": [{"stderr": "fine"}]}


@pytest.mark.django_db
@pytest.mark.parametrize("dirt", ["a\x00b", "\ud800", "x\udfff\x00"])
def test_names_looked_up_with_nul_or_a_lone_surrogate_find_nothing_and_fail_nothing(
    dirt: str,
) -> None:
    """A lookup by a name a person typed (a ladder to join, a bot to seat, a search) with
    text PostgreSQL refuses: no such name, a 4xx or an empty list, never a 500."""
    import json

    owner = services.user_create(username="ada", password="a long passphrase")
    api = APIClient()
    api.force_authenticate(owner)
    body = json.dumps({"name": "dirty", "join_ladders": [dirt]})
    created = api.post("/api/bots/", body, content_type="application/json")
    assert created.status_code == 400 and "join_ladders" in created.json()
    bot = services.bot_create(owner=owner, name="clean")
    patched = api.patch(
        f"/api/bots/{bot.pk}/",
        json.dumps({"join_ladders": [dirt]}),
        content_type="application/json",
    )
    assert patched.status_code == 400
    if any("\ud800" <= c <= "\udfff" for c in dirt):
        return  # (a form or a query string cannot carry a lone surrogate: Django decodes
        # undecodable bytes as U+FFFD)
    client = Client()
    client.force_login(owner)
    page = client.get("/bots/", {"q": dirt})
    assert page.status_code == 200 and "clean" not in page.content.decode()
    challenge = client.post(
        "/challenges/new/", {"seats": [dirt, "low", "low", "low"], "rules": "standard"}
    )
    assert challenge.status_code in (200, 400)  # the form again, with the seat refused
    assert not Match.objects.exists()
