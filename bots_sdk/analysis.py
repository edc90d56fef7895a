"""Analysis of a played game, decision by decision, from one seat's information alone.

Each play of the seat that had a choice is valued again by the strong built-in's search
(:mod:`bots_sdk.search`) from the view the seat had then — its hand, what the table showed,
never the hidden hands: every legal card (cards no unseen card separates counted as one) is
played out on the same re-dealt samples, and the card played is set against the best. What it
lost is in points a hand (the seat's own points, as the samples expect them; a moon counts
through the others' points), with a 95% interval from the paired samples, and is marked as
chess marks a move: an inaccuracy, a mistake or a blunder (:data:`MARKS`). The random numbers
come from the view itself, so a decision is valued the same wherever, and whatever the hidden
cards were.

>>> from bots_sdk.referee.runner import run_match
>>> game = run_match("standard", 3, ["low", "random", "heuristic", "low"], hands=1).games[0]
>>> report = analyse_game(game.to_dict(), seat=1, samples=8)
>>> len(report.decisions) > 0, report.hands[0].decisions == len(report.decisions)
(True, True)
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Final

from bots_sdk.builtin.heuristic import HeuristicBot
from bots_sdk.builtin.strong import StrongBot, pass_candidates
from bots_sdk.protocol import PHASE_DECISIONS, clean_text
from bots_sdk.referee.jobs import JOB_VERSION, JobError, JobResult
from bots_sdk.referee.stats import mean_ci
from bots_sdk.reproduce import game_of
from bots_sdk.sampling import SamplingError, Simulation
from bots_sdk.search import (
    Deals,
    Rollout,
    choices,
    evaluate,
    evaluate_passes,
    moon_in_reach,
    pass_template,
    quick_pass,
)
from bots_sdk.view import View
from engine.cards import CARD_RANK, CARD_SUIT, CARD_TEXTS
from engine.rules import RulesError, RuleSet
from engine.state import GameState, Phase

#: Points a hand lost at one decision (the interval's middle) from which it is marked, the
#: gravest first: a blunder gives away about the queen's worth or a moon, a mistake a few
#: hearts, an inaccuracy one.
MARKS: Final = (("blunder", 4.0), ("mistake", 1.5), ("inaccuracy", 0.5))
#: Samples per decision unless told: every legal card played out on each.
SAMPLES: Final = 200
#: What the random numbers of a decision are drawn from, beside its view: a new analysis
#: method names itself anew, so reports made by different methods never pass for one another.
METHOD: Final = "strong-search-1"


@dataclass(frozen=True)
class Decision:
    """One decision analysed: where (hand and trick from 0, as in the record), the card played,
    the best card, each legal card's expected points (this seat's, a hand), the points the
    play lost against the best and that loss's 95% interval, and its mark ("" for none). A
    pass (``decision`` "pass", trick 0) names its cards joined by spaces, by suit and rank
    ("2C AH QS"), and values the passes worth weighing (:func:`analyse_pass`)."""

    hand: int
    trick: int
    played: str
    best: str
    expected: dict[str, float]
    lost: float
    interval: tuple[float, float]
    mark: str
    decision: str = "play"


@dataclass(frozen=True)
class HandTotals:
    """A hand's sums: decisions analysed, points lost, and how many of each mark."""

    hand: int
    decisions: int
    lost: float
    marks: dict[str, int]


@dataclass(frozen=True)
class Report:
    """A seat's analysis: its decisions, each hand's totals and the game's."""

    seat: int
    samples: int
    method: str
    decisions: tuple[Decision, ...]
    hands: tuple[HandTotals, ...]
    lost: float
    marks: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (what the API and ``bidel analyse --json`` give)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        """A report from :meth:`to_dict`'s data (the platform's, say); KeyError, TypeError or
        ValueError for data of another shape."""
        return cls(
            seat=int(data["seat"]),
            samples=int(data["samples"]),
            method=str(data["method"]),
            decisions=tuple(
                Decision(
                    hand=int(d["hand"]),
                    trick=int(d["trick"]),
                    played=str(d["played"]),
                    best=str(d["best"]),
                    expected={str(k): float(v) for k, v in d["expected"].items()},
                    lost=float(d["lost"]),
                    interval=(float(d["interval"][0]), float(d["interval"][1])),
                    mark=str(d["mark"]),
                    decision=str(d.get("decision", "play")),
                )
                for d in data["decisions"]
            ),
            hands=tuple(
                HandTotals(int(h["hand"]), int(h["decisions"]), float(h["lost"]), dict(h["marks"]))
                for h in data["hands"]
            ),
            lost=float(data["lost"]),
            marks=dict(data["marks"]),
        )


