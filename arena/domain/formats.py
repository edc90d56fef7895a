"""Tournament formats: how each one checks its settings, plans its rounds, seats its tables
and decides that it is over. One class per format, registered by name; a new format is one
more class (:func:`register`) and nothing else changes.

A format works on the tournament row and on what :mod:`arena.services.tournaments` reads for it (the
entries, the standing so far, the tables already played, the finished seats): it makes no
query and no write of its own, so the workflows stay in one place and a format is easy to
test.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from arena.domain.scheduling import (
    SprtResult,
    default_swiss_rounds,
    round_robin_rounds,
    sprt,
    swiss_round,
)

if TYPE_CHECKING:
    from django.utils.functional import Promise

    from arena.domain.rows import Standing
    from arena.models import MatchSeat, Tournament, TournamentEntry

#: Entry ids (as text) seated at one table, in seat order.
Table = list[str]


@dataclass(frozen=True)
class Round:
    """What a format may look at to seat a round: the tournament, the round's number (from 1),
    the entries by id in entry order, the entries' standing so far (best first) and the tables
    played so far."""

    tournament: Tournament
    number: int
    entries: Sequence[str]
    standing: Sequence[str]
    history: Sequence[Sequence[str]]


@dataclass(frozen=True)
class Ending:
    """A format's decision to stop before its last round: a verdict and its explanation."""

    verdict: str
    outcome: str


class TournamentFormat:
    """The base of every format: a fixed number of rounds, every table a full one, no params.

    Override :meth:`start` (rounds and plan), :meth:`tables` (seating a round) and, when the
    format may end early or takes settings, :meth:`decide` and :meth:`check`.
    """

    #: The name in the API and the database.
    name: ClassVar[str]
    #: The name people read.
    label: ClassVar[str | Promise]
    #: True: every match of the format is played on duplicate deals, whatever was asked.
    always_duplicate: ClassVar[bool] = False
    #: The format's settings and their defaults (``params``); empty: it takes none.
    defaults: ClassVar[dict[str, Any]] = {}

    def check(self, *, entries: int, table_size: int, params: dict[str, Any]) -> dict[str, Any]:
        """The params to store, checked against the field; ValidationError when they or the
        field do not suit the format."""
        if entries < table_size:
            raise ValidationError({"bots": f"{entries} bots cannot fill a table of {table_size}"})
        if params:
            raise ValidationError({"params": f"a {self.name} tournament takes no params"})
        return {}

    def start(self, tournament: Tournament, entries: Sequence[str], rng: random.Random) -> None:
        """Set ``tournament.rounds`` (and ``plan`` if the format plans ahead); raise ValueError
        when the field cannot be planned."""
        raise NotImplementedError

    def tables(self, round: Round) -> list[Table]:
        """The tables of ``round`` (entry ids per table, in seat order)."""
        raise NotImplementedError

    def decide(
        self,
        tournament: Tournament,
        entries: Sequence[TournamentEntry],
        seats: Sequence[MatchSeat],
    ) -> Ending | None:
        """After a complete round, before the next, given the entries (in entry order) and
        every finished seat so far: an :class:`Ending` to stop now, None to go on (the
        tournament also ends after its last round)."""
        return None

    def planned_matches(self, tournament: Tournament, entries: int, per_table: int) -> int | None:
        """How many matches the whole tournament plays, with ``entries`` entries and
        ``per_table`` matches per table and round; None when it is not known in advance."""
        return None

    def standings(self, tournament: Tournament, rows: list[Standing]) -> list[Standing]:
        """The standings' rows in rank order (given: fewest points per hand first, then wins;
        :func:`arena.selectors.tournament_standings` numbers them after)."""
        return rows


FORMATS: dict[str, TournamentFormat] = {}
F = TypeVar("F", bound=type[TournamentFormat])


def register(cls: F) -> F:
    """Make a format available by its name (a class decorator)."""
    if not getattr(cls, "name", "") or len(cls.name) > 16:
        raise ValueError(f"{cls.__name__}: a format needs a name of at most 16 characters")
    FORMATS[cls.name] = cls()
    return cls


