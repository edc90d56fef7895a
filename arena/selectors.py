"""Reads of the arena: every query behind the API and the pages (query counts independent of
how many matches are stored). The views call these and nothing of the ORM (a layout test
checks it).

A lookup of what a URL names (``bot_get``, ``match_get``, …) raises :class:`~django.http.Http404`
when there is none (Django's ``get_object_or_404``: the same message in the pages and the API);
the others return a queryset (unevaluated, for a pager or a filter to narrow), a list, or None
for what may be missing."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from django.db.models import (
    Count,
    F,
    FloatField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Window,
)
from django.db.models.functions import Cast, Ceil, Lower, Mod, RowNumber
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone

from arena import tokens
from arena.domain import formats
from arena.domain.rows import NamedBot, Ranking, Standing
from arena.domain.scheduling import SprtResult, head_to_head, standings_order
from arena.models import (
    Analysis,
    ApiToken,
    Bot,
    BotVersion,
    Comparison,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
    Rating,
    RatingPoint,
    Tournament,
    TournamentEntry,
    VersionRating,
)
from arena.text import clean_text
from bots_sdk.analysis import METHOD as ANALYSIS_METHOD
from bots_sdk.ids import parse_id
from bots_sdk.referee.players import public_fault
from bots_sdk.referee.stats import mean_ci, points_floor


def active_version(bot_id: int) -> BotVersion | None:
    return (
        BotVersion.objects.filter(bot_id=bot_id, status=BotVersion.Status.ACTIVE)
        .order_by("-number")
        .first()
    )


#: A rating is provisional below this many matches or with a 95% interval wider than this.
PROVISIONAL_MATCHES = 10
PROVISIONAL_WIDTH = 400.0


def ladder_rankings(ladder: Ladder) -> list[Ranking]:
    """Every entry: those with a fitted rating first, best first (ties by live Elo, then
    name), ranked from 1; then those not rated yet (just entered: no refit since), with no
    rank, rating or interval. A bot's row is its active version's (``version``) at the rating
    of the version fitted (``rated_version``: the active one once it has played and been
    refit, an earlier one until then). ``provisional`` marks a rating on few matches, with a
    wide interval (:data:`PROVISIONAL_MATCHES`, :data:`PROVISIONAL_WIDTH`), or an earlier
    version's."""
    entries = (
        LadderEntry.objects.filter(ladder=ladder)
        .select_related("bot", "rating")
        .prefetch_related(
            Prefetch(
                "bot__versions",
                queryset=BotVersion.objects.filter(status=BotVersion.Status.ACTIVE).only(
                    "pk", "bot_id", "number"
                ),  # not the code: up to a MiB a bot
                to_attr="active_versions",
            )
        )
    )
    entries = list(entries)
    fitted = {
        pk: number
        for pk, number in BotVersion.objects.filter(
            pk__in=[e.rating.version_id for e in entries if getattr(e, "rating", None)]
        ).values_list("pk", "number")
    }
    rated, unrated = [], []
    for entry in entries:
        rating = getattr(entry, "rating", None)
        versions = getattr(entry.bot, "active_versions", []) if entry.bot else []
        active = versions[0].number if versions else None
        row = Ranking(
            rank=None,
            bot=NamedBot(entry.bot_id, entry.label),
            builtin=bool(entry.builtin),
            version=active,
            rated_version=active,
            rating=None,
            ci95=None,
            live_elo=round(entry.live_elo, 1),
            matches=0,
            provisional=True,
        )
        if rating is None:
            unrated.append(row)
            continue
        rated_version = fitted.get(rating.version_id) if rating.version_id else None
        rated.append(
            replace(
                row,
                rating=round(rating.rating, 1),
                ci95=(round(rating.low, 1), round(rating.high, 1)),
                matches=rating.matches,
                rated_version=rated_version,
                provisional=rating.matches < PROVISIONAL_MATCHES
                or rating.high - rating.low > PROVISIONAL_WIDTH
                or rated_version != active,
            )
        )
    rated.sort(key=lambda r: (-(r.rating or 0.0), -r.live_elo, r.bot.name))
    unrated.sort(key=lambda r: (-r.live_elo, r.bot.name))
    return [replace(row, rank=rank) for rank, row in enumerate(rated, 1)] + unrated