def mark_of(lost: float) -> str:
    """The mark of a decision that lost ``lost`` points a hand.

    >>> mark_of(13.0), mark_of(2.0), mark_of(0.6), mark_of(0.2)
    ('blunder', 'mistake', 'inaccuracy', '')
    """
    for name, threshold in MARKS:
        if lost >= threshold:
            return name
    return ""


def _rng_of(view: View, samples: int) -> random.Random:
    """Random numbers drawn from the view alone (and the method and sample count)."""
    text = json.dumps([METHOD, samples, view.to_dict()], sort_keys=True, default=str)
    return random.Random(hashlib.sha256(text.encode()).digest())


def _group(view: View, options: list[str]) -> dict[str, str]:
    """Each legal card's stand-in among ``options``: the option of its suit nearest below it
    (cards that no unseen card separates were merged into the lowest of them)."""
    stand_in: dict[str, str] = {}
    by_suit: dict[int, list[str]] = {}
    for option in options:
        by_suit.setdefault(CARD_SUIT[CARD_TEXTS.index(option)], []).append(option)
    for card in view.legal:
        index = CARD_TEXTS.index(card)
        if card in options:
            stand_in[card] = card
            continue
        rank = CARD_RANK[index]
        below = [
            o for o in by_suit.get(CARD_SUIT[index], []) if CARD_RANK[CARD_TEXTS.index(o)] < rank
        ]
        stand_in[card] = max(below, key=lambda o: CARD_RANK[CARD_TEXTS.index(o)], default=card)
    return stand_in


def analyse_view(view: View, played: str, samples: int = SAMPLES) -> Decision | None:
    """The play ``played`` at ``view`` set against every other legal card; None where there was
    no choice (one legal card, or only cards worth the same) or the view cannot be sampled."""
    if len(view.legal) < 2:
        return None
    options = choices(view)
    if len(options) < 2:
        return None
    rng = _rng_of(view, samples)
    try:
        deals = Deals(view, Simulation(view, rng).sample())
    except (SamplingError, ValueError):
        return None
    values = evaluate(view, options, deals, Rollout(view.rules), rng, samples, moon_in_reach(view))
    stand_in = _group(view, options)
    chosen = stand_in.get(played, played)
    return _decision(view, "play", len(view.tricks), played, chosen, options, values, stand_in)


def _pass_word(cards: list[str]) -> str:
    """A pass as one key: its cards by suit (clubs, diamonds, hearts, spades) and rank, joined
    by spaces, as a hand is shown.

    >>> _pass_word(["AS", "2C", "QS"])
    '2C QS AS'
    """
    return " ".join(sorted(cards, key=lambda c: ("CDHS".index(c[1]), "23456789TJQKA".index(c[0]))))


def analyse_pass(view: View, passed: list[str], samples: int = SAMPLES) -> Decision | None:
    """The pass ``passed`` at ``view`` set against the passes worth weighing (the strong
    built-in's candidates: the heuristic's most passable cards, three of the first six), each
    played out on the same re-dealt samples to the end of the hand, the other seats passing as
    the heuristic would; None where passes are not searched (a kitty, a second deck) or the
    view cannot be sampled."""
    rules = view.rules
    count = rules.pass_count
    if count == 0 or len(view.hand) <= count:
        return None
    rng = _rng_of(view, samples)
    template = pass_template(view, rng)
    if template is None:
        return None
    order = HeuristicBot(seed=0).pass_order(view)
    candidates = pass_candidates(order, count, StrongBot.pass_candidates)
    words = [_pass_word(c) for c in candidates]
    mine = _pass_word(list(passed))
    if mine not in words:
        candidates.append(list(passed))
        words.append(mine)
    try:
        values = evaluate_passes(view, candidates, template, Rollout(rules), rng, samples)
    except ValueError:
        return None
    return _decision(view, "pass", 0, mine, mine, words, values, {w: w for w in words})