def get(name: str) -> TournamentFormat:
    """The format called ``name``; ValidationError (on ``format``) naming those there are."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValidationError({"format": f"one of {', '.join(FORMATS)}"}) from None


def choices() -> list[tuple[str, Any]]:
    """(name, label) of every format, for the model field and the API."""
    return [(name, fmt.label) for name, fmt in FORMATS.items()]


def label(name: str) -> str:
    """The readable name of format ``name`` (the name itself when it is unknown)."""
    fmt = FORMATS.get(name)
    return str(fmt.label) if fmt else name


@register
class RoundRobin(TournamentFormat):
    """Every bot meets every other equally often: a balanced schedule planned at the start."""

    name = "round_robin"
    label = _("round robin")

    def start(self, tournament: Tournament, entries: Sequence[str], rng: random.Random) -> None:
        try:
            tournament.plan = round_robin_rounds(list(entries), tournament.table_size, rng)
        except RuntimeError as exc:
            raise ValueError(str(exc)) from None
        tournament.rounds = len(tournament.plan)

    def tables(self, round: Round) -> list[Table]:
        return [list(table) for table in round.tournament.plan[round.number - 1]]

    def planned_matches(self, tournament: Tournament, entries: int, per_table: int) -> int | None:
        return sum(len(tables) for tables in tournament.plan) * per_table or None


@register
class Swiss(TournamentFormat):
    """Rounds of tables grouped by current standing, no repeat tables where avoidable."""

    name = "swiss"
    label = _("Swiss")

    def start(self, tournament: Tournament, entries: Sequence[str], rng: random.Random) -> None:
        tournament.rounds = tournament.rounds or default_swiss_rounds(
            len(entries), tournament.table_size
        )

    def tables(self, round: Round) -> list[Table]:
        order = list(round.standing) + [e for e in round.entries if e not in round.standing]
        rng = random.Random(round.tournament.pk * 1000 + round.number)
        return swiss_round(order, round.tournament.table_size, round.history, rng)

    def planned_matches(self, tournament: Tournament, entries: int, per_table: int) -> int | None:
        return (tournament.rounds or 0) * (entries // tournament.table_size) * per_table


#: The most deals a match test may play before it stops undecided.
MAX_DEALS = 10_000


@register
class MatchTest(TournamentFormat):
    """Two bots head to head on duplicate deals until the sequential probability ratio test
    decides whether the second is stronger than the first."""

    name = "match_test"
    label = _("match test")
    always_duplicate = True  # a paired test needs the same deals on both sides
    defaults = {"elo0": 0.0, "elo1": 50.0, "alpha": 0.05, "beta": 0.05, "max_deals": 400}

    def check(self, *, entries: int, table_size: int, params: dict[str, Any]) -> dict[str, Any]:
        if entries != 2:
            raise ValidationError({"bots": "a match test is between exactly two bots"})
        return {**self.defaults, **_sprt_params(params, self.defaults)}

    def start(self, tournament: Tournament, entries: Sequence[str], rng: random.Random) -> None:
        per_round = max(1, tournament.games_per_table)
        tournament.rounds = math.ceil(tournament.params["max_deals"] / per_round)

    def tables(self, round: Round) -> list[Table]:
        first, second = sorted(round.entries, key=int)
        return [[first if seat % 2 == 0 else second for seat in range(round.tournament.table_size)]]

    def decide(
        self,
        tournament: Tournament,
        entries: Sequence[TournamentEntry],
        seats: Sequence[MatchSeat],
    ) -> Ending | None:
        result = self.result(tournament, entries, seats)
        if not result.verdict and result.games < tournament.params["max_deals"]:
            return None
        return Ending(result.verdict or "undecided", self.outcome(tournament, entries, result))

    @staticmethod
    def result(
        tournament: Tournament, entries: Sequence[TournamentEntry], seats: Sequence[MatchSeat]
    ) -> SprtResult:
        """The SPRT over the deals played so far: per deal, 1 when the second entry scored
        fewer points per hand than the first across the rotations, 0.5 when equal, 0
        otherwise."""
        first, second = sorted(e.pk for e in entries)
        per_deal: dict[tuple[int, int], dict[int, list[int]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for seat in seats:
            for number, score in enumerate(seat.hand_scores):
                entry = seat.tournament_entry_id
                assert entry is not None  # every seat of a tournament match has its entry
                per_deal[(seat.match.seed, number)][entry].append(score)
        scores = []
        for deal in per_deal.values():
            a, b = statistics.fmean(deal[first]), statistics.fmean(deal[second])
            scores.append(1.0 if b < a else 0.5 if a == b else 0.0)
        p = tournament.params
        return sprt(scores, p["elo0"], p["elo1"], p["alpha"], p["beta"])

    @staticmethod
    def outcome(
        tournament: Tournament, entries: Sequence[TournamentEntry], result: SprtResult
    ) -> str:
        """The test's verdict in words: who is stronger, at what error rates, after how many
        deals, and the evidence (the log-likelihood ratio against its bounds)."""
        first, second = (e.label for e in sorted(entries, key=lambda e: e.pk))
        p = tournament.params
        rates = f"α={p['alpha']:g}, β={p['beta']:g}"
        evidence = (
            f"after {result.games} deals (log-likelihood ratio {result.llr:.2f}; "
            f"bounds {result.lower:.2f} and {result.upper:.2f})"
        )
        if result.verdict == "H1":
            return (
                f"{second} is stronger than {first}: the SPRT accepted H1 (at least "
                f"{p['elo1']:g} Elo stronger) at {rates} {evidence}"
            )
        if result.verdict == "H0":
            return (
                f"{second} is not stronger than {first} by more than {p['elo0']:g} Elo: the "
                f"SPRT accepted H0 at {rates} {evidence}"
            )
        return (
            f"undecided between {first} and {second}: the SPRT reached neither bound within "
            f"the {p['max_deals']} deals allowed {evidence}"
        )


def _sprt_params(params: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The SPRT's settings, checked: known names, finite numbers in range."""
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        known = ", ".join(defaults)
        raise ValidationError({"params": f"unknown setting {unknown[0]!r}; settings: {known}"})
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValidationError({"params": f"{name} must be a number"})
        if not math.isfinite(value) or abs(value) > 10_000:
            raise ValidationError({"params": f"{name} must be a finite number within ±10000"})
    for name in ("alpha", "beta"):
        if name in params and not 0 < params[name] < 0.5:
            raise ValidationError({"params": f"{name} must lie between 0 and 0.5"})
    if "max_deals" in params:
        deals = params["max_deals"]
        if deals != int(deals) or not 1 <= deals <= MAX_DEALS:
            raise ValidationError(
                {"params": f"max_deals must be a whole number from 1 to {MAX_DEALS}"}
            )
        params = {**params, "max_deals": int(deals)}
    return params