@dataclass(frozen=True)
class Seated:
    """Who sat in a seat, for the match filters: a bot (its version ``number`` where given)
    or a built-in by name."""

    bot: int | None = None
    number: int | None = None
    builtin: str = ""

    def condition(self, path: str = "") -> dict[str, Any]:
        """The seat's lookup, the bot's versions given as values: the database then knows how
        many seats they have (a bot that played three matches is found at once, not by
        reading every match backwards for it)."""
        if self.builtin:
            return {f"{path}builtin": self.builtin}
        versions = BotVersion.objects.filter(bot_id=self.bot)
        if self.number is not None:
            versions = versions.filter(number=self.number)
        return {f"{path}version_id__in": list(versions.values_list("pk", flat=True))}


def with_seats(query: QuerySet[Match], *seated: Seated) -> QuerySet[Match]:
    """The matches of ``query`` with a seat for each of ``seated``: one semi-join on the
    seats' (version, match) or (built-in, match) index, the seats of a match joined among
    themselves for the second and more (so "this bot against that one" reads the two bots'
    seats, not every match), and no DISTINCT."""
    if not seated:
        return query
    first, *others = seated
    seats = MatchSeat.objects.filter(**first.condition())
    for other in others:  # (each filter() call its own join: another seat of the match)
        seats = seats.filter(**other.condition("match__seats__"))
    return query.filter(pk__in=seats.values("match_id"))


def matches(
    *,
    ladder: int | None = None,
    bot: int | None = None,
    status: str | None = None,
    kind: str | None = None,
    tournament: int | None = None,
    opponent: int | str | None = None,
) -> QuerySet[Match]:
    seats = MatchSeat.objects.select_related("version__bot", "person").defer(
        "stderr", "version__code"
    )
    query = Match.objects.defer(
        "record"
    ).prefetch_related(  # lists show neither records nor logs: the bulk of a row
        Prefetch("seats", queryset=seats.order_by("seat"))
    )
    if ladder is not None:
        query = query.filter(ladder_id=ladder)
    if tournament is not None:
        query = query.filter(tournament_id=tournament)
    seated = [Seated(bot=bot)] if bot is not None else []
    if opponent is not None:  # another seat of the same match: a bot by id, a built-in by name
        if isinstance(opponent, int):
            seated.append(Seated(bot=opponent))
        else:
            seated.append(Seated(builtin=opponent))
    query = with_seats(query, *seated)
    if status:
        query = query.filter(status=status)
    if kind:
        query = query.filter(kind=kind)
    return query.order_by("-id")


def rating_history(entry_ids: list[int], points: int = 200) -> list[tuple[Any, ...]]:
    """Each entry's rating history, oldest first, evenly thinned in the database to about
    ``points`` points (the newest and the oldest kept): (entry id, at, rating, low, high,
    matches, version number) tuples — ``matches`` are the fitted version's own, the version
    None for a built-in or a point from before versions were rated apart — however long the
    history has grown."""
    newest_first = [F("at").desc(), F("pk").desc()]
    ranked = RatingPoint.objects.filter(entry__in=entry_ids).annotate(
        n=Window(RowNumber(), partition_by=[F("entry_id")], order_by=newest_first),
        total=Window(Count("pk"), partition_by=[F("entry_id")]),
    )
    stride = Ceil(Cast(F("total"), FloatField()) / float(points))
    rows = (
        ranked.annotate(offset=Mod(F("n") - 1, stride))
        .filter(Q(offset=0) | Q(n=F("total")))
        .order_by("entry_id", "at", "pk")
        .values_list("entry_id", "at", "rating", "low", "high", "matches", "version__number")
    )
    return list(rows)


def tournaments_index(*, status: str | None = None) -> QuerySet[Tournament]:
    """Every tournament, newest first, with its field size (``entry_count``)."""
    query = Tournament.objects.annotate(entry_count=Count("entries", distinct=True))
    if status:
        query = query.filter(status=status)
    return query.order_by("-id")


