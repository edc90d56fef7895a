"""A tournament format is one class: this module adds one (king of the hill) and plays it end
to end in-process, on the real runner, through the same workflows and API as the others."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from arena import selectors
from arena.domain import formats
from arena.models import Match, MatchSeat, Tournament, TournamentEntry
from arena.services import tournaments
from tests.arena.test_tournaments import _play_out  # (being the worker, in-process)

pytestmark = pytest.mark.django_db


class KingOfTheHill(formats.TournamentFormat):
    """One table a round: the best of the standing so far sit at it; the first to win two
    tables is king and the tournament stops; at most five rounds."""

    name = "king_of_the_hill"
    label = "king of the hill"

    def start(self, tournament: Tournament, entries: Sequence[str], rng: Any) -> None:
        tournament.rounds = 5

    def tables(self, round: formats.Round) -> list[formats.Table]:
        order = list(round.standing) + [e for e in round.entries if e not in round.standing]
        return [order[: round.tournament.table_size]]

    def decide(
        self,
        tournament: Tournament,
        entries: Sequence[TournamentEntry],
        seats: Sequence[MatchSeat],
    ) -> formats.Ending | None:
        wins = Counter(seat.tournament_entry_id for seat in seats if seat.rank == 0)
        king = next((entry for entry in entries if wins[entry.pk] >= 2), None)
        return formats.Ending("king", f"{king.label} won two tables") if king else None

    def planned_matches(self, tournament: Tournament, entries: int, per_table: int) -> int:
        return 5 * per_table


@pytest.fixture
def king() -> Iterator[formats.TournamentFormat]:
    formats.register(KingOfTheHill)
    yield formats.get("king_of_the_hill")
    del formats.FORMATS["king_of_the_hill"]


def test_a_format_added_as_one_class_plays_to_its_own_end(king: Any) -> None:
    tournament = tournaments.tournament_create(
        name="hill",
        format="king_of_the_hill",
        bots=["random", "low", "heuristic", "montecarlo"],
        table_size=3,
        hands_per_table=2,
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    finished = _play_out(Tournament.objects.get(pk=tournament.pk))

    # Three seats, at most four rounds: someone wins a second table by round 4 at the latest.
    assert finished.status == "finished" and finished.verdict == "king"
    played = finished.matches.filter(status=Match.Status.FINISHED).order_by("round")
    assert [m.round for m in played] == list(range(1, finished.current_round + 1))
    assert 2 <= finished.current_round <= 4
    wins = Counter(
        MatchSeat.objects.filter(match__in=played, rank=0).values_list(
            "tournament_entry_id", flat=True
        )
    )
    # (a shared first place is a win for each: two entries may reach their second at once,
    # and the format crowns one of them)
    kings = [e for e in finished.entries.all() if wins[e.pk] >= 2]
    assert kings and all(wins[e.pk] == 2 for e in kings), wins
    assert finished.outcome in {f"{e.label} won two tables" for e in kings}
    # The hill keeps its best: round 1 seats the first three entries, and the fourth, never
    # seated, never gets a place in the standing that picks the next tables.
    seated = [{s.tournament_entry_id for s in m.seats.all()} for m in played]
    assert all(table == seated[0] for table in seated)
    assert seated[0] == set(finished.entries.order_by("pk").values_list("pk", flat=True)[:3])
    assert selectors.tournament_progress(finished) == {"done": len(played), "total": 5}
    rows = selectors.tournament_standings(finished)
    assert [row["rank"] for row in rows] == [1, 2, 3]
    assert {row["entry"] for row in rows} == seated[0]


def test_the_api_and_pages_offer_a_registered_format(king: Any, client: Any) -> None:
    staff = get_user_model().objects.create_user(
        "staff", password="a long passphrase", is_staff=True
    )
    api = APIClient()
    api.force_authenticate(staff)
    created = api.post(
        "/api/tournaments/",
        {
            "name": "hill",
            "format": "king_of_the_hill",
            "bots": ["random", "low", "heuristic"],
            "table_size": 3,
            "hands_per_table": 1,
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["format"] == "king_of_the_hill"
    listed = api.get("/api/tournaments/", {"format": "king_of_the_hill"}).json()
    assert [t["name"] for t in listed["results"]] == ["hill"]  # (?format= is the filter)
    assert api.get("/api/tournaments/", {"format": "swiss"}).json()["results"] == []
    page = client.get(f"/tournaments/{created.json()['id']}/")
    assert page.status_code == 200 and "king of the hill" in page.content.decode()


def test_an_unknown_format_is_refused_naming_those_there_are() -> None:
    with pytest.raises(Exception) as refused:
        tournaments.tournament_create(
            name="x", format="knockout", bots=["random", "low", "high"], table_size=3
        )
    assert "round_robin" in str(refused.value) and "match_test" in str(refused.value)
    assert not Tournament.objects.exists()