def _decision(
    view: View,
    decision: str,
    trick: int,
    played: str,
    chosen: str,
    options: list[str],
    values: list[list[float]],
    shown: Mapping[str, str],
) -> Decision:
    """A decision's numbers from each option's paired values (relative: this seat's points
    minus the others' mean): ``played`` (valued as the option ``chosen``) against the best of
    ``options``, and the expected points of each key of ``shown`` (the option it stands for:
    a legal card and the card no unseen card separates it from, :func:`_group`)."""
    rules = view.rules
    scale = (rules.players - 1) / rules.players  # a relative value in the seat's own points
    means = [sum(v) / len(v) for v in values]
    best = min(range(len(options)), key=lambda k: means[k])
    index = options.index(chosen)
    paired = [(a - b) * scale for a, b in zip(values[index], values[best], strict=True)]
    lost, (low, high) = mean_ci(paired)
    total = rules.total_points
    own = {
        # the relative value back to the seat's own points: v = own - (total - own) / (n - 1)
        option: round(means[k] * scale + total / rules.players, 3)
        for k, option in enumerate(options)
    }
    return Decision(
        hand=view.hand_number,
        trick=trick,
        played=played,
        best=options[best],
        expected={key: own[option] for key, option in shown.items()},
        lost=max(0.0, lost),
        interval=(low, high),
        mark=mark_of(lost),
        decision=decision,
    )


def analyse_game(record: Mapping[str, Any], seat: int, samples: int = SAMPLES) -> Report:
    """Every play of ``seat`` in a game's record (``GameRecord.to_dict()``, or the first game of
    a match record) analysed from its own views: the decisions, each hand's totals and the
    game's."""
    game = game_of(record)
    rules = RuleSet.from_spec(game.get("rules", "standard"))
    if not 0 <= seat < rules.players:
        raise ValueError(f"these rules seat {rules.players}; there is no seat {seat + 1}")
    hands = game["hands"]
    first = hands[0] if hands else {}
    state = GameState(rules, game["seed"], deal=first.get("deal"), kitty=first.get("kitty"))
    decisions: list[Decision] = []
    for number, hand in enumerate(hands):
        if number > 0:
            state.next_hand(hand.get("deal"), hand.get("kitty"))
        plays = 0
        while state.phase not in (Phase.HAND_OVER, Phase.GAME_OVER):
            decision = PHASE_DECISIONS[state.phase.value]
            current = state.current
            if decision == "pass":
                if current == seat:
                    view = View.from_observation(state.observation(seat))
                    found = analyse_pass(view, hand["passes"][current], samples)
                    if found is not None:
                        decisions.append(found)
                for card in hand["passes"][current]:
                    state.apply(card, seat=current)
                continue
            if decision == "play":
                card = hand["plays"][plays]
                if current == seat:
                    view = View.from_observation(state.observation(seat))
                    found = analyse_view(view, card, samples)
                    if found is not None:
                        decisions.append(found)
                state.apply(card)
                plays += 1
                continue
            state.apply(hand[{"trump": "trump", "moon": "moon"}[decision]])
    totals = []
    for number in range(len(hands)):
        mine = [d for d in decisions if d.hand == number]
        totals.append(
            HandTotals(number, len(mine), round(sum(d.lost for d in mine), 3), _count(mine))
        )
    return Report(
        seat=seat,
        samples=samples,
        method=METHOD,
        decisions=tuple(decisions),
        hands=tuple(totals),
        lost=round(sum(d.lost for d in decisions), 3),
        marks=_count(decisions),
    )


def _count(decisions: list[Decision]) -> dict[str, int]:
    return {name: sum(1 for d in decisions if d.mark == name) for name, _ in MARKS}