def bots_index(*, search: str = "", ladder: Ladder | None = None) -> QuerySet[Bot]:
    """Bots by name (``search``: a part of the name, any case), with their owner, active
    version number and their rating, interval and matches on ``ladder`` (None where unrated)."""
    query = Bot.objects.select_related("owner").filter(disabled=False)
    if search:
        query = query.filter(name__icontains=clean_text(search))
    active = BotVersion.objects.filter(bot=OuterRef("pk"), status=BotVersion.Status.ACTIVE)
    query = query.annotate(active_number=Subquery(active.values("number")[:1]))
    if ladder is not None:
        rated = Rating.objects.filter(entry__bot=OuterRef("pk"), entry__ladder=ladder)
        query = query.annotate(
            rating=Subquery(rated.values("rating")[:1]),
            rating_low=Subquery(rated.values("low")[:1]),
            rating_high=Subquery(rated.values("high")[:1]),
            rated_matches=Subquery(rated.values("matches")[:1]),
        )
    return query.order_by(Lower("name"))


def running_now() -> dict[str, int]:
    """What the platform is doing: matches running and queued, tournaments running, bots
    with an active version (three queries, each as cheap whatever is stored)."""
    # (counted on the status index: a few rows, however many matches are stored)
    busy = dict(
        Match.objects.filter(status__in=[Match.Status.RUNNING, Match.Status.QUEUED])
        .order_by()
        .values_list("status")
        .annotate(n=Count("pk"))
    )
    return {
        "running": busy.get(Match.Status.RUNNING, 0),
        "queued": busy.get(Match.Status.QUEUED, 0),
        "tournaments": Tournament.objects.filter(status=Tournament.Status.RUNNING).count(),
        "bots": entered_count(),
    }


def entered_count() -> int:
    """The players entered in the active ladders, as their standings list them: each bot
    that can play (not disabled, an active version) and each built-in, once however many
    ladders it is in (one query: distinct pairs of bot and built-in name)."""
    playing = Q(bot__disabled=False, bot__versions__status=BotVersion.Status.ACTIVE)
    entries = LadderEntry.objects.filter(Q(ladder__active=True) & (playing | ~Q(builtin="")))
    return entries.values("bot", "builtin").distinct().count()


# --- who sees what --------------------------------------------------------------------------


@dataclass(frozen=True)
class RecentUploads:
    """When a user's uploads were made, within the allowances' spans: accepted ones of all
    their bots and of one bot, and the rejected ones (``upload_allowance`` counts them)."""

    by_user: list[Any]
    by_bot: list[Any]
    failed: list[Any]


def recent_uploads(
    user: Any, bot_id: int, *, user_since: Any, bot_since: Any, failed_since: Any
) -> RecentUploads:
    """The creation times of ``user``'s uploads since each allowance's span began (one query:
    the three spans' rows, split here)."""
    rejected = BotVersion.Status.REJECTED
    since = min(user_since, bot_since, failed_since)
    rows = BotVersion.objects.filter(
        Q(bot__owner=user) | Q(bot_id=bot_id), created_at__gte=since
    ).values_list("created_at", "status", "bot_id", "bot__owner_id")
    owner_id = getattr(user, "pk", None)
    by_user, by_bot, failed = [], [], []
    for created, status, bot, owner in rows:
        if status == rejected:
            if owner == owner_id and created >= failed_since:
                failed.append(created)
            continue
        if owner == owner_id and created >= user_since:
            by_user.append(created)
        if bot == bot_id and created >= bot_since:
            by_bot.append(created)
    return RecentUploads(sorted(by_user), sorted(by_bot), sorted(failed))


def analysis_find(match: Match, seat: int, samples: int) -> Analysis | None:
    """The analysis of ``match``'s seat with ``samples`` per decision by today's method, if
    anyone asked for it."""
    return Analysis.objects.filter(
        match=match, seat=seat, samples=samples, method=ANALYSIS_METHOD
    ).first()


def analyses_of(match: Match, samples: int) -> list[Analysis]:
    """The analyses of ``match``'s seats with ``samples`` per decision by today's method."""
    return list(
        Analysis.objects.filter(match=match, samples=samples, method=ANALYSIS_METHOD).order_by(
            "seat"
        )
    )


