"""The REST API as a new user meets it: sign up, token, bots, versions, ladders, matches —
and every bad request a clear 4xx with nothing stored half-way."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from arena import services
from arena.models import Bot, BotVersion, Ladder, LadderEntry, Match, MatchSeat, Tournament
from engine.record import verify
from tests.arena.live import synthetic_history

pytestmark = pytest.mark.django_db

GOOD = (
    b"from bots_sdk import Bot, lowest\n\n\nclass Good(Bot):\n"
    b"    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
    b"    def play(self, view):\n        return lowest(view.legal)\n"
)


def _signed_in(username: str = "ada") -> APIClient:
    client = APIClient()
    created = client.post("/api/users/", {"username": username, "password": "a long passphrase"})
    assert created.status_code == 201, created.json()
    assert "password" not in created.json()
    token = client.post(
        "/api/token/", {"username": username, "password": "a long passphrase"}
    ).json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def _upload(client: APIClient, bot: int, data: bytes = GOOD, name: str = "bot.py") -> Any:
    return client.post(
        f"/api/bots/{bot}/versions/", {"file": SimpleUploadedFile(name, data)}, format="multipart"
    )


def test_sign_up_create_bot_upload_and_read() -> None:
    client = _signed_in()
    bot = client.post("/api/bots/", {"name": "ada-bot", "description": "ducks"}).json()
    assert bot["owner"] == "ada" and bot["active_version"] is None
    uploaded = _upload(client, bot["id"])
    assert uploaded.status_code == 201 and uploaded.json()["number"] == 1
    assert uploaded.json()["status"] == "pending"
    services.version_validate(version_id=BotVersion.objects.get().pk)
    owner_view = client.get(f"/api/bots/{bot['id']}/versions/1/").json()
    assert owner_view["status"] == "active" and "validation match" in owner_view["validation_log"]
    public = APIClient().get(f"/api/bots/{bot['id']}/versions/1/").json()
    assert "validation_log" not in public
    assert APIClient().get(f"/api/bots/{bot['id']}/").json()["active_version"] == 1
    assert len(APIClient().get("/api/bots/").json()["results"]) == 1


def test_a_new_bot_enters_the_standard_ladder_with_its_first_active_version() -> None:
    client = _signed_in()
    bot = client.post("/api/bots/", {"name": "ada-bot"}).json()
    assert bot["join_ladders"] == ["standard"]  # the default
    assert not LadderEntry.objects.filter(bot_id=bot["id"]).exists()  # no code yet
    _upload(client, bot["id"])
    services.version_validate(version_id=BotVersion.objects.get().pk)
    log = client.get(f"/api/bots/{bot['id']}/versions/1/").json()["validation_log"]
    assert "entered the ladder(s): standard" in log
    standard = Ladder.objects.get(name="standard").pk  # (1 unless an earlier test flushed it)
    rankings = APIClient().get(f"/api/ladders/{standard}/rankings/").json()
    assert "ada-bot" in [row["bot"]["name"] for row in rankings], rankings
    # a second version changes nothing: one entry
    _upload(client, bot["id"])
    services.version_validate(version_id=BotVersion.objects.get(number=2).pk)
    assert LadderEntry.objects.filter(bot_id=bot["id"]).count() == 1


def test_a_bot_may_opt_out_of_joining_ladders_and_unknown_ladders_are_refused() -> None:
    client = _signed_in()
    bot = client.post("/api/bots/", {"name": "shy", "join_ladders": []}, format="json").json()
    assert bot["join_ladders"] == []
    _upload(client, bot["id"])
    services.version_validate(version_id=BotVersion.objects.get().pk)
    assert not LadderEntry.objects.filter(bot_id=bot["id"]).exists()
    bad = client.post("/api/bots/", {"name": "lost", "join_ladders": ["nowhere"]}, format="json")
    assert bad.status_code == 400 and "join_ladders" in bad.json(), bad.json()
    assert not Bot.objects.filter(name="lost").exists()


def test_challenge_match_record_and_logs() -> None:
    client = _signed_in()
    bot = client.post("/api/bots/", {"name": "ada-bot"}).json()
    _upload(client, bot["id"])
    services.version_validate(version_id=BotVersion.objects.get().pk)
    created = client.post(
        "/api/matches/",
        {"seats": [bot["id"], "low", "random", "heuristic"], "hands": 1},
        format="json",
    )
    assert created.status_code == 201, created.json()
    match_id = created.json()["id"]
    services.match_run(match_id=match_id)
    detail = APIClient().get(f"/api/matches/{match_id}/").json()
    assert detail["status"] == "finished" and detail["kind"] == "challenge"
    assert [s["bot"]["name"] for s in detail["seats"]] == ["ada-bot", "low", "random", "heuristic"]
    record = APIClient().get(f"/api/matches/{match_id}/record/").json()
    assert verify(record)["valid"]
    logs = client.get(f"/api/matches/{match_id}/logs/").json()
    assert [s["bot"] for s in logs["seats"]] == ["ada-bot"]
    assert _signed_in("eve").get(f"/api/matches/{match_id}/logs/").json()["seats"] == []
    assert APIClient().get(f"/api/matches/{match_id}/logs/").status_code == 401
    listed = APIClient().get("/api/matches/", {"kind": "challenge", "bot": bot["id"]}).json()
    assert [m["id"] for m in listed["results"]] == [match_id]


def test_ladder_entry_and_rankings() -> None:
    client = _signed_in()
    bot = client.post("/api/bots/", {"name": "ada-bot"}).json()
    ladder = Ladder.objects.get(name="standard")
    entered = client.post(f"/api/ladders/{ladder.pk}/entries/", {"bot": bot["id"]})
    assert entered.status_code == 201
    assert client.post(f"/api/ladders/{ladder.pk}/entries/", {"bot": bot["id"]}).status_code == 200
    other = _signed_in("eve")
    assert other.post(f"/api/ladders/{ladder.pk}/entries/", {"bot": bot["id"]}).status_code == 403
    ladder.hands, ladder.concurrency = 1, 2
    ladder.save()
    for match in services.ladder_fill(ladder=ladder):
        services.match_run(match_id=match.pk)
    services.ratings_recompute(ladder=ladder)
    rankings = APIClient().get(f"/api/ladders/{ladder.pk}/rankings/").json()
    rated = [r for r in rankings if r["rating"] is not None]
    sat = {s.entry_id for s in MatchSeat.objects.filter(match__ladder=ladder)}  # two tables
    assert [r["rank"] for r in rated] == list(range(1, len(rated) + 1)) and len(rated) == len(sat)
    for row in rated:
        assert {
            "rank",
            "bot",
            "version",
            "rating",
            "ci95",
            "live_elo",
            "matches",
            "provisional",
        } <= set(row)
        assert row["ci95"][0] <= row["rating"] <= row["ci95"][1]
    # ada-bot has no code yet, so has not played: listed last, not rated yet
    assert rankings[-1]["bot"]["name"] == "ada-bot"
    assert rankings[-1]["rank"] is None and rankings[-1]["ci95"] is None
    assert rankings[-1]["provisional"] is True and rankings[-1]["matches"] == 0


@pytest.mark.parametrize(
    ("method", "path", "payload", "code"),
    [
        ("post", "/api/users/", {"username": "x"}, 400),
        ("post", "/api/users/", {"username": "ok_name", "password": "short"}, 400),
        ("post", "/api/users/", {"username": "bad name!", "password": "a long passphrase"}, 400),
        ("post", "/api/token/", {"username": "nobody", "password": "wrong wrong"}, 400),
        ("post", "/api/bots/", {"name": "x"}, 401),
        ("get", "/api/bots/999/", None, 404),
        ("get", "/api/matches/", {"status": "weird"}, 400),
        ("get", "/api/matches/", {"ladder": "abc"}, 400),
        ("get", "/api/matches/999/record/", None, 404),
        ("post", "/api/matches/", {"seats": ["low"] * 4}, 401),
    ],
)
def test_bad_requests_are_clear_4xx(method: str, path: str, payload: Any, code: int) -> None:
    response = getattr(APIClient(), method)(path, payload, format="json")
    assert response.status_code == code, response.content
    assert response.json()  # a JSON body with a message


def test_bad_uploads_and_other_users_resources() -> None:
    client = _signed_in()
    bot = client.post("/api/bots/", {"name": "ada-bot"}).json()
    assert client.post("/api/bots/", {"name": "ada-bot"}).status_code == 400
    assert client.post("/api/bots/", {"name": "random"}).status_code == 400
    for data, name in [
        (b"", "bot.py"),
        (b"def (", "bot.py"),
        (b"MZ", "bot.exe"),
        (b"x" * (2 * 1024 * 1024), "bot.py"),
    ]:
        response = _upload(client, bot["id"], data, name)
        assert response.status_code == 400, (name, response.json())
    assert (
        client.post(f"/api/bots/{bot['id']}/versions/", {}, format="multipart").status_code == 400
    )
    assert BotVersion.objects.count() == 0  # nothing stored half-way
    eve = _signed_in("eve")
    assert _upload(eve, bot["id"]).status_code == 403
    bad_seats = client.post(
        "/api/matches/", {"seats": [bot["id"], "low", "low", "low"]}, format="json"
    )
    assert bad_seats.status_code == 400 and "no active version" in str(bad_seats.json())
    wrong = client.post("/api/matches/", {"seats": ["low"] * 3, "rules": "standard"}, format="json")
    assert wrong.status_code == 400 and "seat 4 players" in str(wrong.json())
    rules = client.post("/api/matches/", {"seats": ["low"] * 4, "rules": "nonsense"}, format="json")
    assert rules.status_code == 400 and "unknown preset" in str(rules.json())
    assert Match.objects.count() == 0 and Bot.objects.count() == 1


def test_schema_and_docs() -> None:
    schema = APIClient().get("/api/schema/")
    assert schema.status_code == 200 and b"/api/ladders/{id}/rankings/" in schema.content
    assert APIClient().get("/api/docs/").status_code == 200


def test_the_schema_is_json_or_yaml_by_format_while_format_still_filters_tournaments() -> None:
    import json

    import yaml

    from arena.services import tournaments

    as_json = APIClient().get("/api/schema/", {"format": "json"})
    assert as_json.status_code == 200
    assert as_json["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert json.loads(as_json.content)["openapi"].startswith("3.")
    for query in ({"format": "yaml"}, {}):  # YAML is the default, as before
        as_yaml = APIClient().get("/api/schema/", query)
        assert as_yaml.status_code == 200 and not as_yaml.content.lstrip().startswith(b"{")
        assert yaml.safe_load(as_yaml.content)["openapi"] == json.loads(as_json.content)["openapi"]
    refused = APIClient().get("/api/schema/", {"format": "xml"})
    assert refused.status_code == 400 and list(yaml.safe_load(refused.content)) == ["format"]
    operation = json.loads(as_json.content)["paths"]["/api/schema/"]["get"]
    documented = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert documented["format"]["enum"] == ["json", "yaml"]

    robin = tournaments.tournament_create(
        name="Robin", format="round_robin", bots=["random", "low", "heuristic", "montecarlo"]
    )
    test = tournaments.tournament_create(
        name="Test", format="match_test", bots=["low", "heuristic"]
    )
    for name, expected in (("round_robin", [robin.pk]), ("match_test", [test.pk])):
        listed = APIClient().get("/api/tournaments/", {"format": name})
        assert listed.status_code == 200 and listed["Content-Type"] == "application/json"
        assert [t["id"] for t in listed.json()["results"]] == expected
    unknown = APIClient().get("/api/tournaments/", {"format": "json"})  # a filter here, too
    assert unknown.status_code == 400 and list(unknown.json()) == ["format"]


def test_rankings_query_count_does_not_grow_with_matches(django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    import random as stdlib_random

    ladder = Ladder.objects.get(name="standard")
    rng = stdlib_random.Random(1)
    client = APIClient()
    for total in (50, 500):
        synthetic_history(ladder, total, rng)
        services.ratings_recompute(ladder=ladder)
        with django_assert_max_num_queries(3):
            rankings = client.get(f"/api/ladders/{ladder.pk}/rankings/").json()
        played = [row["matches"] for row in rankings if row["matches"]]  # (four entries sit)
        assert len(rankings) == ladder.entries.count() and played == [total] * 4


def test_tournaments_through_the_api() -> None:
    from django.contrib.auth import get_user_model

    from arena.services import tournaments

    staff = _signed_in("boss")
    get_user_model().objects.filter(username="boss").update(is_staff=True)
    body = {
        "name": "Sunday cup",
        "format": "round_robin",
        "table_size": 4,
        "hands_per_table": 1,
        "bots": ["random", "low", "heuristic", "montecarlo"],
        "duplicate": True,
        "repeat": "0 18 * * 0",
    }
    assert _signed_in("pleb").post("/api/tournaments/", body, format="json").status_code == 403
    created = staff.post("/api/tournaments/", body, format="json")
    assert created.status_code == 201, created.json()
    tournament = created.json()
    assert tournament["status"] == "scheduled" and len(tournament["bots"]) == 4
    started = staff.post(f"/api/tournaments/{tournament['id']}/start/").json()
    assert started["status"] == "running" and started["progress"] == {"done": 0, "total": 4}
    for match in (
        APIClient().get("/api/matches/", {"tournament": tournament["id"]}).json()["results"]
    ):
        services.match_run(match_id=match["id"])
    tournaments.tournament_advance(tournament_id=tournament["id"])
    detail = APIClient().get(f"/api/tournaments/{tournament['id']}/").json()
    assert detail["status"] == "finished" and detail["progress"] == {"done": 4, "total": 4}
    standings = APIClient().get(f"/api/tournaments/{tournament['id']}/standings/").json()
    for row in standings:
        assert {
            "rank",
            "bot",
            "version",
            "points",
            "mean_points_per_hand",
            "ci95",
            "matches",
            "wins",
            "faults",
        } <= set(row)
    assert [r["rank"] for r in standings] == [1, 2, 3, 4]
    assert staff.post(f"/api/tournaments/{tournament['id']}/cancel/").json()["status"] == "finished"
    bad = staff.post("/api/tournaments/", {**body, "repeat": "someday"}, format="json")
    assert bad.status_code == 400 and "five fields" in str(bad.json())


def test_swagger_ui_is_served_by_us_with_no_outside_address(client: Any) -> None:
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
    assets = [part.split('"')[0] for part in html.split('src="')[1:]]
    assert assets and all(a.startswith("/static/") for a in assets), assets
    for asset in assets:  # among our static files (collectstatic serves them)
        assert finders.find(asset.removeprefix("/static/")), asset


def test_versions_are_paged_like_every_list_and_me_says_who_i_am() -> None:
    client = _signed_in()
    bot = client.post("/api/bots/", {"name": "ada-bot"}).json()
    for _ in range(3):
        assert _upload(client, bot["id"]).status_code == 201
    listed = APIClient().get(f"/api/bots/{bot['id']}/versions/").json()
    assert listed["count"] == 3 and [v["number"] for v in listed["results"]] == [1, 2, 3]
    me = client.get("/api/users/me/").json()
    assert me["username"] == "ada" and me["is_staff"] is False
    assert me["bots"] == [{"id": bot["id"], "name": "ada-bot"}]
    assert APIClient().get("/api/users/me/").status_code == 401


def test_seat_ranks_are_one_based_like_every_ranking() -> None:
    match = services.match_create(
        kind=Match.Kind.CHALLENGE,
        hands=1,
        seed=4,
        seats=[services.SeatSpec(builtin=n) for n in ("low", "random", "heuristic", "low")],
    )
    services.match_run(match_id=match.pk)
    seats = APIClient().get(f"/api/matches/{match.pk}/").json()["seats"]
    ranks = sorted(seat["rank"] for seat in seats)
    assert ranks[0] == 1 and ranks[-1] <= 4
    best = min(seats, key=lambda seat: seat["score"])
    assert best["rank"] == 1


def test_list_filters_are_in_the_schema_and_refuse_bad_values_in_the_one_error_shape() -> None:
    import yaml

    schema = yaml.safe_load(APIClient().get("/api/schema/").content)
    params = {p["name"] for p in schema["paths"]["/api/matches/"]["get"]["parameters"]}
    assert {"ladder", "bot", "version", "opponent", "status", "kind", "tournament"} <= params
    params = {p["name"] for p in schema["paths"]["/api/bots/"]["get"]["parameters"]}
    assert {"search", "owner"} <= params
    params = {p["name"] for p in schema["paths"]["/api/tournaments/"]["get"]["parameters"]}
    assert {"status", "format"} <= params
    bad = APIClient().get("/api/matches/", {"opponent": "x" * 65})  # (no name is so long)
    assert bad.status_code == 400 and list(bad.json()) == ["opponent"]
    for response in (
        bad,
        APIClient().get("/api/bots/999/"),
        APIClient().get("/api/users/me/"),
        APIClient().post("/api/users/", {"username": "x"}),
    ):
        body = response.json()
        assert body and all(
            isinstance(messages, list) and all(isinstance(m, str) for m in messages)
            for messages in body.values()
        ), body
    matches = APIClient().get("/api/matches/", {"opponent": "low", "kind": "challenge"})
    assert matches.status_code == 200


def test_matches_filter_by_a_bots_version_number_at_one_seat() -> None:
    bots = []
    for username in ("ada", "eve"):
        client = _signed_in(username)
        bot = client.post("/api/bots/", {"name": f"{username}-bot"}).json()
        for number in (1, 2):
            _upload(client, bot["id"])
            services.version_validate(
                version_id=BotVersion.objects.get(bot_id=bot["id"], number=number).pk
            )
        bots.append(bot["id"])
    ada, eve = bots

    def played(*numbers: tuple[int, int]) -> int:
        seats = [
            services.SeatSpec(version=BotVersion.objects.get(bot_id=bot, number=number))
            for bot, number in numbers
        ]
        match = services.match_create(
            kind=Match.Kind.CHALLENGE,
            hands=1,
            seed=3,
            seats=seats + [services.SeatSpec(builtin=b) for b in ("low", "random")],
        )
        assert services.match_run(match_id=match.pk).status == Match.Status.FINISHED
        return match.pk

    ada1_eve2, ada2_eve1, ada2 = (
        played((ada, 1), (eve, 2)),
        played((ada, 2), (eve, 1)),
        played((ada, 2), (ada, 2)),
    )

    def listed(**query: Any) -> list[int]:
        response = APIClient().get("/api/matches/", query)
        assert response.status_code == 200, response.json()
        return sorted(m["id"] for m in response.json()["results"])

    assert listed(bot=ada, version=1) == [ada1_eve2]
    # the bot and the number at one seat (eve's v2 beside ada's v1 is not ada's v2), and a
    # match once however many of its seats the version holds
    assert listed(bot=ada, version=2) == [ada2_eve1, ada2]
    assert listed(bot=eve, version=2) == [ada1_eve2]
    assert listed(bot=eve, version=1, opponent=ada) == [ada2_eve1]
    assert listed(bot=ada, version=3) == []
    assert listed(bot=ada) == [ada1_eve2, ada2_eve1, ada2]
    # a bot by its name as well as its id (any case); a name nobody has lists nothing
    assert listed(bot="ADA-bot", version=1) == [ada1_eve2]
    assert listed(bot="eve-bot", version=1, opponent="ada-bot") == [ada2_eve1]
    assert listed(bot="nobody") == [] and listed(opponent="nobody") == []
    alone = APIClient().get("/api/matches/", {"version": 1})
    assert alone.status_code == 400 and list(alone.json()) == ["version"]
    assert "bot" in alone.json()["version"][0]
    for bad in ("0", "x", " 1", "٣", "1" * 10):
        refused = APIClient().get("/api/matches/", {"bot": ada, "version": bad})
        assert refused.status_code == 400 and list(refused.json()) == ["version"], bad
    refused = APIClient().get("/api/matches/", {"bot": "x" * 65, "version": 1})
    assert refused.status_code == 400 and list(refused.json()) == ["bot"]


def test_a_form_encoded_challenge_takes_bot_ids_as_the_json_one_does() -> None:
    client = _signed_in()
    bot = client.post("/api/bots/", {"name": "ada-bot"}).json()
    _upload(client, bot["id"])
    services.version_validate(version_id=BotVersion.objects.get().pk)
    form = client.post(
        "/api/matches/", {"seats": [str(bot["id"]), "low", "random", "low"], "hands": 1}
    )
    assert form.status_code == 201, form.json()
    assert form.json()["seats"][0]["bot"] == {"id": bot["id"], "name": "ada-bot"}
    for first in ("0", "²", True):
        refused = client.post(
            "/api/matches/", {"seats": [first, "low", "low", "low"]}, format="json"
        )
        assert refused.status_code == 400 and refused.json()["seats"][0].startswith("item 1:")


def test_the_owner_edits_and_retires_a_bot_and_a_new_version_brings_it_back() -> None:
    client = _signed_in()
    bot = client.post("/api/bots/", {"name": "ada-bot", "description": "first"}).json()
    _upload(client, bot["id"])
    services.version_validate(version_id=BotVersion.objects.get().pk)
    change = {"description": "ducks low", "join_ladders": []}
    edited = client.patch(f"/api/bots/{bot['id']}/", change, format="json")
    assert edited.status_code == 200 and edited.json()["description"] == "ducks low"
    assert edited.json()["join_ladders"] == [] and edited.json()["name"] == "ada-bot"
    other = _signed_in("eve")
    assert other.patch(f"/api/bots/{bot['id']}/", {"description": "mine"}).status_code == 403
    assert other.delete(f"/api/bots/{bot['id']}/").status_code == 403
    assert client.put(f"/api/bots/{bot['id']}/", {"name": "x"}).status_code == 405
    assert client.delete(f"/api/bots/{bot['id']}/").status_code == 204
    retired = APIClient().get(f"/api/bots/{bot['id']}/").json()
    assert retired["retired_at"] and retired["active_version"] is None
    refused = client.post(
        "/api/matches/", {"seats": [bot["id"], "low", "low", "low"]}, format="json"
    )
    assert refused.status_code == 400 and "no active version" in refused.json()["seats"][0]
    assert "Retired by its owner" in APIClient().get(f"/bots/{bot['id']}/").content.decode()
    _upload(client, bot["id"])  # a new version: in use again
    services.version_validate(version_id=BotVersion.objects.get(number=2).pk)
    back = APIClient().get(f"/api/bots/{bot['id']}/").json()
    assert back["retired_at"] is None and back["active_version"] == 2


def test_a_tournament_with_bad_settings_is_a_400_naming_the_field() -> None:
    from django.contrib.auth import get_user_model

    staff = _signed_in("boss")
    get_user_model().objects.filter(username="boss").update(is_staff=True)
    body = {"name": "Test", "format": "match_test", "bots": ["low", "heuristic"]}
    for params, field in (
        ({"elo1": "lots"}, "params"),
        ({"alpha": 0.7}, "params"),
        ({"speed": 2}, "params"),
    ):
        refused = staff.post("/api/tournaments/", {**body, "params": params}, format="json")
        assert refused.status_code == 400 and field in refused.json(), refused.json()
    refused = staff.post(
        "/api/tournaments/",
        {
            **body,
            "format": "round_robin",
            "bots": ["low", "heuristic", "random", "montecarlo"],
            "params": {"elo1": 10},
        },
        format="json",
    )
    assert refused.status_code == 400 and "params" in refused.json()
    assert not Tournament.objects.exists()


def test_a_persons_seat_says_so_and_names_the_player_where_signed_in(every_kind) -> None:  # noqa: ANN001
    """A seat at a person's game (/play/) has neither a version nor a built-in: the API says
    who sat (``player``) and, for a signed-in player, their name."""
    seen = set()
    for key, match_id in every_kind.matches.items():
        detail = APIClient().get(f"/api/matches/{match_id}/").json()
        rows = {s.seat: s for s in MatchSeat.objects.filter(match_id=match_id)}
        for shown in detail["seats"]:
            row = rows[shown["seat"]]
            kind = "version" if row.version_id else "builtin" if row.builtin else "person"
            assert shown["player"] == kind, key
            if kind == "person":
                name = row.person.username if row.person_id else ""
                assert shown["bot"] == {"id": None, "name": name}, key
            seen.add(kind)
    assert seen == {"version", "builtin", "person"}
