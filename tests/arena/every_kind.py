"""A database that holds every kind of thing the arena's models allow, built through the
services (the engine plays every finished match): matches of every kind in every status; seats
of people (signed in, anonymous, and of a deleted account), of built-ins and of uploaded
versions, some faulted; versions pending, validating, active, retired, rejected, benched and
on trial; bots retired, disabled and without versions, and a deleted user's; ladders empty,
inactive and rated; tournaments of every format and status, one with no field; version
comparisons running, finished and failed; names in Persian and with markup everywhere a name
is shown.

Statuses no service leaves a match in for long (running) are what the services' own claims
make; the rows no service makes (a ladder, a tournament without entries, an account name the
sign-up form would refuse) are created as an operator would, through the models.

:func:`every_kind` is the module-scoped pytest fixture (``tests/arena/conftest.py`` exposes
it): the world is built once per test module in one transaction, rolled back after."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.test import override_settings
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from arena import services
from arena.models import (
    Analysis,
    Bot,
    BotVersion,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
    Tournament,
)
from arena.services import comparisons, people, tournaments
from bots_sdk.analysis import SAMPLES as ANALYSIS_SAMPLES
from bots_sdk.builtin import BUILTIN
from hearts_runner import live

PASSWORD = "a long passphrase"
PERSIAN = "بی‌دل"
SCRIPT = "<script>alert(1)</script>"
BREAKOUT = '"><b>x'

#: Ducks every trick; writes Persian and markup to stderr (its owner reads them on the pages).
DUCKER = f"""\
import sys
from bots_sdk import Bot, lowest


class Ducker(Bot):
    def pass_cards(self, view):
        return view.hand[-3:]

    def play(self, view):
        if len(view.hand) == 13:
            print({f"{PERSIAN} {SCRIPT} {BREAKOUT}"!r}, file=sys.stderr)
        return lowest(view.legal)
""".encode()
#: Another good version: passes its lowest cards instead.
DUCKER_2 = DUCKER.replace(b"view.hand[-3:]", b"view.hand[:3]")
#: Plays a card it does not hold at its first decision of every hand: a fault each hand.
FAULTY = b"""\
from bots_sdk import Bot, lowest


class Faulty(Bot):
    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        if len(view.hand) == 13:
            return next(c for c in ("2C", "3C", "4C", "5C") if c not in view.hand)
        return lowest(view.legal)
"""
#: Raises at its first play: a crash.
CRASHING = b"""\
from bots_sdk import Bot


class Crashing(Bot):
    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        raise RuntimeError("<b>boom</b> \\u0628\\u06cc\\u200c\\u062f\\u0644")
"""


@dataclass
class EveryKind:
    """What the world holds, by id: enough to name every page and API route of it."""

    owner: Any  #: owns the uploaded bots; played a person's game signed in (one still open)
    stranger: Any  #: signed in, owns nothing (a Persian username)
    staff: Any  #: staff and superuser
    seat_cookie: str  #: the seat secret of an anonymous visitor's open game
    bots: dict[str, int] = field(default_factory=dict)  #: name → id (the deleted user's too)
    versions: dict[int, list[int]] = field(default_factory=dict)  #: bot id → version numbers
    builtins_seated: list[str] = field(default_factory=list)
    matches: dict[str, int] = field(default_factory=dict)  #: "kind/status/what" → id
    ladders: list[int] = field(default_factory=list)
    tournaments: dict[str, int] = field(default_factory=dict)  #: "status/what" → id
    comparisons: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)  #: API token ids: whose → id
    reset: tuple[str, str] = ("", "")  #: the owner's password-reset link: uidb64, token
    gone_bot: int = 0  #: the bot of the deleted user (deleted with them)


def _version(
    bot: Bot, user: Any, code: bytes, *, validate: bool = True, activation: str = "now"
) -> BotVersion:
    version = services.version_upload(
        bot=bot, user=user, filename="bot.py", data=code, activation=activation
    )
    if validate:
        services.version_validate(version_id=version.pk)
    return BotVersion.objects.get(pk=version.pk)


def _finished_person_game(visitor: people.Visitor, opponents: list[Any], **rules: Any) -> Match:
    """A person's game played to its end: the person leaves before the first card (the page
    sends that), the runner's fallback plays their seat, and the record is the engine's."""
    match, token = people.human_game_open(visitor=visitor, opponents=opponents, **rules)
    live.shared_mailbox().put(token, live.LEAVE_MESSAGE)
    finished = services.match_run(match_id=match.pk)
    assert finished is not None and finished.status == Match.Status.FINISHED, finished
    return finished


def _running(match: Match) -> Match:
    """Claimed by a runner that has begun playing it (and is playing still)."""
    claimed = services.match_claim(match_id=match.pk, claim=services.new_claim())
    assert claimed is not None
    services.job_started(kind="match", ref=match.pk, claim=claimed.claim_token)
    return Match.objects.get(pk=match.pk)


def _failed(match: Match, error: str = f"<b>the sandbox</b> {PERSIAN} failed") -> Match:
    claimed = services.match_claim(match_id=match.pk, claim=services.new_claim())
    assert claimed is not None
    assert services.match_fail(match_id=match.pk, attempt=claimed.attempts, error=error)
    return Match.objects.get(pk=match.pk)


def _finished(match: Match) -> Match:
    played = services.match_run(match_id=match.pk)
    assert played is not None and played.status == Match.Status.FINISHED, played.error
    return played


def _each_status(world: EveryKind, kind: str, made: list[Match]) -> None:
    """Leave four matches of ``kind`` finished, running, failed and queued (in that order)."""
    assert len(made) >= 4, (kind, len(made))
    finished, running, failed, queued = made[:4]
    world.matches[f"{kind}/finished"] = _finished(finished).pk
    world.matches[f"{kind}/running"] = _running(running).pk
    world.matches[f"{kind}/failed"] = _failed(failed).pk
    world.matches[f"{kind}/queued"] = queued.pk


def standard_ladder() -> Ladder:
    """The `standard` ladder with the built-ins, as `migrate` makes it: a transactional test
    that ran earlier in the same worker flushed the tables, the migration's rows included."""
    ladder, _ = Ladder.objects.get_or_create(
        name="standard", defaults={"rules": "standard", "table_size": 4}
    )
    for name in sorted(BUILTIN):  # (migrations 0002 and 0026)
        LadderEntry.objects.get_or_create(ladder=ladder, builtin=name)
    return ladder