def analyses_asked(user: Any, since: Any) -> list[Any]:
    """When ``user`` asked for the analyses they asked for first since ``since``, oldest first
    (their allowance's count)."""
    if not user.is_authenticated:
        return []
    return list(
        Analysis.objects.filter(requested_by=user, created_at__gte=since)
        .order_by("created_at")
        .values_list("created_at", flat=True)
    )


def analysis_document(analysis: Analysis) -> dict[str, Any]:
    """An analysis as the API gives it: where it stands, and once done the report
    (:meth:`bots_sdk.analysis.Report.to_dict`, the numbers ``bidel analyse --json`` prints)."""
    document: dict[str, Any] = dict(analysis.report or {}) if analysis.status == "done" else {}
    document.update(
        match=analysis.match_id,
        seat=analysis.seat,
        samples=analysis.samples,
        method=analysis.method,
        status=analysis.status,
        error=analysis.error,
        requested_at=analysis.created_at.isoformat(),
        finished_at=analysis.finished_at.isoformat() if analysis.finished_at else None,
    )
    return document


def can_see_logs(user: Any, bot: Bot) -> bool:
    """Whether ``user`` may read what only a bot's author should: its versions' validation
    logs and what it wrote to stderr in matches. Its owner only (not staff, not the other
    players of its matches): the one rule the pages and the API both apply."""
    return bool(user.is_authenticated) and bot.owner_id == user.pk


def match_logs(seats: Iterable[MatchSeat], user: Any, record: Any = None) -> list[dict[str, Any]]:
    """The seats of a match (:func:`match_seats`) whose bot's logs ``user`` may read
    (:func:`can_see_logs`): seat, bot name, stderr and, from the match's ``record``, the
    seat's timeline with what it wrote at each decision and its faults with what it said, in
    seat order."""
    recorded = record.get("seats") if isinstance(record, dict) else None
    recorded = recorded if isinstance(recorded, list) else []
    return [
        {
            "seat": seat.seat,
            "bot": seat.version.bot.name,
            "version": seat.version.number,
            "stderr": seat.stderr,
            "decisions": _decisions(recorded[seat.seat]) if seat.seat < len(recorded) else [],
            # (with what the bot said: an exception's text, a line it sent)
            "faults": _faults(recorded[seat.seat]) if seat.seat < len(recorded) else [],
        }
        for seat in seats
        if seat.version is not None and can_see_logs(user, seat.version.bot)
    ]


def bot_logs(bot: Bot, matches: Iterable[Match], user: Any) -> list[dict[str, Any]]:
    """What ``bot`` wrote to stderr in ``matches`` (:func:`recent_matches` with ``stderr``),
    seat by seat where it wrote anything, if ``user`` may read it (else nothing)."""
    if not can_see_logs(user, bot):
        return []
    return [
        {"match": match.pk, "seat": seat.seat, "stderr": seat.stderr}
        for match in matches
        for seat in match.seats.all()  # prefetched
        if seat.version is not None and seat.version.bot_id == bot.pk and seat.stderr
    ]


# --- one row, by what a URL names -----------------------------------------------------------


def bot_get(bot_id: int) -> Bot:
    """A bot and its owner; Http404 when there is none."""
    return get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)


def version_get(*, bot: Bot, number: int) -> BotVersion:
    """Version ``number`` of ``bot``; Http404 when there is none."""
    return get_object_or_404(BotVersion, bot=bot, number=number)


def version_code(*, bot: Bot, number: int) -> BotVersion:
    """Version ``number`` of ``bot`` with its code; Http404 when there is none."""
    return get_object_or_404(BotVersion, bot=bot, number=number)


def ladder_get(ladder_id: int) -> Ladder:
    """A ladder; Http404 when there is none."""
    return get_object_or_404(Ladder, pk=ladder_id)


def match_get(match_id: int) -> Match:
    """A match, record included; Http404 when there is none."""
    return get_object_or_404(Match, pk=match_id)


def tournament_get(tournament_id: int) -> Tournament:
    """A tournament; Http404 when there is none."""
    return get_object_or_404(Tournament, pk=tournament_id)


# --- bots and accounts ------------------------------------------------------------------------


def bots() -> QuerySet[Bot]:
    """Every bot (retired and disabled too) with its owner and the ladders it joins, by id."""
    return Bot.objects.select_related("owner").prefetch_related("join_ladders").order_by("id")