def describe_report(report: Report, where: str) -> str:
    """The report for a person: a line per decision analysed (hand and trick from 1), the mark
    first where there is one, then each hand's and the game's totals.

    >>> one = Decision(0, 4, "QS", "3S", {"QS": 14.2, "3S": 1.1}, 13.1, (11.9, 14.3), "blunder")
    >>> hand = HandTotals(0, 1, 13.1, {"blunder": 1, "mistake": 0, "inaccuracy": 0})
    >>> print(describe_report(Report(1, 200, METHOD, (one,), (hand,), 13.1, hand.marks), "x"))
    x, seat 2: 1 decision analysed on 200 deals each (points a hand, lower is better)
      hand 1 trick 5: QS  blunder: lost 13.10 [11.90, 14.30]; best 3S (QS 14.20, 3S 1.10)
      hand 1: 1 decision, 13.10 points lost; 1 blunder
    game: 13.10 points lost; 1 blunder
    """
    lines = [
        f"{where}, seat {report.seat + 1}: {_decisions_said(len(report.decisions))} analysed "
        f"on {report.samples} deals each (points a hand, lower is better)"
    ]
    for d in report.decisions:
        mark = f"  {d.mark}:" if d.mark else ":"
        low, high = d.interval
        shown = _best_first(d)[: 4 if d.decision == "pass" else None]
        values = ", ".join(f"{card} {value:.2f}" for card, value in shown)
        at = "pass" if d.decision == "pass" else f"trick {d.trick + 1}"
        lines.append(
            f"  hand {d.hand + 1} {at}: {d.played}{mark} lost {d.lost:.2f} "
            f"[{low:.2f}, {high:.2f}]; best {d.best} ({values})"
        )
    for totals in report.hands:
        plays = _decisions_said(totals.decisions)
        lines.append(
            f"  hand {totals.hand + 1}: {plays}, {totals.lost:.2f} points lost"
            + _marks_said(totals.marks)
        )
    lines.append(f"game: {report.lost:.2f} points lost" + _marks_said(report.marks))
    return "\n".join(lines)


def _decisions_said(count: int) -> str:
    return f"{count} decision{'s' if count != 1 else ''}"


def _best_first(decision: Decision) -> list[tuple[str, float]]:
    """The played card and the best first, then the others by value."""
    rest = sorted(
        (
            item
            for item in decision.expected.items()
            if item[0] not in (decision.played, decision.best)
        ),
        key=lambda item: item[1],
    )
    first = [(decision.played, decision.expected[decision.played])]
    if decision.best != decision.played:
        first.append((decision.best, decision.expected[decision.best]))
    return first + rest[:3]


def _marks_said(marks: dict[str, int]) -> str:
    said = [f"{count} {name}{'s' if count != 1 else ''}" for name, count in marks.items() if count]
    return "; " + ", ".join(said) if said else ""


# --- the luck of the deal -----------------------------------------------------------------------

#: Playouts a deal's luck is averaged over unless told.
LUCK_SAMPLES: Final = 64


def deal_luck(
    rules: RuleSet,
    deal: list[list[str]],
    hand_number: int = 0,
    samples: int = LUCK_SAMPLES,
    kitty: list[str] | None = None,
) -> tuple[float, ...] | None:
    """Each seat's expected points from a deal as dealt, before anyone chose anything: every
    seat passing as the heuristic would and playing by strong's rollout policy with every hand
    in view, averaged over ``samples`` playouts (the policy's few random choices differ from
    one to the next; the random numbers come from the deal). What the cards alone gave each
    seat: set beside the points it took, a standing reads as luck and skill apart. None where
    the hand starts with a decision other than passing or playing (a hakem's trumps).

    >>> rules = RuleSet.from_preset("standard")
    >>> deal = [[r + s for r in "23456789TJQKA"] for s in "CDHS"]  # each seat a whole suit
    >>> luck = deal_luck(rules, deal, samples=8)
    >>> luck, sum(luck)  # the hearts and the spades are what their holders cannot pass off
    ((11.0, 0.0, 13.0, 2.0), 26.0)
    """
    text = json.dumps([METHOD, rules.to_spec(), deal, kitty, hand_number, samples], default=str)
    rng = random.Random(hashlib.sha256(text.encode()).digest())
    here = rules
    direction = rules.pass_direction(hand_number)
    if rules.pass_cycle != (direction,):
        here = rules.with_overrides(pass_cycle=[direction])
    start = GameState(here, None, deal=deal, kitty=kitty)
    count = rules.pass_count
    while start.phase is Phase.PASS:
        for index in quick_pass(here, start.hands[start.current], count):
            start.apply_index(index)
    if start.phase is not Phase.PLAY:
        return None
    rollout = Rollout(here)
    totals = [0.0] * rules.players
    for _ in range(samples):
        scores = rollout.finish(start.clone(), random.Random(rng.getrandbits(32)))
        for seat, score in enumerate(scores):
            totals[seat] += score
    return tuple(round(total / samples, 3) for total in totals)


