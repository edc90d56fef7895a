"""Is version N of a bot stronger than version M? Both versions sit at the same table with
two built-ins, and every deal is played in every rotation of that table and again with the
two versions swapped (duplicate: each version plays each seat of each deal with the same
neighbours as the other), round after round of :data:`DEALS_PER_ROUND`
deals, until the sequential probability ratio test (``scheduling.sprt``, as ``match_test``)
decides or :data:`MAX_ROUNDS` rounds are spent. A deal's difference is what the newer
version took per hand minus what the older took, over the rotations: negative is better (a
Hearts point is a loss). Never rated.

Started by the platform when a version becomes active and the bot had one before
(:func:`comparison_start` from ``version_settle``), or by the owner between any two
of their versions that have been active (``POST /api/bots/{id}/comparisons/``,
``COMPARISONS_MAX_OPEN`` at once). The pure part, :func:`compare` and :func:`verdict`,
knows nothing of the database.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from arena.domain.scheduling import sprt
from arena.models import BotVersion, Comparison, Match, MatchSeat
from arena.services import policy
from arena.services.bots import VALIDATED, version_trial_end
from arena.services.matches import SeatSpec, match_create, new_seed
from bots_sdk.referee.stats import mean_ci

#: Deals a round plays (each in the four rotations: four matches of this many hands), and
#: rounds at most (the budget: 240 deals); the settings COMPARISON_DEALS_PER_ROUND and
#: COMPARISON_MAX_ROUNDS change them.
DEALS_PER_ROUND = 20
MAX_ROUNDS = 12
#: Who else sits at the table: two of the built-ins, the same in every rotation.
REFERENCES = ("heuristic", "low")
#: The test's hypotheses (Elo, as ``match_test``'s defaults) and error rates.
ELO0, ELO1, ALPHA, BETA = 0.0, 50.0, 0.05, 0.05
OPEN = [Match.Status.QUEUED, Match.Status.RUNNING]
T = TypeVar("T")


@dataclass(frozen=True)
class Result:
    """Where a comparison stands: ``deals`` complete (played in every rotation), the newer
    version's mean difference in points a hand with its 95% interval, and the test's state
    (``decision``: ``"H1"`` stronger, ``"H0"`` not stronger, ``""`` undecided)."""

    deals: int
    mean: float
    low: float
    high: float
    llr: float
    decision: str
    #: The reverse test (is the older version the stronger?) accepted: the newer is weaker.
    weaker: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare(seats: Iterable[tuple[int, int, str, Sequence[int]]], rotations: int) -> Result:
    """The comparison over finished tables, given as (seed, rotation, who, hand scores) per
    seat of the two versions (``who``: ``"newer"`` or ``"older"``). A deal counts once it
    has been played in all ``rotations``.

    >>> seats = [(1, r, who, [3, 10] if who == "newer" else [5, 13])
    ...          for r in range(4) for who in ("newer", "older")]
    >>> result = compare(seats, rotations=4)
    >>> result.deals, result.mean
    (2, -2.5)
    """
    taken: dict[tuple[int, int], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    played: dict[tuple[int, int], set[int]] = defaultdict(set)
    for seed, rotation, who, scores in seats:
        for hand, points in enumerate(scores):
            taken[(seed, hand)][who].append(points)
            played[(seed, hand)].add(rotation)
    differences, wins = [], []
    for deal in sorted(taken):
        if len(played[deal]) < rotations or not taken[deal]["newer"] or not taken[deal]["older"]:
            continue
        newer = statistics.fmean(taken[deal]["newer"])
        older = statistics.fmean(taken[deal]["older"])
        differences.append(newer - older)
        wins.append(1.0 if newer < older else 0.5 if newer == older else 0.0)
    mean, (low, high) = mean_ci(differences)
    test = sprt(wins, ELO0, ELO1, ALPHA, BETA)
    reverse = sprt([1.0 - win for win in wins], ELO0, ELO1, ALPHA, BETA)
    return Result(
        len(differences), mean, low, high, test.llr, test.verdict or "", reverse.verdict == "H1"
    )


def verdict(newer: str, older: str, result: Result, *, spent: bool) -> str:
    """What a comparison found, in words, then its numbers (``spent``: its budget of deals is
    used up). Points are bad in Hearts: the words say who takes more.

    >>> print(verdict("v3", "v2", Result(240, -0.8, -1.3, -0.3, 3.1, "H1"), spent=False))
    ... # doctest: +NORMALIZE_WHITESPACE
    v3 is stronger than v2: it takes 0.8 points a hand fewer (−0.8 points a hand [−1.3, −0.3]
    over 240 duplicate deals; SPRT accepted)
    >>> print(verdict("v3", "v2", Result(40, 7.9, 6.1, 9.7, -3.0, "H0", True), spent=False))
    ... # doctest: +NORMALIZE_WHITESPACE
    v3 is not stronger than v2: it takes 7.9 points a hand more, weaker (+7.9 points a hand
    [+6.1, +9.7] over 40 duplicate deals; SPRT accepted)
    >>> print(verdict("v3", "v2", Result(240, 0.1, -0.4, 0.6, 0.2, ""), spent=True))
    ... # doctest: +NORMALIZE_WHITESPACE
    no difference found between v3 and v2: it takes 0.1 points a hand more, within the noise
    (+0.1 points a hand [−0.4, +0.6] over 240 duplicate deals; the SPRT undecided within the
    budget)
    """
    numbers = (
        f"{_signed(result.mean)} points a hand [{_signed(result.low)}, {_signed(result.high)}] "
        f"over {result.deals} duplicate deals"
    )
    takes = _takes(result.mean)
    if result.decision == "H1":
        return f"{newer} is stronger than {older}: {takes} ({numbers}; SPRT accepted)"
    if result.decision == "H0":
        weaker = ", weaker" if result.weaker or result.low > 0 else ""
        return f"{newer} is not stronger than {older}: {takes}{weaker} ({numbers}; SPRT accepted)"
    if not spent:
        return f"comparing {newer} with {older}: {takes} so far ({numbers})"
    undecided = "95% interval; the SPRT undecided within the budget"
    if result.high < 0:
        return f"{newer} is stronger than {older}: {takes} ({numbers}; {undecided})"
    if result.low > 0:
        return f"{newer} is weaker than {older}: {takes} ({numbers}; {undecided})"
    return (
        f"no difference found between {newer} and {older}: {takes}, within the noise "
        f"({numbers}; the SPRT undecided within the budget)"
    )


def _takes(mean: float) -> str:
    """The newer version's points against the older's, in words (one decimal, as shown).

    >>> _takes(-0.84), _takes(7.9)
    ('it takes 0.8 points a hand fewer', 'it takes 7.9 points a hand more')
    >>> _takes(0.02)
    'it takes as many points'
    """
    shown = f"{abs(mean):.1f}"
    if shown == "0.0":
        return "it takes as many points"
    return f"it takes {shown} points a hand {'fewer' if mean < 0 else 'more'}"


def _signed(value: float) -> str:
    """A number as the verdict writes it: one decimal, a real minus sign, a plus for gains."""
    text = f"{abs(value):.1f}"
    return f"−{text}" if value < -0.05 else f"+{text}" if value > 0.05 else text


# --- the workflow ---------------------------------------------------------------------------


@transaction.atomic
def comparison_start(
    *, older: BotVersion, newer: BotVersion, requested_by: Any = None, trial: bool = False
) -> Comparison:
    """Compare two versions of one bot (the first round is queued at once). An owner's
    request is refused while ``COMPARISONS_MAX_OPEN`` of theirs are running. A ``trial``
    (the platform's, for a candidate: ``--activate if-not-weaker``) decides whether
    ``newer`` replaces ``older``: :func:`comparison_advance` ends it."""
    if older.bot_id != newer.bot_id:
        raise ValidationError({"versions": "compare two versions of the same bot"})
    policy.require_active(newer.bot, "versions")
    if older.pk == newer.pk:
        raise ValidationError({"versions": "compare two different versions"})
    for version in (older, newer):
        if version.status not in VALIDATED:
            raise ValidationError(
                {
                    "versions": f"v{version.number} has not passed its validation: it cannot "
                    "be compared"
                }
            )
    if trial and newer.status != BotVersion.Status.CANDIDATE:
        raise ValidationError({"versions": f"v{newer.number} is not a candidate: no trial"})
    if requested_by is None:  # the platform's, one per activation: the latest alone runs
        _supersede(newer)
    else:
        running = Comparison.objects.select_for_update().filter(
            requested_by=requested_by, status=Comparison.Status.RUNNING
        )
        allowed = settings.COMPARISONS_MAX_OPEN
        if len(running) >= allowed:
            raise ValidationError(
                {
                    "versions": f"you have {len(running)} comparison(s) running; at most "
                    f"{allowed} at once: wait for it to finish"
                }
            )
    comparison = Comparison.objects.create(
        bot_id=newer.bot_id,
        older=older,
        newer=newer,
        requested_by=requested_by,
        seed=new_seed(),
        trial=trial,
    )
    _round(comparison)
    return comparison


def _supersede(newer: BotVersion) -> int:
    """End the platform's running comparisons of ``newer``'s bot (an earlier activation's):
    their matches not yet begun go, those being played finish unheeded. How many ended."""
    stale = list(
        Comparison.objects.select_for_update().filter(
            bot_id=newer.bot_id, requested_by__isnull=True, status=Comparison.Status.RUNNING
        )
    )
    now_on = "is on trial" if newer.status == BotVersion.Status.CANDIDATE else "became active"
    for comparison in stale:
        comparison.matches.filter(status=Match.Status.QUEUED).delete()
        comparison.status = Comparison.Status.SUPERSEDED
        comparison.verdict = (
            f"no verdict: v{newer.number} {now_on} first (its comparison runs instead)"
        )
        comparison.finished_at = timezone.now()
        comparison.save(update_fields=["status", "verdict", "finished_at"])
        if comparison.trial and comparison.newer_id != newer.pk:
            version_trial_end(
                version_id=comparison.newer_id,
                promote=False,
                why=f"its trial ended without a verdict: v{newer.number} {now_on} first",
            )
    return len(stale)


def tables(newer: T, older: T, references: Sequence[T]) -> list[list[T]]:
    """A round's tables, one per :attr:`Match.rotation`: the table (newer, older, then the
    references) in each rotation, then the same with the two versions swapped — so that
    each version meets every deal from every seat with the same neighbours as the other
    (who passes to whom included), and identical code scores identically.

    >>> for table in tables("N", "O", ["h", "l"]):
    ...     print(" ".join(table))
    N O h l
    l N O h
    h l N O
    O h l N
    O N h l
    l O N h
    h l O N
    N h l O
    """
    made = []
    for first, second in ((newer, older), (older, newer)):
        table = [first, second, *references]
        made += [
            [table[(seat - r) % len(table)] for seat in range(len(table))]
            for r in range(len(table))
        ]
    return made


def _round(comparison: Comparison) -> None:
    """Queue the next round: its deals at every table of :func:`tables`."""
    seed = comparison.seed + comparison.rounds
    comparison.rounds += 1
    round_tables = tables(
        SeatSpec(version=comparison.newer),
        SeatSpec(version=comparison.older),
        [SeatSpec(builtin=name) for name in REFERENCES],
    )
    for rotation, seats in enumerate(round_tables):
        match_create(
            kind=Match.Kind.COMPARISON,
            seats=seats,
            hands=settings.COMPARISON_DEALS_PER_ROUND,
            seed=seed,
            comparison=comparison,
            round=comparison.rounds,
            rotation=rotation,
        )
    comparison.save(update_fields=["rounds"])


def comparison_advance(*, comparison_id: int) -> Comparison:
    """After a match of it ends: once its round is over, decide, or queue the next round.
    Harmless to repeat."""
    with transaction.atomic():
        comparison = Comparison.objects.select_for_update().get(pk=comparison_id)
        if comparison.status != Comparison.Status.RUNNING:
            return comparison
        if comparison.matches.filter(round=comparison.rounds, status__in=OPEN).exists():
            return comparison
        result = compare(_seats(comparison), rotations=2 * (2 + len(REFERENCES)))
        spent = comparison.rounds >= settings.COMPARISON_MAX_ROUNDS
        comparison.result = result.to_dict()
        names = (f"v{comparison.newer.number}", f"v{comparison.older.number}")
        comparison.verdict = verdict(*names, result, spent=spent)
        faulted = _faulted_hands(comparison) if comparison.trial else 0
        if faulted:  # a trial ends at its candidate's first faults
            comparison.verdict = (
                f"{names[0]} faulted {faulted} time(s): not made active ({comparison.verdict})"
            )
        if result.decision or spent or faulted or (comparison.trial and result.weaker):
            failed = comparison.matches.filter(status=Match.Status.FAILED).count()
            if result.deals == 0:
                comparison.status = Comparison.Status.FAILED
                comparison.verdict = (
                    f"no verdict: none of its {failed} matches could be played"
                    if failed
                    else "no verdict: no deal was played in every rotation"
                )
            else:
                comparison.status = Comparison.Status.FINISHED
            comparison.finished_at = timezone.now()
            if comparison.trial:
                _trial_end(comparison, result, faulted)
        else:
            _round(comparison)
        comparison.save(update_fields=["result", "verdict", "status", "finished_at", "rounds"])
        return comparison


def _trial_end(comparison: Comparison, result: Result, faulted: int) -> None:
    """A candidate's trial decided: it replaces the version it was compared with if it did
    not fault and the comparison did not find it weaker (the reverse test accepted, or its
    interval wholly above zero points a hand)."""
    newer, older = f"v{comparison.newer.number}", f"v{comparison.older.number}"
    if comparison.status == Comparison.Status.FAILED:
        promote, why = False, f"its trial could not be played ({comparison.verdict})"
    elif faulted:
        promote, why = False, f"it faulted {faulted} time(s) in its trial"
    elif result.weaker or result.low > 0:
        promote, why = False, f"it is weaker than {older} ({comparison.verdict})"
    else:
        promote, why = True, f"{newer} is not weaker than {older} ({comparison.verdict})"
    version_trial_end(version_id=comparison.newer_id, promote=promote, why=why)


def _faulted_hands(comparison: Comparison) -> int:
    """How many faults the newer version's seats have in the comparison's finished matches."""
    return sum(
        len(faults)
        for faults in MatchSeat.objects.filter(
            match__comparison=comparison,
            match__status=Match.Status.FINISHED,
            version_id=comparison.newer_id,
        ).values_list("faults", flat=True)
    )


def _seats(comparison: Comparison) -> list[tuple[int, int, str, Sequence[int]]]:
    """Each finished seat of the two versions: (seed, rotation, newer/older, hand scores)."""
    who = {comparison.newer_id: "newer", comparison.older_id: "older"}
    return [
        (seed, rotation, who[version], scores)
        for seed, rotation, version, scores in Match.objects.filter(
            comparison=comparison, status=Match.Status.FINISHED, seats__version__in=list(who)
        ).values_list("seed", "rotation", "seats__version", "seats__hand_scores")
    ]