def bots_of(user: Any) -> QuerySet[Bot]:
    """A user's bots, by name."""
    return Bot.objects.filter(owner=user).order_by("name")


def bot_id_named(name: str) -> int | None:
    """The id of the bot called ``name`` (any case), or None."""
    return Bot.objects.filter(name__iexact=clean_text(name)).values_list("pk", flat=True).first()


def bot_named(text: str) -> int:
    """The id of the bot ``text`` names, by its id or its name (any case); 0, which no bot
    has, when none: a list of its matches is then empty."""
    return parse_id(text) or bot_id_named(text) or 0


def bot_names_playing(limit: int = 200) -> list[str]:
    """The names of bots that can be seated (an active version, not disabled), newest first."""
    return list(
        Bot.objects.filter(disabled=False, versions__status=BotVersion.Status.ACTIVE)
        .order_by("-pk")
        .values_list("name", flat=True)[:limit]
    )


def bot_versions(bot: Bot, *, newest_first: bool = False) -> QuerySet[BotVersion]:
    """A bot's versions without their code (up to a MiB each), by number, each with its
    ratings on the ladders (:func:`version_ratings`)."""
    return (
        bot.versions.defer("code")
        .prefetch_related(
            Prefetch(
                "ratings",
                queryset=VersionRating.objects.select_related("entry__ladder").order_by(
                    "entry__ladder__name"
                ),
            )
        )
        .order_by("-number" if newest_first else "number")
    )


def bot_comparisons(bot: Bot) -> QuerySet[Comparison]:
    """A bot's version comparisons, newest first, with the two versions' numbers."""
    return (
        Comparison.objects.filter(bot=bot)
        .select_related("older", "newer")
        .defer("older__code", "newer__code")
        .order_by("-id")
    )


def version_compared(version: BotVersion) -> Comparison | None:
    """The latest comparison of ``version`` with an earlier one of its bot, or None."""
    return (
        Comparison.objects.filter(newer=version)
        .select_related("older", "newer")
        .defer("older__code", "newer__code")
        .order_by("-id")
        .first()
    )


def version_ratings(version: BotVersion) -> list[dict[str, Any]]:
    """A version's rating on each ladder it played (:func:`bot_versions` prefetches them):
    ladder, rating, 95% interval, matches, provisional — from its own matches alone."""
    return [
        {
            "ladder": rating.entry.ladder.name,
            "rating": round(rating.rating, 1),
            "ci95": [round(rating.low, 1), round(rating.high, 1)],
            "matches": rating.matches,
            "provisional": rating.matches < PROVISIONAL_MATCHES
            or rating.high - rating.low > PROVISIONAL_WIDTH,
        }
        for rating in version.ratings.all()
    ]


def api_tokens_of(user: Any) -> QuerySet[ApiToken]:
    """A user's API tokens that work (neither expired nor revoked), newest first; never a key
    (none is stored)."""
    return ApiToken.objects.filter(user=user, revoked__isnull=True, expires__gt=timezone.now())


def api_token_get(*, user: Any, token_id: int) -> ApiToken:
    """One of ``user``'s tokens (working or not); another user's is no such token (404), as
    one that never was."""
    return get_object_or_404(ApiToken, user=user, pk=token_id)


def api_token_by_key(key: str) -> ApiToken | None:
    """The token a presented key is, with its user (working or not: the caller says why it is
    refused); None for a key that is no token's."""
    if len(key) > tokens.MAX_KEY_LENGTH:
        return None
    found = ApiToken.objects.select_related("user").filter(digest=tokens.key_digest(key))
    return found.first()


# --- ladders ----------------------------------------------------------------------------------


def ladders() -> QuerySet[Ladder]:
    """Every ladder, by id."""
    return Ladder.objects.order_by("id")


def ladders_active() -> QuerySet[Ladder]:
    """The ladders that get new matches, by id."""
    return Ladder.objects.filter(active=True).order_by("id")


def ladder_names_active() -> list[str]:
    """The names of the active ladders, in alphabetical order."""
    return list(Ladder.objects.filter(active=True).order_by("name").values_list("name", flat=True))