def build() -> EveryKind:
    """The world, through the services (call inside a transaction that is rolled back)."""
    User = get_user_model()
    owner = services.user_create(username="ada", password=PASSWORD, email="ada@example.com")
    stranger = services.user_create(username="دلارام", password=PASSWORD)
    staff = User.objects.create_superuser(username="staff", password=PASSWORD)
    # An account name the sign-up form refuses (made by an operator, or before the rule).
    marked = User.objects.create_user(username=f"{BREAKOUT}<i>{PERSIAN}</i>", password=PASSWORD)
    gone = services.user_create(username="gone", password=PASSWORD)
    world = EveryKind(owner=owner, stranger=stranger, staff=staff, seat_cookie="")
    low = [services.SeatSpec(builtin="low")]

    # --- ladders: the standard one (migrated), a Persian one, an empty one, an inactive one
    standard = standard_ladder()
    standard.hands, standard.concurrency = 1, 4
    standard.save()
    persian = Ladder.objects.create(name=f"{PERSIAN} <i>{BREAKOUT}</i>", hands=1, concurrency=2)
    services.ladder_add_builtins(ladder=persian)
    empty = Ladder.objects.create(name="خالی", hands=1)
    inactive = Ladder.objects.create(name=SCRIPT, active=False)
    services.ladder_add_builtins(ladder=inactive)
    world.ladders = [standard.pk, persian.pk, empty.pk, inactive.pk]

    # --- bots and versions of every status
    hero = services.bot_create(owner=owner, name=PERSIAN, description=f"{SCRIPT} {BREAKOUT}")
    v1 = _version(hero, owner, DUCKER)  # active, then retired by v2
    v2 = _version(hero, owner, DUCKER_2)  # active
    rejected = _version(hero, owner, FAULTY)  # rejected: its log says why
    scripted = services.bot_create(owner=owner, name=SCRIPT, description=PERSIAN)
    scripted_v1 = _version(scripted, owner, DUCKER)
    breakout = services.bot_create(owner=owner, name=BREAKOUT)
    breakout_v1 = _version(breakout, owner, DUCKER)
    crashing = services.bot_create(owner=owner, name="crashing", join_ladders=[])
    crashing_v1 = _version(crashing, owner, CRASHING)  # rejected
    bare = services.bot_create(owner=owner, name="no-versions")
    for bot in (hero, scripted, breakout):
        services.ladder_join(ladder=persian, bot=bot)
    v1.refresh_from_db()
    assert (v1.status, v2.status, rejected.status) == ("retired", "active", "rejected")

    # --- ladder matches, rated
    rng = random.Random(11)
    for ladder in (standard, persian):
        made = services.ladder_fill(ladder=ladder, rng=rng)
        if ladder == standard:
            _each_status(world, "ladder", made)
        else:
            for match in made:
                _finished(match)
        services.ratings_recompute(ladder=ladder)
    for match in services.ladder_fill(ladder=standard, rng=rng)[:2]:  # a second refit
        _finished(match)
    services.ratings_recompute(ladder=standard)

    # --- challenges: a faulted and a crashed seat, several rules
    bots_table = [services.SeatSpec(version=v) for v in (v2, scripted_v1, breakout_v1)]
    challenges = [
        services.match_create(
            kind=Match.Kind.CHALLENGE,
            seats=[services.SeatSpec(version=rejected), services.SeatSpec(version=crashing_v1)]
            + [services.SeatSpec(builtin="random"), services.SeatSpec(builtin="heuristic")],
            hands=1,
            seed=5,
            requested_by=owner,
        ),
        *(
            services.challenge_create(user=owner, seats=seats, rules=rules, hands=1)
            for seats, rules in (
                ([*bots_table, *low], "standard"),
                ([*bots_table, *low], "hokm_40"),
            )
        ),
        services.match_create(
            kind=Match.Kind.CHALLENGE, seats=[*bots_table, *low], hands=1, requested_by=gone
        ),
    ]
    _each_status(world, "challenge", challenges)
    six = [*bots_table, *[services.SeatSpec(builtin=b) for b in ("random", "low", "heuristic")]]
    cancellation = services.match_create(
        kind=Match.Kind.CHALLENGE,
        seats=six,
        rules={"preset": "cancellation", "players": 6},
        hands=1,
        requested_by=owner,
    )
    world.matches["challenge/finished/six seats"] = _finished(cancellation).pk
    levels = [services.SeatSpec(builtin=b) for b in ("strong-1", "strong-2", "strong-3", "strong")]
    strong = services.match_create(  # (the strength levels, queued: their pages list it)
        kind=Match.Kind.CHALLENGE, seats=levels, hands=1, requested_by=owner
    )
    world.matches["challenge/queued/the strength levels"] = strong.pk
    # --- analyses of its seats: one made, one waiting for a runner, one failed (the match
    # page shows them with the default samples; the others only through the API)
    analysed = world.matches["challenge/finished/six seats"]
    samples = ANALYSIS_SAMPLES
    made = services.analysis_request(user=owner, match_id=analysed, seat=0, samples=samples)
    services.analysis_run(analysis_id=made.pk)
    services.analysis_request(user=owner, match_id=analysed, seat=1, samples=samples)
    lost = services.analysis_request(user=None, match_id=analysed, seat=2, samples=samples)
    Analysis.objects.filter(pk=lost.pk).update(
        status=Analysis.Status.FAILED, error=f"<b>no runner</b> {PERSIAN}"
    )

    # --- validation matches (the kind exists; a version's validation is a job, not a row)
    validators = [services.SeatSpec(builtin=b) for b in services.VALIDATORS]
    _each_status(
        world,
        "validation",
        [
            services.match_create(
                kind=Match.Kind.VALIDATION,
                seats=[services.SeatSpec(version=v2), *validators],
                hands=services.VALIDATION_HANDS,
            )
            for _ in range(4)
        ],
    )

    # --- tournaments of every format and status
    finished_cup = tournaments.tournament_create(
        name=f"جام {PERSIAN}",
        format="round_robin",
        bots=["random", "low", "heuristic", hero.pk],
        hands_per_table=1,
        ladder=standard,
        created_by=staff,
    )
    tournaments.tournament_start(tournament_id=finished_cup.pk)
    for match in finished_cup.matches.all():
        _finished(match)
    tournaments.tournament_advance(tournament_id=finished_cup.pk)
    world.tournaments["finished/round robin"] = finished_cup.pk

    swiss = tournaments.tournament_create(
        name=f"{SCRIPT} cup",
        format="swiss",
        bots=["random", "low", "heuristic", hero.pk, scripted.pk, breakout.pk],
        rules="standard",
        table_size=3,
        hands_per_table=1,
        duplicate=True,
        repeat="0 12 * * 1",  # its next edition is scheduled when it starts
        created_by=gone,
    )
    tournaments.tournament_start(tournament_id=swiss.pk)
    _each_status(world, "tournament", list(swiss.matches.order_by("pk")))
    world.tournaments["running/swiss"] = swiss.pk
    edition = Tournament.objects.get(edition_of=swiss)
    world.tournaments["scheduled/next edition"] = edition.pk

    test = tournaments.tournament_create(
        name=BREAKOUT,
        format="match_test",
        bots=["low", "heuristic"],
        hands_per_table=1,
        params={"max_deals": 1},
    )
    tournaments.tournament_start(tournament_id=test.pk)
    for _ in range(5):
        for match in test.matches.filter(status=Match.Status.QUEUED):
            _finished(match)
        if tournaments.tournament_advance(tournament_id=test.pk).status != "running":
            break
    world.tournaments["finished/match test"] = test.pk

    world.tournaments["scheduled/soon"] = tournaments.tournament_create(
        name=f"{BREAKOUT} <i>جام</i>",
        format="round_robin",
        bots=["random", "low", "heuristic", scripted.pk],
        starts_at=timezone.now() + timedelta(days=3),
        created_by=owner,
    ).pk
    world.tournaments["scheduled/no start time"] = tournaments.tournament_create(
        name="no start time", format="swiss", bots=["random", "low", "heuristic", "montecarlo"]
    ).pk
    cancelled = tournaments.tournament_create(
        name=PERSIAN, format="round_robin", bots=["random", "low", "heuristic", "montecarlo"]
    )
    world.tournaments["cancelled"] = tournaments.tournament_cancel(tournament_id=cancelled.pk).pk
    failed = tournaments.tournament_create(
        name="failed", format="round_robin", bots=["random", "low", "heuristic", breakout.pk]
    )
    tournaments.tournament_start(tournament_id=failed.pk)
    tournaments.tournament_fail(tournament_id=failed.pk, reason=f"{SCRIPT} {PERSIAN}")
    world.tournaments["failed"] = failed.pk
    retiring = tournaments.tournament_create(
        name="cancelled at its start",
        format="round_robin",
        bots=["random", "low", "heuristic", scripted.pk],
    )
    # An operator's tournament with no field at all (no service makes one).
    world.tournaments["scheduled/no field"] = Tournament.objects.create(
        name="تهی", format="swiss"
    ).pk

    # --- version comparisons: finished, failed, running
    with override_settings(COMPARISON_DEALS_PER_ROUND=1, COMPARISON_MAX_ROUNDS=1):
        done = comparisons.comparison_start(older=v1, newer=v2)
        for match in done.matches.all():
            _finished(match)
        world.comparisons["finished"] = comparisons.comparison_advance(comparison_id=done.pk).pk
        broken = comparisons.comparison_start(older=v2, newer=v1)
        for match in broken.matches.all():
            _failed(match)
        world.comparisons["failed"] = comparisons.comparison_advance(comparison_id=broken.pk).pk
        running = comparisons.comparison_start(older=v1, newer=v2, requested_by=owner)
    _each_status(world, "comparison", list(running.matches.order_by("pk")))
    world.comparisons["running"] = running.pk

    # --- people's games: anonymous, signed in, a marked-up name, a deleted account's
    bots_opponents = [services.SeatSpec(version=v2), services.SeatSpec(builtin="heuristic")]
    opened = []
    for number, (user, opponents, rules) in enumerate(
        [
            (None, [*bots_opponents, *low], "hokm_40"),
            (owner, [*bots_opponents, *low], "standard"),
            (marked, [services.SeatSpec(builtin="montecarlo"), *low, *low], "persian"),
            (gone, [*low, *low, *low], "standard"),
        ]
    ):
        visitor = people.Visitor(user=user, address=f"203.0.113.{number + 1}")
        match = _finished_person_game(visitor, opponents, rules=rules, hands=1)
        opened.append(match)
    world.matches["human/finished"] = opened[0].pk
    world.matches["human/finished/signed in"] = opened[1].pk
    world.matches["human/finished/marked-up name"] = opened[2].pk
    world.matches["human/finished/deleted account"] = opened[3].pk
    left, _ = people.human_game_open(
        visitor=people.Visitor(address="203.0.113.20"), opponents=[*low, *low, *low]
    )
    people.human_game_leave(match_id=left.pk, token=left.seats.get(builtin="").human_token)
    world.matches["human/failed"] = left.pk
    queued, _ = people.human_game_open(
        visitor=people.Visitor(user=owner, address="203.0.113.21"),
        opponents=[*bots_opponents, *low],
    )
    world.matches["human/queued"] = queued.pk
    running_game, world.seat_cookie = people.human_game_open(
        visitor=people.Visitor(address="203.0.113.22"), opponents=[*low, *low, *low]
    )
    world.matches["human/running"] = _running(running_game).pk

    # --- a version benched (the one before restored), a candidate on trial
    keeper = services.bot_create(owner=owner, name="keeper", join_ladders=[])
    kept = _version(keeper, owner, DUCKER)
    faulting = _version(keeper, owner, DUCKER_2)
    # (benched as version_bench_check does after faulted ladder matches: its own test plays them)
    BotVersion.objects.filter(pk=faulting.pk).update(status=BotVersion.Status.BENCHED)
    BotVersion.objects.filter(pk=kept.pk).update(status=BotVersion.Status.ACTIVE)
    Bot.objects.filter(pk=keeper.pk).update(
        notice="v2 was benched: its seats faulted in 3 of its last 3 ladder matches; v1 plays again"
    )
    candidate = _version(keeper, owner, DUCKER_2, activation="if-not-weaker")
    assert candidate.status == BotVersion.Status.CANDIDATE
    comparisons.comparison_start(older=kept, newer=candidate, trial=True)

    # --- what happens later: a bot retired, one disabled, a tournament cancelled at its start
    services.bot_retire(bot=scripted, user=owner)
    Bot.objects.filter(pk=breakout.pk).update(disabled=True)  # the admin's action
    tournaments.tournament_start(tournament_id=retiring.pk)
    world.tournaments["cancelled/at its start"] = retiring.pk
    # A version waiting for its validation, and one being validated.
    _version(hero, owner, DUCKER, validate=False)
    services.version_dispatch(version_id=_version(hero, owner, DUCKER_2, validate=False).pk)

    # --- API tokens, a password-reset link
    world.tokens["owner"] = services.token_create(user=owner, name=f"{PERSIAN} {SCRIPT}")[0].pk
    revoked, _ = services.token_create(user=owner, name="old")
    services.token_revoke(token=revoked)
    world.tokens["owner/revoked"] = revoked.pk
    world.tokens["stranger"] = services.token_create(user=stranger, name=BREAKOUT)[0].pk
    world.reset = (
        urlsafe_base64_encode(force_bytes(owner.pk)),
        default_token_generator.make_token(owner),
    )

    # --- a deleted account: its bot goes with it (a bot whose versions played cannot: they
    # are protected by the seats); its games, challenges and tournaments stay, theirs no more.
    gone_bot = services.bot_create(owner=gone, name="gone-bot")
    _version(gone_bot, gone, DUCKER, validate=False)
    world.gone_bot = gone_bot.pk
    gone.delete()
    assert not Bot.objects.filter(pk=gone_bot.pk).exists()

    for bot in Bot.objects.all():
        world.bots[bot.name] = bot.pk
        world.versions[bot.pk] = list(bot.versions.values_list("number", flat=True))
    world.bots["gone-bot"] = gone_bot.pk
    world.versions[gone_bot.pk] = [1]
    world.builtins_seated = sorted(
        set(Match.objects.values_list("seats__builtin", flat=True)) - {"", None}
    )
    _check(world, bare)
    return world


