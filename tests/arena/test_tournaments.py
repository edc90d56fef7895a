"""Tournaments: round robin, Swiss, duplicate and match tests, played on the real runner;
standings recomputable from the stored records; cancelling and repeating."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from arena import selectors, services
from arena.models import Match, Tournament
from arena.services import tournaments
from engine.record import replay

pytestmark = pytest.mark.django_db

BUILTINS = ["random", "low", "heuristic", "montecarlo"]


def _play_out(tournament: Tournament, limit: int = 200) -> Tournament:
    """Be the worker: run every queued match and advance, until the tournament ends."""
    for _ in range(limit):
        for match_id in tournament.matches.filter(status=Match.Status.QUEUED).values_list(
            "pk", flat=True
        ):
            services.match_run(match_id=match_id)
        tournament = tournaments.tournament_advance(tournament_id=tournament.pk)
        if tournament.status != Tournament.Status.RUNNING:
            return tournament
    raise AssertionError("the tournament did not end")


def _standings_from_records(tournament: Tournament) -> dict[str, float]:
    """Points per entry label, recomputed from nothing but the stored game records."""
    points: dict[str, float] = {}
    for match in tournament.matches.filter(status=Match.Status.FINISHED):
        state = replay(match.record)
        for seat in match.seats.select_related("tournament_entry__bot"):
            scores = [h.scores[seat.seat] for h in state.history if not h.void]
            label = seat.tournament_entry.label  # type: ignore[union-attr]
            points[label] = points.get(label, 0) + sum(scores)
    return points


def test_round_robin_plays_all_rounds_and_standings_match_the_records() -> None:
    tournament = tournaments.tournament_create(
        name="rr",
        format="round_robin",
        bots=BUILTINS,
        table_size=3,
        hands_per_table=2,
    )
    assert tournament.rules == {"preset": "standard", "players": 3}
    tournaments.tournament_start(tournament_id=tournament.pk)
    tournament.refresh_from_db()
    assert tournament.status == "running" and tournament.current_round == 1 and tournament.rounds
    finished = _play_out(tournament)
    assert finished.status == "finished" and finished.current_round == finished.rounds
    rows = selectors.tournament_standings(finished)
    assert [r["rank"] for r in rows] == [1, 2, 3, 4]
    from_records = _standings_from_records(finished)
    assert {r["bot"]["name"]: r["points"] for r in rows} == from_records
    means = [r["mean_points_per_hand"] for r in rows]
    assert means == sorted(means)  # fewer points ranks higher
    for row in rows:
        assert row["ci95"][0] <= row["mean_points_per_hand"] <= row["ci95"][1] or row["hands"] < 2
    progress = selectors.tournament_progress(finished)
    assert progress["done"] == progress["total"] > 0


def test_duplicate_tables_replay_the_same_deals_in_every_rotation() -> None:
    tournament = tournaments.tournament_create(
        name="dup",
        format="round_robin",
        bots=BUILTINS,
        table_size=4,
        hands_per_table=2,
        duplicate=True,
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    finished = _play_out(tournament)
    by_table: dict[tuple[int, int], list[Match]] = {}
    for match in finished.matches.all():
        by_table.setdefault((match.round, match.table), []).append(match)
    for matches in by_table.values():
        assert sorted(m.rotation for m in matches) == [0, 1, 2, 3]
        assert len({m.seed for m in matches}) == 1
        deals = [[h["deal"] for h in m.record["hands"]] for m in matches]
        assert all(d == deals[0] for d in deals)
        seatings = {tuple(s.tournament_entry_id for s in m.seats.order_by("seat")) for m in matches}
        assert len(seatings) == 4  # every entry sat in every seat


@pytest.fixture
def uploaded(settings) -> list[int]:  # type: ignore[no-untyped-def]
    from pathlib import Path

    from bots_sdk.sandbox import SandboxUnavailable, default_launcher

    try:
        default_launcher()
    except SandboxUnavailable:
        settings.BIDEL_UNSAFE_NO_SANDBOX = True
    examples = Path(__file__).resolve().parents[2] / "bots_sdk" / "examples"
    owner = services.user_create(username="ada", password="a long passphrase")
    ids = []
    for name in ("ducker", "dumper"):
        bot = services.bot_create(owner=owner, name=name)
        data = (examples / f"{name}.py").read_bytes()
        version = services.version_upload(bot=bot, user=owner, filename=f"{name}.py", data=data)
        services.version_validate(version_id=version.pk)
        ids.append(bot.pk)
    return ids


def test_swiss_rounds_advance_and_cancel_stops_scheduling(uploaded: list[int]) -> None:
    field = [*BUILTINS, *uploaded]
    tournament = tournaments.tournament_create(
        name="swiss",
        format="swiss",
        bots=field,
        table_size=3,
        hands_per_table=1,
        rounds=3,
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    finished = _play_out(tournament)
    assert finished.current_round == 3 and finished.matches.count() == 6  # 2 tables a round
    tables = {
        (m.round, m.table): frozenset(s.tournament_entry_id for s in m.seats.all())
        for m in finished.matches.all()
    }
    assert len(set(tables.values())) == len(tables)  # no table repeated
    rows = selectors.tournament_standings(finished)
    assert {r["bot"]["name"] for r in rows} == {*BUILTINS, "ducker", "dumper"}
    assert all(r["version"] == 1 for r in rows if r["bot"]["id"])  # frozen at the start
    other = tournaments.tournament_create(
        name="stop", format="swiss", bots=field, table_size=3, hands_per_table=1
    )
    tournaments.tournament_start(tournament_id=other.pk)
    tournaments.tournament_cancel(tournament_id=other.pk)
    other.refresh_from_db()
    assert other.status == "cancelled"
    assert not other.matches.filter(status="queued").exists()
    assert tournaments.tournament_advance(tournament_id=other.pk).current_round == 1  # nothing new


def test_scheduled_start_and_the_next_edition() -> None:
    soon = timezone.now() - timedelta(seconds=1)
    tournament = tournaments.tournament_create(
        name="weekly",
        format="round_robin",
        bots=BUILTINS,
        table_size=4,
        hands_per_table=1,
        starts_at=soon,
        repeat="0 18 * * 0",
    )
    assert tournaments.tournaments_tick()["started"] == 1
    tournament.refresh_from_db()
    assert tournament.status == "running"
    edition = tournament.editions.get()
    assert edition.status == "scheduled" and edition.starts_at > soon
    assert edition.starts_at.isoweekday() == 7 and (
        edition.starts_at.hour,
        edition.starts_at.minute,
    ) == (18, 0)
    assert tournaments.tournaments_tick()["started"] == 0  # started once, once only


def test_bad_tournaments_are_refused() -> None:
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="cannot fill a table"):
        tournaments.tournament_create(
            name="x", format="round_robin", bots=["low", "random"], table_size=4
        )
    with pytest.raises(ValidationError, match="exactly two bots"):
        tournaments.tournament_create(name="x", format="match_test", bots=BUILTINS)
    with pytest.raises(ValidationError, match="five fields"):
        tournaments.tournament_create(
            name="x", format="swiss", bots=BUILTINS, repeat="every sunday"
        )
    with pytest.raises(ValidationError, match="neither a bot id nor a built-in"):
        tournaments.tournament_create(
            name="x", format="swiss", bots=["low", "low2", "random", "heuristic"]
        )


def test_match_test_stops_itself_with_the_right_verdict() -> None:
    tournament = tournaments.tournament_create(
        name="mc vs heuristic",
        format="match_test",
        bots=["heuristic", "montecarlo"],
        hands_per_table=4,
        games_per_table=2,
        params={"elo0": 0, "elo1": 100, "alpha": 0.05, "beta": 0.05, "max_deals": 400},
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    finished = _play_out(tournament)
    assert finished.verdict == "H1", selectors.match_test_result(finished)
    result = selectors.match_test_result(finished)
    assert result.llr >= result.upper and result.games < 400
    # in words: who, what was accepted, at which error rates, after how many deals
    assert finished.outcome.startswith(
        "montecarlo is stronger than heuristic: the SPRT accepted H1 (at least 100 Elo stronger) "
        "at α=0.05, β=0.05 after "
    ), finished.outcome
    assert f"after {result.games} deals" in finished.outcome
    # each bot holds two seats of every match, and played each match once
    standings = selectors.tournament_standings(finished)
    played = finished.matches.filter(status=Match.Status.FINISHED).count()
    assert [row["matches"] for row in standings] == [played, played]


def test_five_bots_at_tables_of_four_all_play_equally_often(settings) -> None:  # type: ignore[no-untyped-def]
    from arena.models import BotVersion

    settings.BIDEL_UNSAFE_NO_SANDBOX = True  # our own bot, unsandboxed: this is about rounds
    owner = services.user_create(username="ada", password="a long passphrase")
    bot = services.bot_create(owner=owner, name="ada-bot")
    code = (
        b"from bots_sdk import Bot\n\nclass B(Bot):\n    def play(self, view):\n"
        b"        return view.legal[0]\n\n    def pass_cards(self, view):\n"
        b"        return view.hand[:3]\n"
    )
    BotVersion.objects.create(
        bot=bot, number=1, filename="bot.py", code=code, sha256="0" * 64, status="active"
    )
    tournament = tournaments.tournament_create(
        name="five",
        format="round_robin",
        bots=[*BUILTINS, bot.pk],
        hands_per_table=1,
    )
    assert tournament.entries.count() == 5
    tournaments.tournament_start(tournament_id=tournament.pk)
    finished = _play_out(tournament)
    assert finished.status == Tournament.Status.FINISHED
    assert {row["matches"] for row in selectors.tournament_standings(finished)} == {4}


def test_settings_a_format_does_not_take_are_refused_with_the_field() -> None:
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        tournaments.tournament_create(
            name="rr", format="round_robin", bots=BUILTINS, params={"elo1": 50}
        )
    assert "params" in refused.value.message_dict
    for params in ({"elo1": "lots"}, {"alpha": 0.7}, {"max_deals": 0}, {"speed": 1}):
        with pytest.raises(ValidationError) as refused:
            tournaments.tournament_create(
                name="mt", format="match_test", bots=["low", "heuristic"], params=params
            )
        assert "params" in refused.value.message_dict
    assert not Tournament.objects.exists()


def test_a_tournament_that_cannot_advance_ends_failed_with_the_reason_and_the_tick_goes_on(
    client,  # type: ignore[no-untyped-def]
) -> None:
    broken = tournaments.tournament_create(
        name="broken", format="round_robin", bots=BUILTINS, hands_per_table=1
    )
    healthy = tournaments.tournament_create(
        name="healthy", format="round_robin", bots=BUILTINS, hands_per_table=1
    )
    for t in (broken, healthy):
        tournaments.tournament_start(tournament_id=t.pk)
    broken.refresh_from_db()
    # its stored plan names an entry that no longer exists: round 2 cannot be seated
    plan = [broken.plan[0], [["999999", *broken.plan[0][0][1:]]]]
    Tournament.objects.filter(pk=broken.pk).update(rounds=2, plan=plan)
    for match_id in Match.objects.filter(status=Match.Status.QUEUED).values_list("pk", flat=True):
        services.match_run(match_id=match_id)
    tournaments.tournaments_tick()  # raises for neither
    broken.refresh_from_db()
    assert broken.status == Tournament.Status.FAILED
    assert broken.outcome.startswith("failed: could not plan its next round: KeyError")
    healthy.refresh_from_db()
    assert healthy.status == Tournament.Status.FINISHED
    page = client.get(f"/tournaments/{broken.pk}/").content.decode()
    assert "Failed: could not plan its next round" in page
    assert client.get(f"/api/tournaments/{broken.pk}/").json()["status"] == "failed"
    tournaments.tournaments_tick()  # a failed tournament is left alone
    broken.refresh_from_db()
    assert broken.status == Tournament.Status.FAILED


def test_tables_of_another_size_keep_every_rule_chosen() -> None:
    from engine.rules import RuleSet

    tournament = tournaments.tournament_create(
        name="three",
        format="round_robin",
        table_size=3,
        bots=BUILTINS,
        rules={"preset": "standard", "target": 50, "jd_bonus": -10},
    )
    rules = RuleSet.from_spec(tournament.rules)
    assert (rules.players, rules.target, rules.jd_bonus) == (3, 50, -10)
    assert tournament.rules == {"preset": "standard", "players": 3, "target": 50, "jd_bonus": -10}


def test_an_entry_or_seat_is_a_bot_or_a_builtin_never_both_nor_neither() -> None:
    from django.db import IntegrityError, transaction

    from arena.models import MatchSeat, TournamentEntry

    tournament = tournaments.tournament_create(
        name="t", format="round_robin", bots=["low", "random", "heuristic"], table_size=3
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        TournamentEntry.objects.create(tournament=tournament)  # neither
    match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=[services.SeatSpec(builtin="low")] * 4, hands=1, seed=1
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        MatchSeat.objects.create(match=match, seat=9)  # neither a version nor a built-in
    assert tournament.entries.count() == 3 and match.seats.count() == 4