def ladder_named(name: str) -> Ladder | None:
    """The ladder called ``name``, or None."""
    return Ladder.objects.filter(name=clean_text(name)).first()


def builtin_ratings(ladder: Ladder | None) -> dict[str, float]:
    """The fitted rating of every built-in rated on ``ladder``, by name (one query)."""
    if ladder is None:
        return {}
    rows = Rating.objects.filter(entry__ladder=ladder, entry__bot__isnull=True).values_list(
        "entry__builtin", "rating"
    )
    return dict(rows)


def ladder_entries(*, bot: Bot | None = None, builtin: str = "") -> list[LadderEntry]:
    """The ladder entries of a bot or of a built-in, with their ladder and fitted rating."""
    whose = {"bot": bot} if bot is not None else {"builtin": builtin}
    return list(LadderEntry.objects.filter(**whose).select_related("ladder", "rating"))


# --- matches ----------------------------------------------------------------------------------


def recent_matches(
    limit: int = 20, *, stderr: bool = False, bot: Bot | None = None, builtin: str = ""
) -> list[Match]:
    """The newest matches (those ``bot`` or the built-in ``builtin`` played, when given) with
    their seats; records (and bots' stderr, unless asked for) are left in the database: a
    list shows neither, and they are the bulk of a match's row."""
    seats = MatchSeat.objects.select_related("version__bot", "person").defer("version__code")
    if not stderr:
        seats = seats.defer("stderr")
    query = Match.objects.all()
    if bot is not None:
        query = with_seats(query, Seated(bot=bot.pk))
    elif builtin:
        query = with_seats(query, Seated(builtin=builtin))
    return list(
        query.defer("record")
        .prefetch_related(Prefetch("seats", queryset=seats.order_by("seat")))
        .order_by("-id")[:limit]
    )


#: What a finished match's record tells anyone of a seat (what a bot wrote is its owner's).
PUBLIC_SEAT_FIELDS = ("bot", "faults", "move_ms", "replaced_by_fallback")


def match_public_record(match: Match) -> dict[str, Any]:
    """A finished match's game record as anyone may read it: every seat named as the
    platform names it ("bot v2", a built-in's name), with its faults and move times, never
    its stderr (``match_logs``: the owner's); Http404 before it has finished."""
    if match.record is None:
        raise Http404("the match has not finished")
    record = {k: v for k, v in match.record.items() if k != "seats"}
    recorded = match.record.get("seats")
    recorded = recorded if isinstance(recorded, list) else []
    seats = []
    for seat in match_seats(match):
        entry = recorded[seat.seat] if seat.seat < len(recorded) else {}
        entry = entry if isinstance(entry, dict) else {}
        public = {key: entry[key] for key in PUBLIC_SEAT_FIELDS if key in entry}
        public["faults"] = _faults(entry, public_fault)
        public["decisions"] = [
            {k: v for k, v in step.items() if k != "log"}
            for step in _decisions(entry)  # (the timeline without what the bot wrote)
        ]
        public["bot"] = (
            f"{seat.version.bot.name} v{seat.version.number}" if seat.version else seat.builtin
        ) or public.get("bot", "")
        seats.append(public)
    record["seats"] = seats
    return record


def _faults(entry: Any, shown: Callable[[dict[str, Any]], dict[str, Any]] = dict) -> list[Any]:
    """A stored seat's faults, each as ``shown`` makes it (:func:`public_fault`: without what
    the bot said)."""
    faults = entry.get("faults") if isinstance(entry, dict) else None
    return [shown(f) for f in faults if isinstance(f, dict)] if isinstance(faults, list) else []


def _decisions(entry: Any) -> list[dict[str, Any]]:
    """A stored seat's timeline (``bots_sdk.referee.runner.decision_entry``); [] for a record from
    before timelines were kept."""
    steps = entry.get("decisions") if isinstance(entry, dict) else None
    return [step for step in steps if isinstance(step, dict)] if isinstance(steps, list) else []


def match_seats(match: Match) -> list[MatchSeat]:
    """A match's seats in order, with their bots (not their code) and people."""
    seats = match.seats.select_related("version__bot", "person").defer("version__code")
    return list(seats.order_by("seat"))


# --- tournaments ------------------------------------------------------------------------------