# --- on the runners: analysis jobs, and a match's luck beside its result ---------------------

#: The most samples a decision may be analysed on (an analysis job's bound on a runner).
MAX_SAMPLES: Final = 2000


def match_luck(game: Mapping[str, Any]) -> list[list[float] | None] | None:
    """Each hand's luck of the deal (:func:`deal_luck`) from a game's record, a list per hand
    (None for a hand it does not value); None when the record cannot be read: luck is a
    reading beside a result, never a reason to lose one."""
    try:
        rules = RuleSet.from_spec(game["rules"])
        found: list[list[float] | None] = []
        for number, hand in enumerate(game["hands"]):
            luck = deal_luck(rules, hand["deal"], number, kitty=hand.get("kitty"))
            found.append(None if luck is None else list(luck))
    except Exception:  # noqa: BLE001 — see above: the game stands without it
        return None
    return found


def with_luck(result: JobResult) -> JobResult:
    """A match job's result with its luck of the deal (the runner's, and the platform's own
    in-process runs': one reading)."""
    if result.kind != "match" or not result.ok or result.game is None:
        return result
    return replace(result, luck=match_luck(result.game))


@dataclass(frozen=True)
class AnalysisJob:
    """A stored game's seat to analyse: the record as anyone may read it, the seat (from 0),
    the samples per decision; ``ref`` the platform's analysis id and ``claim`` its token, as
    a match job's (:mod:`bots_sdk.referee.jobs`)."""

    ref: int
    claim: str
    record: dict[str, Any]
    seat: int
    samples: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": JOB_VERSION,
            "kind": "analysis",
            "ref": self.ref,
            "claim": self.claim,
            "record": self.record,
            "seat": self.seat,
            "samples": self.samples,
        }

    @classmethod
    def from_dict(cls, data: Any) -> AnalysisJob:
        if not isinstance(data, dict) or data.get("version") != JOB_VERSION:
            raise JobError(f"not a version {JOB_VERSION} job")
        if data.get("kind") != "analysis" or not isinstance(data.get("record"), dict):
            raise JobError("not an analysis job")
        try:
            job = cls(
                ref=int(data["ref"]),
                claim=str(data["claim"]),
                record=data["record"],
                seat=int(data["seat"]),
                samples=int(data["samples"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise JobError(f"malformed job: {exc}") from None
        if not 2 <= job.samples <= MAX_SAMPLES:
            raise JobError(f"samples must be from 2 to {MAX_SAMPLES}, not {job.samples}")
        return job


def run_analysis(data: Any, runner: str = "") -> JobResult:
    """Analyse an analysis job's seat (:func:`analyse_game`). Never raises: a malformed job or
    a record that does not replay is a result saying why (``cause`` "job"); the runner's own
    failure is "platform".

    >>> job = {"version": JOB_VERSION, "kind": "analysis", "ref": 3, "record": {}}
    >>> run_analysis(job).error
    "malformed job: 'claim'"
    >>> run_analysis({**job, "claim": "t", "seat": 0, "samples": 8}).cause  # no game in it
    'job'
    """
    try:
        job = AnalysisJob.from_dict(data)
    except JobError as exc:
        ref, claim = _identity(data)
        return JobResult("analysis", ref, claim, False, cause="job", error=str(exc), runner=runner)

    def failed(cause: str, exc: Exception) -> JobResult:
        error = clean_text(f"{type(exc).__name__}: {exc}", 2000)
        return JobResult(
            "analysis", job.ref, job.claim, False, cause=cause, error=error, runner=runner
        )

    try:
        report = analyse_game(job.record, job.seat, samples=job.samples)
    except (RulesError, ValueError, KeyError, TypeError, IndexError) as exc:  # (RecordError too)
        return failed("job", exc)
    except Exception as exc:  # noqa: BLE001 — the runner's own failure, reported
        return failed("platform", exc)
    return JobResult("analysis", job.ref, job.claim, True, report=report.to_dict(), runner=runner)


def _identity(data: Any) -> tuple[int, str]:
    """The reference and claim of a job, as far as a malformed one says."""
    if not isinstance(data, dict):
        return 0, ""
    try:
        return int(data.get("ref", 0)), str(data.get("claim", ""))
    except (TypeError, ValueError):
        return 0, ""