def _check(world: EveryKind, bare: Bot) -> None:
    """The world holds what its docstring says."""
    statuses = set(Match.objects.values_list("kind", "status"))
    every = {(k, s) for k in Match.Kind.values for s in Match.Status.values}
    assert statuses == every, sorted(every - statuses)
    assert set(Tournament.objects.values_list("status", flat=True)) == set(Tournament.Status.values)
    assert set(Tournament.objects.values_list("format", flat=True)) >= {
        "round_robin",
        "swiss",
        "match_test",
    }
    assert set(BotVersion.objects.values_list("status", flat=True)) == set(BotVersion.Status.values)
    assert set(world.comparisons) == {"finished", "failed", "running"}
    assert set(Analysis.objects.values_list("status", flat=True)) == set(Analysis.Status.values)
    assert set(world.builtins_seated) == set(BUILTIN)
    assert not bare.versions.exists()
    assert LadderEntry.objects.filter(ladder_id=world.ladders[2]).count() == 0
    seats = Match.objects.filter(kind=Match.Kind.HUMAN).values_list(
        "seats__person", "seats__human_token"
    )
    assert any(token and person is None for person, token in seats)  # anonymous, or gone
    assert any(token and person is not None for person, token in seats)
    faults = {f["class"] for row in MatchSeat.objects.values_list("faults", flat=True) for f in row}
    assert {"illegal", "timeout"} <= faults, faults


@pytest.fixture(scope="module")
def every_kind(django_db_setup: Any, django_db_blocker: Any) -> Iterator[EveryKind]:
    """:func:`build`'s world, once per test module, rolled back after it (each test that
    asks for the database runs in a savepoint within it)."""
    with django_db_blocker.unblock():
        with transaction.atomic():
            world = build()
            yield world
            transaction.set_rollback(True)