def tournaments() -> QuerySet[Tournament]:
    """Every tournament, newest first."""
    return Tournament.objects.order_by("-id")


def tournaments_upcoming(limit: int = 10) -> QuerySet[Tournament]:
    """Tournaments running or still to start, the soonest first."""
    return Tournament.objects.filter(
        status__in=[Tournament.Status.RUNNING, Tournament.Status.SCHEDULED]
    ).order_by("starts_at")[:limit]


def tournament_field(tournament: Tournament) -> QuerySet[TournamentEntry]:
    """A tournament's entries with their bots and frozen versions, in entry order."""
    return tournament.entries.select_related("bot", "version").order_by("pk")


def tournament_matches(tournament: Tournament) -> list[dict[str, Any]]:
    """A tournament's matches as rows (pk, round, table, rotation, status), in playing order."""
    return list(
        tournament.matches.order_by("round", "table", "rotation").values(
            "pk", "round", "table", "rotation", "status"
        )
    )


def tournament_finished_seats(tournament: Tournament) -> list[MatchSeat]:
    """Every seat of the tournament's finished matches, by match and seat."""
    return list(
        MatchSeat.objects.filter(match__tournament=tournament, match__status=Match.Status.FINISHED)
        .select_related("match", "tournament_entry__bot", "version")
        .order_by("match_id", "seat")
    )


def tournament_history(tournament: Tournament) -> list[list[str]]:
    """The tables played so far (by entry id), one per (round, table)."""
    tables: dict[tuple[int, int], set[str]] = defaultdict(set)
    for round_number, table, entry in MatchSeat.objects.filter(
        match__tournament=tournament
    ).values_list("match__round", "match__table", "tournament_entry_id"):
        tables[(round_number, table)].add(str(entry))
    return [sorted(t) for t in tables.values()]


def tournament_crosstable(tournament: Tournament) -> dict[tuple[int, int], tuple[int, int]]:
    """:func:`arena.domain.scheduling.head_to_head` over the tournament's finished matches, keyed by
    tournament entry id."""
    seats = MatchSeat.objects.filter(
        match__tournament=tournament, match__status=Match.Status.FINISHED
    ).values_list("match_id", "tournament_entry_id", "rank")
    tables: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for match_id, entry_id, rank in seats:
        tables[match_id].append((entry_id, rank))
    return head_to_head(tables.values())


def tournament_standings(tournament: Tournament) -> list[Standing]:
    """Per entry: points, mean points per hand with a 95% interval (paired by deal in the
    duplicate format), matches, wins, faults; ranked by
    :func:`arena.domain.scheduling.standings_order`, then by the format."""
    per_deal: dict[str, dict[tuple[int, int], list[int]]] = defaultdict(lambda: defaultdict(list))
    points: dict[str, float] = defaultdict(float)
    hands: dict[str, int] = defaultdict(int)
    wins: dict[str, int] = defaultdict(int)
    matches: dict[str, set[int]] = defaultdict(set)
    faults: dict[str, int] = defaultdict(int)
    luck: dict[str, list[float]] = defaultdict(list)
    labels: dict[str, tuple[TournamentEntry, Any]] = {}
    for seat in tournament_finished_seats(tournament):
        entry = seat.tournament_entry
        if entry is None:
            continue
        key = str(entry.pk)
        labels[key] = (entry, seat.version)
        for number, score in enumerate(seat.hand_scores):
            per_deal[key][(seat.match.seed, number)].append(score)
        points[key] += sum(seat.hand_scores)
        hands[key] += len(seat.hand_scores)
        wins[key] += seat.rank == 0
        matches[key].add(seat.match_id)  # (a bot in two seats of one match plays it once)
        faults[key] += len(seat.faults)
        luck[key] += [value for value in seat.hand_expected or [] if value is not None]
    rows = []
    for key in standings_order(points, wins, hands):
        values = (
            [statistics.fmean(v) for v in per_deal[key].values()]
            if tournament.duplicate
            else [score for deal in per_deal[key].values() for score in deal]
        )
        mean, ci = mean_ci(values, floor=points_floor(values))
        entry, version = labels[key]
        rows.append(
            Standing(
                rank=0,
                entry=entry.pk,
                bot=NamedBot(entry.bot_id, entry.label),
                version=version.number if version else None,
                points=points[key],
                mean_points_per_hand=round(points[key] / max(hands[key], 1), 3),
                ci95=(ci[0], ci[1]),
                hands=hands[key],
                matches=len(matches[key]),
                wins=wins[key],
                faults=faults[key],
                expected_per_hand=round(statistics.fmean(luck[key]), 3) if luck[key] else None,
            )
        )
    rows = formats.get(tournament.format).standings(tournament, rows)
    return [replace(row, rank=rank) for rank, row in enumerate(rows, 1)]


def matches_per_table(tournament: Tournament) -> int:
    """Matches a table plays in a round: its games, times its rotations when duplicate."""
    rotations = tournament.table_size if tournament.duplicate else 1
    return max(1, tournament.games_per_table) * rotations


def tournament_progress(tournament: Tournament) -> dict[str, int]:
    """Matches done and planned (the plan grows round by round when the format cannot know
    it in advance: then it is the matches created so far)."""
    done = tournament.matches.filter(
        status__in=[Match.Status.FINISHED, Match.Status.FAILED]
    ).count()
    total = formats.get(tournament.format).planned_matches(
        tournament, tournament.entries.count(), matches_per_table(tournament)
    )
    if total is None:
        total = tournament.matches.count()
    return {"done": done, "total": max(total, done)}


def match_test_result(tournament: Tournament) -> SprtResult:
    """A match test's SPRT over the deals played so far
    (:meth:`arena.domain.formats.MatchTest.result`)."""
    return formats.MatchTest.result(
        tournament, list(tournament_field(tournament)), tournament_finished_seats(tournament)
    )


def games_of(user: Any, limit: int = 20) -> list[MatchSeat]:
    """A signed-in person's games against bots, newest first (their seats, with the match)."""
    return list(
        MatchSeat.objects.filter(person=user, match__kind=Match.Kind.HUMAN)
        .select_related("match")
        .order_by("-match_id")[:limit]
    )


def person_seat(match_id: int, *, token: str = "", user: Any = None) -> MatchSeat | None:
    """The person's seat of match ``match_id`` that the visitor holds (with its match): by its
    secret ``token`` (the seat cookie), or as its signed-in ``user``; None for anyone else."""
    seats = MatchSeat.objects.select_related("match").filter(
        match_id=match_id, match__kind=Match.Kind.HUMAN
    )
    if token:
        found = seats.filter(human_token=token).first()
        if found is not None:
            return found
    if user is not None and getattr(user, "is_authenticated", False):
        return seats.filter(person=user).exclude(human_token="").first()
    return None


def person_game_open(token: str) -> int | None:
    """The match of the seat ``token`` (a browser's seat cookie), if that game is open."""
    if not token:
        return None
    return (
        MatchSeat.objects.filter(
            human_token=token,
            match__kind=Match.Kind.HUMAN,
            match__status__in=[Match.Status.QUEUED, Match.Status.RUNNING],
        )
        .values_list("match_id", flat=True)
        .first()
    )


def match_claim_state(match_id: int) -> tuple[str, str] | None:
    """A match's status and current claim (whose run its live feed shows), if it exists."""
    return Match.objects.filter(pk=match_id).values_list("status", "claim_token").first()


def person_seat_state(match_id: int, *, token: str = "", user_id: int | None = None) -> Any:
    """The seat number, status, claim, secret and start of the person's seat of match
    ``match_id`` that ``token`` (or the signed-in user ``user_id``) holds; None otherwise."""
    seats = MatchSeat.objects.filter(match_id=match_id, match__kind=Match.Kind.HUMAN).exclude(
        human_token=""
    )
    fields = ("seat", "match__status", "match__claim_token", "human_token", "match__playing_since")
    found = seats.filter(human_token=token).values_list(*fields).first() if token else None
    if found is None and user_id is not None:
        found = seats.filter(person_id=user_id).values_list(*fields).first()
    return found


def match_status(match_id: int) -> tuple[str, Any] | None:
    """A match's status and when a runner began playing it (None before), if it exists."""
    return Match.objects.filter(pk=match_id).values_list("status", "playing_since").first()
