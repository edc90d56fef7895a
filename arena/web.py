"""Server-rendered pages for people: thin views over the selectors and services (the API's
twins). The forms validate with the API's serializers, so they say the same things."""

from __future__ import annotations

import inspect
import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from rest_framework import exceptions
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.serializers import Serializer
from rest_framework.throttling import ScopedRateThrottle

from arena import docs, logins, selectors, services
from arena.api.serializers import (
    BotSerializer,
    ChallengeSerializer,
    HumanGameSerializer,
    MeUpdateSerializer,
    UserCreateSerializer,
    VersionUploadSerializer,
)
from arena.api.throttles import (
    PasswordResetEmailThrottle,
    upload_allowance,
    upload_refused,
    upload_throttle_check,
)
from arena.charts import Point, along, rating_history_svg
from arena.domain.rows import Ranking, Standing
from arena.errors import error_messages
from arena.models import BotVersion, LadderEntry, Match, MatchSeat, Tournament
from arena.paging import CappedPaginator
from arena.services import accounts, people
from arena.templatetags.arena_i18n import digits
from arena.uploads import UploadError, read_upload
from bots_sdk.analysis import SAMPLES as ANALYSIS_SAMPLES
from bots_sdk.builtin import BUILTIN
from bots_sdk.ids import parse_id
from bots_sdk.referee.frames import replay_frames, table_shape
from bots_sdk.referee.players import public_fault
from engine.rules import PRESETS, RuleSet

logger = logging.getLogger(__name__)

#: Rating-history points drawn per ladder on a bot page (thinned evenly by the database).
HISTORY_POINTS = 200


@dataclass(frozen=True)
class Bar:
    """A row's 95% interval and value as percentages of the whole table's range."""

    left: float
    width: float
    dot: float


R = TypeVar("R", Ranking, Standing)


def _with_bars(rows: list[R], value: Callable[[R], float | None]) -> list[tuple[R, Bar | None]]:
    """Each row with its interval bar (None: not rated yet, no bar)."""
    low = min((r.ci95[0] for r in rows if r.ci95), default=0.0)
    high = max((r.ci95[1] for r in rows if r.ci95), default=1.0)
    span = max(high - low, 1e-9)

    def bar(row: R) -> Bar | None:
        point = value(row)
        if not row.ci95 or point is None:
            return None
        return Bar(
            left=round(100 * (row.ci95[0] - low) / span, 2),
            width=round(100 * (row.ci95[1] - row.ci95[0]) / span, 2),
            dot=round(100 * (point - low) / span, 2),
        )

    return [(row, bar(row)) for row in rows]


def _ratings(entries: list[LadderEntry]) -> list[dict[str, Any]]:
    """Each ladder entry's fitted rating (None before the first refit) and live Elo."""
    return [
        {"ladder": e.ladder, "rating": getattr(e, "rating", None), "live_elo": e.live_elo}
        for e in entries
    ]


def home(request: HttpRequest) -> HttpResponse:
    ladders = [
        {"ladder": ladder, "top": selectors.ladder_rankings(ladder)[:10]}
        for ladder in selectors.ladders_active()
    ]
    return render(
        request,
        "arena/home.html",
        {
            "ladders": ladders,
            "tournaments": selectors.tournaments_upcoming(10),
            "matches": selectors.recent_matches(10),
            "now": selectors.running_now(),
        },
    )


def docs_index(request: HttpRequest) -> HttpResponse:
    """Every guide, with what it is for."""
    guides = [(n, title, docs.SUMMARIES[n]) for n, (title, _) in docs.GUIDES.items()]
    return render(request, "arena/docs_index.html", {"guides": guides})


def docs_page(request: HttpRequest, name: str) -> HttpResponse:
    if name not in docs.GUIDES:
        raise Http404("no such guide")
    html = mark_safe(docs.render(name))  # rendered with raw HTML off: only Markdown's own tags
    return render(
        request,
        "arena/docs.html",
        {
            "title": docs.GUIDES[name][0],
            "html": html,
            "guides": [(n, title) for n, (title, _) in docs.GUIDES.items()],
        },
    )


@require_POST
def language_choose(request: HttpRequest) -> HttpResponse:
    """The language switcher: remembered in a cookie, and with a signed-in user (so it follows
    them); back to the page it was chosen on."""
    code = request.POST.get("language", "")
    if code not in dict(settings.LANGUAGES):
        code = ""  # the browser's own
    target = request.POST.get("next", "")
    safe = url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure())
    response = redirect(target if safe and target.startswith("/") else "home")
    if code:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            code,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            samesite="Lax",
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME)
    if request.user.is_authenticated:
        services.user_language_set(user=request.user, language=code)
    return response


#: Rows per page of the indexes, and of a ladder's rankings (a field of thousands is not drawn
#: at once).
PAGE_SIZE = 25
LADDER_PAGE_SIZE = 100


def _page(
    request: HttpRequest,
    query: Any,
    paginator: type[Paginator] = Paginator,
    per_page: int = PAGE_SIZE,
) -> Any:
    """The requested page (``?page=``) of ``query``: a bad or past-the-end number gives the
    last page, not an error."""
    return paginator(query, per_page).get_page(request.GET.get("page"))


def _query_without_page(request: HttpRequest) -> str:
    """The current filters as a query string, for the pager's links."""
    params = request.GET.copy()
    params.pop("page", None)
    return params.urlencode()


def tournaments_index(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", "")
    if status not in Tournament.Status.values:
        status = ""
    page = _page(request, selectors.tournaments_index(status=status or None))
    return render(
        request,
        "arena/tournaments.html",
        {
            "page": page,
            "status": status,
            "statuses": Tournament.Status.choices,
            "query": _query_without_page(request),
        },
    )


def bots_index(request: HttpRequest) -> HttpResponse:
    search = request.GET.get("q", "").strip()[:64]
    ladder = selectors.ladder_named(services.DEFAULT_LADDER)
    page = _page(request, selectors.bots_index(search=search, ladder=ladder))
    rated = selectors.builtin_ratings(ladder)
    builtins = [(name, _builtin_summary(name), rated.get(name)) for name in _builtin_names()]
    return render(
        request,
        "arena/bots.html",
        {
            "page": page,
            "q": search,
            "ladder": ladder,
            "builtins": builtins,
            "query": _query_without_page(request),
        },
    )


def matches_index(request: HttpRequest) -> HttpResponse:
    get = request.GET
    kind = get.get("kind", "") if get.get("kind", "") in Match.Kind.values else ""
    opponent_text = get.get("opponent", "").strip()
    opponent: int | str | None = None
    if opponent_text:
        opponent = opponent_text if opponent_text in BUILTIN else selectors.bot_named(opponent_text)
    bot_text = get.get("bot", "").strip()
    query = selectors.matches(
        bot=selectors.bot_named(bot_text) if bot_text else None,
        opponent=opponent,
        kind=kind or None,
        tournament=parse_id(get.get("tournament")),
    )
    return render(
        request,
        "arena/matches.html",
        {
            "page": _page(request, query, CappedPaginator),
            "kind": kind,
            "kinds": Match.Kind.choices,
            "bot": get.get("bot", ""),
            "opponent": opponent_text,
            "tournament": get.get("tournament", ""),
            "query": _query_without_page(request),
            "builtins": sorted(BUILTIN),
        },
    )


def _builtin_names() -> list[str]:
    """The built-ins, the strength levels in order: ``strong-1`` … ``strong-3``, ``strong``."""
    return sorted(BUILTIN, key=lambda name: (name.startswith("strong"), name == "strong", name))


def _opponents(names: list[str]) -> list[tuple[str, str]]:
    """What a seat's field suggests (value, label): the built-ins, each with its rating on the
    default ladder where it has one ("rated 1750": an opponent picked by strength), then
    ``names``."""
    rated = selectors.builtin_ratings(selectors.ladder_named(services.DEFAULT_LADDER))

    def label(name: str) -> str:
        if name not in rated:
            return ""
        return _("rated %(rating)s") % {"rating": digits(f"{rated[name]:.0f}")}

    return [(name, label(name)) for name in _builtin_names()] + [(name, "") for name in names]


def _builtin_summary(name: str) -> str:
    """The first paragraph of a built-in bot's docstring."""
    doc = inspect.getdoc(BUILTIN[name]) or ""
    return " ".join(doc.split("\n\n")[0].split())


def builtin_page(request: HttpRequest, name: str) -> HttpResponse:
    if name not in BUILTIN:
        raise Http404("no such built-in bot")
    return render(
        request,
        "arena/builtin.html",
        {
            "name": name,
            "summary": _builtin_summary(name),
            "ratings": _ratings(selectors.ladder_entries(builtin=name)),
            "matches": selectors.recent_matches(20, builtin=name),
        },
    )


def ladder_page(request: HttpRequest, ladder_id: int) -> HttpResponse:
    ladder = selectors.ladder_get(ladder_id)
    rows = _with_bars(selectors.ladder_rankings(ladder), lambda row: row.rating)
    page = _page(request, rows, per_page=LADDER_PAGE_SIZE)  # (bars: on the whole table's scale)
    return render(
        request, "arena/ladder.html", {"ladder": ladder, "page": page, "rows": page.object_list}
    )


#: A version in one of these is still to be validated: its page refreshes itself.
_WAITING = (BotVersion.Status.PENDING, BotVersion.Status.VALIDATING)
#: A version its owner may make the one that plays (the active one is already).
_ACTIVATABLE = tuple(status for status in services.VALIDATED if status != BotVersion.Status.ACTIVE)


def bot_page(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = selectors.bot_get(bot_id)
    versions = selectors.bot_versions(bot, newest_first=True)
    owner = selectors.can_see_logs(request.user, bot)  # its logs, and the upload link
    matches = selectors.recent_matches(20, stderr=owner, bot=bot)
    entries = selectors.ladder_entries(bot=bot)
    ladder_of = {entry.pk: entry.ladder.name for entry in entries}
    points = selectors.rating_history(list(ladder_of), points=HISTORY_POINTS)
    series: dict[str, list[Point]] = {}
    for entry_id, at, rating, low, high, count, number in points:
        series.setdefault(ladder_of[entry_id], []).append(
            Point(at, rating, low, high, count, number)
        )
    series = {name: along(history) for name, history in series.items()}
    chart = rating_history_svg(series, title=_("Rating history of %(name)s") % {"name": bot.name})
    context = {
        "bot": bot,
        "versions": versions,
        "versions_rated": [(v, selectors.version_ratings(v)) for v in versions],
        "comparisons": list(selectors.bot_comparisons(bot)[:10]),
        "owner": owner,
        "is_owner": request.user.is_authenticated and bot.owner_id == request.user.pk,
        "activatable": _ACTIVATABLE,
        "matches": matches,
        "logs": selectors.bot_logs(bot, matches, request.user),
        "ratings": _ratings(entries),
        "chart": mark_safe(chart),  # built from numbers and escaped names
        "history": [(name, points[-10:][::-1]) for name, points in series.items()],
        "refresh": any(v.status in _WAITING for v in versions),
    }
    return render(request, "arena/bot.html", context)


def timeline_rows(decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A seat's timeline (``bots_sdk.referee.runner.decision_entry``) as the match page draws it for
    its owner: what was played, the time charged with a bar (a share of the slowest
    decision), the bank left in seconds, the lines written, the fault where one happened.

    >>> rows = timeline_rows([{"hand": 0, "trick": None, "decision": "pass", "ms": 40.0,
    ...                        "bank_ms": 9000.0, "action": ["2C", "3C", "4C"]},
    ...                       {"hand": 0, "trick": 0, "decision": "play", "ms": 10.0,
    ...                        "bank_ms": 9000.0, "action": "5C", "log": "hm", "fault": ""}])
    >>> [(r["played"], r["bar"], r["bank"], r["log"]) for r in rows]
    [('2C 3C 4C', 100, '9.00', ''), ('5C', 25, '9.00', 'hm')]
    """
    slowest = max((float(d.get("ms") or 0) for d in decisions), default=0.0) or 1.0
    rows = []
    for step in decisions:
        action, ms, bank = step.get("action"), step.get("ms"), step.get("bank_ms")
        rows.append(
            {
                "hand": step.get("hand"),
                "trick": step.get("trick"),
                "decision": step.get("decision", ""),
                "played": " ".join(map(str, action)) if isinstance(action, list) else str(action),
                "ms": "" if ms is None else f"{float(ms):.1f}",
                "bar": 0 if ms is None else round(100 * float(ms) / slowest),
                "bank": "" if bank is None else f"{float(bank) / 1000:.2f}",
                "log": str(step.get("log") or ""),
                "fault": str(step.get("fault") or ""),
            }
        )
    return rows


def match_page(request: HttpRequest, match_id: int) -> HttpResponse:
    match = selectors.match_get(match_id)
    seats = selectors.match_seats(match)
    names = [s.label for s in seats]
    frames = None
    live = match.status in (Match.Status.QUEUED, Match.Status.RUNNING)
    if match.record is not None:
        frames = replay_frames(match.record)
        frames["faults"] = [
            [public_fault(f) for f in seat.get("faults", [])]
            for seat in match.record.get("seats", [])
        ]
    elif live:  # followed as it is played (arena/consumers.py)
        frames = {**table_shape(RuleSet.from_spec(match.rules)), "hands": []}
    context = {
        "match": match,
        "seats": seats,
        "frames_json": json.dumps(frames) if frames else "",
        "names_json": json.dumps(names),
        "logs": [
            {**log, "timeline": timeline_rows(log["decisions"])}
            for log in selectors.match_logs(seats, request.user, match.record)
        ],
        "finished": match.status == Match.Status.FINISHED,
        "live_url": f"/ws/matches/{match.pk}/live/" if live else "",
        "valued": any(seat.expected is not None for seat in seats),
        "analysis_samples": ANALYSIS_SAMPLES,
        "analyses_json": json.dumps(
            {
                analysis.seat: selectors.analysis_document(analysis)
                for analysis in selectors.analyses_of(match, ANALYSIS_SAMPLES)
            }
        ),
    }
    return render(request, "arena/match.html", context)


def tournament_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    tournament = selectors.tournament_get(tournament_id)
    rows = _with_bars(selectors.tournament_standings(tournament), lambda r: r.mean_points_per_hand)
    pairs = selectors.tournament_crosstable(tournament)
    order = [row.entry for row, _ in rows]

    def cell(row: int, column: int) -> str:
        return "—" if row == column else "{}/{}".format(*pairs.get((row, column), (0, 0)))

    crosstable = [{"row": r, "cells": [cell(r.entry, c) for c in order]} for r, _ in rows]
    context = {
        "tournament": tournament,
        "rows": rows,
        "crosstable": crosstable,
        "matches": selectors.tournament_matches(tournament),
        "progress": selectors.tournament_progress(tournament),
        "field": selectors.tournament_field(tournament),
        "refresh": tournament.status in (Tournament.Status.RUNNING, Tournament.Status.SCHEDULED),
        "failed": tournament.status == Tournament.Status.FAILED,
    }
    return render(request, "arena/tournament.html", context)


# --- forms: the API's validation, the API's messages -------------------------------------


@dataclass
class FormField:
    """One input of a form page (the generic form template draws it, its errors beside it)."""

    name: str
    label: str
    kind: str = "text"  # text, password, textarea, file, number, select, checkboxes
    value: Any = ""
    help: str = ""
    required: bool = True
    options: list[tuple[str, str]] = field(default_factory=list)
    suggestions: str = ""  # the id of a <datalist>
    autocomplete: str = "off"
    errors: list[str] = field(default_factory=list)


def _messages(errors: Any) -> list[str]:
    """A serializer's error value (a list, or per-item dicts for list fields) as sentences."""
    if isinstance(errors, dict):
        return [f"item {int(k) + 1}: {m}" for k, v in errors.items() for m in _messages(v)]
    if isinstance(errors, list):
        return [m for item in errors for m in _messages(item)]
    return [str(errors)]


def _submit(serializer: Serializer, act: Callable[[dict[str, Any]], Any]) -> tuple[Any, dict]:
    """Validate with the API's serializer, then act; errors come back as field → messages,
    the same words the API answers with."""
    if not serializer.is_valid():
        return None, {name: _messages(value) for name, value in serializer.errors.items()}
    try:
        with transaction.atomic():
            return act(serializer.validated_data), {}
    except PermissionError as exc:
        raise PermissionDenied(str(exc)) from exc
    except Exception as exc:
        found = error_messages(exc)
        if found is None:
            raise
        return None, found


def _form(
    request: HttpRequest,
    *,
    title: str,
    intro: str,
    fields: list[FormField],
    errors: dict[str, list[str]],
    submit: str,
    status: int = 200,
    extra: dict[str, Any] | None = None,
) -> HttpResponse:
    context = _form_context(
        title=title, intro=intro, fields=fields, errors=errors, submit=submit, extra=extra
    )
    return render(
        request, "arena/form.html", context, status=400 if errors and status == 200 else status
    )


def _form_context(
    *,
    title: str,
    intro: str,
    fields: list[FormField],
    errors: dict[str, list[str]],
    submit: str,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What the generic form template draws: each field with its errors, and the errors of
    no one field above them."""
    names = {f.name for f in fields}
    for f in fields:
        f.errors = errors.get(f.name, [])
    general = [m for name, ms in errors.items() if name not in names for m in ms]
    return {
        "title": title,
        "intro": intro,
        "fields": fields,
        "general": general,
        "submit": submit,
        "multipart": any(f.kind == "file" for f in fields),
        **(extra or {}),
    }


@dataclass(frozen=True)
class _Scope:
    """A stand-in view for DRF's scoped throttle: the API's scope, one allowance for both
    doors."""

    throttle_scope: str


def _throttled(request: HttpRequest, scope: str) -> dict[str, list[str]]:
    """The API's throttle of ``scope`` counts this request: no errors when it may go on, else
    the API's message."""
    throttle = ScopedRateThrottle()
    if throttle.allow_request(request, _Scope(scope)):  # type: ignore[arg-type]
        return {}
    wait = throttle.wait()
    return {"detail": [str(exceptions.Throttled(math.ceil(wait) if wait else None).detail)]}


def signup(request: HttpRequest) -> HttpResponse:
    fields = [
        FormField(
            "username",
            _("Username"),
            value=request.POST.get("username", ""),
            help=_("3 to 32 letters, digits, dots, dashes or underscores"),
            autocomplete="username",
        ),
        FormField(
            "password",
            _("Password"),
            kind="password",
            help=_("at least 10 characters"),
            autocomplete="new-password",
        ),
        FormField(
            "email",
            _("E-mail address"),
            kind="email",
            value=request.POST.get("email", ""),
            help=_("where a link to choose a new password is sent if you forget yours"),
            required=False,
            autocomplete="email",
        ),
    ]
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        errors = _throttled(request, "signup")
        user = None
        if errors:
            status = 429
        else:
            user, errors = _submit(
                UserCreateSerializer(data=request.POST), lambda data: services.user_create(**data)
            )
        if user is not None:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(
                request, _("Welcome, %(name)s. Your account is ready.") % {"name": user.username}
            )
            return redirect("account")
    return _form(
        request,
        title=_("Sign up"),
        intro=_("An account lets you upload bots and ask for challenges."),
        fields=fields,
        errors=errors,
        submit=_("Sign up"),
        status=status,
    )


def login_page(request: HttpRequest) -> HttpResponse:
    fields = [
        FormField(
            "username",
            _("Username"),
            value=request.POST.get("username", ""),
            autocomplete="username",
        ),
        FormField("password", _("Password"), kind="password", autocomplete="current-password"),
    ]
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        username, address = request.POST.get("username", ""), logins.client_address(request)
        wait = logins.login_wait(username, address)
        errors = _throttled(request, "login")
        user = None
        if wait:  # locked out: the password is not even checked
            errors, status = {"detail": [logins.too_many_message(wait)]}, 429
        elif errors:
            status = 429
        else:
            # The API's token endpoint checks credentials with this serializer: the same message.
            check = AuthTokenSerializer(data=request.POST, context={"request": request})
            user, errors = _submit(check, lambda data: data["user"])
            if user is None:
                logins.login_failed(username, address)
        if user is not None:
            logins.login_succeeded(username, address)
            login(request, user)
            target = request.GET.get("next", "")
            safe = url_has_allowed_host_and_scheme(
                target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
            )
            return redirect(target if safe else "account")
    return _form(
        request,
        title=_("Log in"),
        intro="",
        fields=fields,
        errors=errors,
        submit=_("Log in"),
        status=status,
        extra={"show_signup": True, "show_reset": True},
    )


@require_POST
def logout_page(request: HttpRequest) -> HttpResponse:
    logout(request)
    return redirect("home")


def _email_fields(request: HttpRequest) -> list[FormField]:
    return [
        FormField(
            "email",
            _("E-mail address"),
            kind="email",
            value=request.POST.get("email", request.user.email),
            help=_("where a link to choose a new password is sent; empty for none"),
            required=False,
            autocomplete="email",
        ),
        FormField(
            "password",
            _("Your password"),
            kind="password",
            help=_("asked for before the address changes"),
            autocomplete="current-password",
        ),
    ]


def _account_page(
    request: HttpRequest,
    *,
    status: int = 200,
    issued: tuple[Any, str] | None = None,
    email_errors: dict[str, list[str]] | None = None,
) -> HttpResponse:
    email = _form_context(
        title="", intro="", fields=_email_fields(request), errors=email_errors or {}, submit=""
    )
    context = {
        "bots": selectors.bots_of(request.user),
        "tokens": selectors.api_tokens_of(request.user),
        "issued": issued,  # a new token and its key: shown on this answer only
        "email_fields": email["fields"],
        "email_general": email["general"],
        "token_days": settings.API_TOKEN_DAYS,
        "games": selectors.games_of(request.user),
    }
    return render(request, "arena/account.html", context, status=status)


@login_required
def account(request: HttpRequest) -> HttpResponse:
    """The account: bots, games, API tokens (a POST makes one: its key is shown on that answer
    and never again; it ends with this session), and the e-mail address."""
    if request.method != "POST":
        return _account_page(request)
    refused = _throttled(request, "token")
    if refused:
        for message in refused["detail"]:
            messages.error(request, message)
        return _account_page(request, status=429)
    name = request.POST.get("name", "").strip()[:64] or _("made on the account page")
    # A session's token: it ends when the session does (its log-out, its expiry), so a stolen
    # session cannot leave behind a credential that outlives it (bidel login, with the
    # password, makes one that does).
    issued = services.token_create(
        user=request.user,
        name=name,
        expires=request.session.get_expiry_date(),
        session_key=request.session.session_key or "",
    )
    messages.success(request, _("A new API token was made. Copy it now: it is not shown again."))
    return _account_page(request, issued=issued)


@login_required
@require_POST
def version_activate(request: HttpRequest, bot_id: int, number: int) -> HttpResponse:
    """The owner makes one of the bot's validated versions the one that plays."""
    bot = selectors.bot_get(bot_id)
    try:
        services.version_activate(bot=bot, user=request.user, number=number)
    except PermissionError:
        raise Http404 from None  # (another's bot: nothing to change here)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
        return redirect("bot", bot_id=bot.pk)
    messages.success(
        request,
        _("Version %(number)s plays for %(name)s now.") % {"number": number, "name": bot.name},
    )
    return redirect("bot", bot_id=bot.pk)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    """Revoke one of the signed-in user's tokens (another's is no such token: 404)."""
    refused = _throttled(request, "tokens")
    if refused:
        for message in refused["detail"]:
            messages.error(request, message)
        return _account_page(request, status=429)
    token = selectors.api_token_get(user=request.user, token_id=token_id)
    services.token_revoke(token=token)
    messages.success(
        request, _("The token %(name)s was revoked: it works no more.") % {"name": token.name}
    )
    return redirect("account")


@login_required
@require_POST
def email_change(request: HttpRequest) -> HttpResponse:
    """Change the e-mail address, with the current password (the API's validation and
    allowance: ``PATCH /api/users/me/``)."""
    username, address = request.user.get_username(), logins.client_address(request)
    wait = logins.login_wait(username, address)
    errors = _throttled(request, "login")
    if wait and not errors:
        errors = {"detail": [logins.too_many_message(wait)]}
    if errors:
        return _account_page(request, status=429, email_errors=errors)
    done, errors = _submit(
        MeUpdateSerializer(data=request.POST),
        lambda data: services.user_email_set(user=request.user, **data),
    )
    if done is None:
        if "password" in errors and request.POST.get("password"):
            logins.login_failed(username, address)  # a wrong password, as the API counts it
        return _account_page(request, status=400, email_errors=errors)
    messages.success(request, _("Your e-mail address was saved."))
    return redirect("account")


# --- password reset: Django's views and machinery, our pages and the API's allowances -----------


def _fields_of(form: Any, *, help: dict[str, str]) -> list[FormField]:
    """A Django form's inputs as the generic form template draws them."""
    fields = []
    for bound in form:
        kind = getattr(bound.field.widget, "input_type", "text")
        fields.append(
            FormField(
                bound.html_name,
                str(bound.label),
                kind=kind,
                value="" if kind == "password" else (bound.value() or ""),
                help=help.get(bound.name, ""),
                autocomplete=bound.field.widget.attrs.get("autocomplete", "off"),
            )
        )
    return fields


def _form_errors(form: Any) -> dict[str, list[str]]:
    return {
        ("detail" if name == "__all__" else name): list(messages)
        for name, messages in form.errors.items()
    }


class PasswordResetPage(auth_views.PasswordResetView):
    """``/password-reset/``: an address; a one-use link is mailed to the accounts that have
    it (``services.password_reset_request``: by a worker, as for the API), and the next page
    says the same whether or not one does. The API's allowances: per client address and per
    e-mail address."""

    template_name = "arena/form.html"
    success_url = reverse_lazy("password_reset_done")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        form = context["form"]
        return {
            **context,
            **_form_context(
                title=_("Choose a new password"),
                intro=_(
                    "Give the e-mail address of your account: a link to choose a new "
                    "password is sent to it."
                ),
                fields=_fields_of(form, help={}),
                errors=kwargs.get("errors") or _form_errors(form),
                submit=_("Send the link"),
            ),
        }

    def form_valid(self, form: Any) -> HttpResponse:
        errors = _throttled(self.request, "password_reset") or _email_throttled(self.request)
        if errors:
            context = self.get_context_data(form=form, errors=errors)
            return self.render_to_response(context, status=429)
        try:
            domain, https = accounts.reset_origin(
                host=self.request.get_host(), secure=self.request.is_secure()
            )
        except accounts.ResetUnavailable as exc:
            logger.error("a password reset was refused: %s", exc)
            context = self.get_context_data(form=form, errors={"detail": [str(exc)]})
            return self.render_to_response(context, status=503)
        services.password_reset_request(
            email=form.cleaned_data["email"], domain=domain, use_https=https
        )
        return redirect(self.success_url)

    def form_invalid(self, form: Any) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)


def password_reset_done(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "arena/message.html",
        {
            "title": _("Look in your mailbox"),
            "lines": [
                _(
                    "If an account has this address, a link to choose a new password was sent "
                    "to it. It works once, for a day."
                ),
                _("No mail after a few minutes? Look among the unwanted mail, or ask again."),
            ],
        },
    )


class PasswordResetConfirmPage(auth_views.PasswordResetConfirmView):
    """The mailed link: Django's view checks it (and moves its token into the session, out
    of the address bar); the new password is set by ``services.password_reset_confirm``,
    which also revokes the account's API tokens."""

    template_name = "arena/form.html"
    success_url = reverse_lazy("password_reset_complete")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        form = context.get("form")
        if form is None:  # a link that does not work
            return {
                **context,
                "title": _("This link does not work"),
                "lines": [
                    _(
                        "It was used already, is more than a day old, or was copied "
                        "wrong. Ask for a new one."
                    )
                ],
                "link": (reverse("password_reset"), _("Ask for a new link")),
            }
        return {
            **context,
            **_form_context(
                title=_("Choose a new password"),
                intro=_("Every API token of the account stops working, and every session."),
                fields=_fields_of(form, help={"new_password1": _("at least 10 characters")}),
                errors=kwargs.get("errors") or _form_errors(form),
                submit=_("Set the password"),
            ),
        }

    def get_template_names(self) -> list[str]:
        return ["arena/form.html" if self.validlink else "arena/message.html"]

    def form_valid(self, form: Any) -> HttpResponse:
        errors, status = _throttled(self.request, "password_reset"), 429
        if not errors:
            try:
                services.password_reset_confirm(
                    uid=self.kwargs["uidb64"],
                    token=self.request.session.get(auth_views.INTERNAL_RESET_SESSION_TOKEN, ""),
                    password=form.cleaned_data["new_password1"],
                )
            except ValidationError as exc:  # the link was used meanwhile, in another tab
                errors, status = error_messages(exc) or {}, 400
            else:
                self.request.session.pop(auth_views.INTERNAL_RESET_SESSION_TOKEN, None)
                return redirect(self.success_url)
        context = self.get_context_data(form=form, errors=errors)
        return self.render_to_response(context, status=status)

    def form_invalid(self, form: Any) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)


def password_reset_complete(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "arena/message.html",
        {
            "title": _("Your password was changed"),
            "lines": [_("Your API tokens and sessions ended with the old password.")],
            "link": (reverse("login"), _("Log in")),
        },
    )


def _email_throttled(request: HttpRequest) -> dict[str, list[str]]:
    """The API's allowance of reset mails per e-mail address counts this request (as
    :func:`_throttled` does a scope's)."""
    throttle = PasswordResetEmailThrottle()
    if throttle.allow_request(request, None):
        return {}
    wait = throttle.wait()
    return {"detail": [str(exceptions.Throttled(math.ceil(wait) if wait else None).detail)]}


@login_required
def bot_new(request: HttpRequest) -> HttpResponse:
    fields = [
        FormField(
            "name",
            _("Bot name"),
            value=request.POST.get("name", ""),
            help=_("2 to 64 letters, digits, dots, dashes or underscores"),
        ),
        FormField(
            "description",
            _("Description"),
            kind="textarea",
            required=False,
            value=request.POST.get("description", ""),
        ),
        FormField(
            "join_ladders",
            _("Ladders it enters when its first version is active"),
            kind="checkboxes",
            required=False,
            value=(
                request.POST.getlist("join_ladders")
                if request.method == "POST"
                else [services.DEFAULT_LADDER]
            ),
            options=[(name, name) for name in selectors.ladder_names_active()],
            help=_("Rankings come from ladder matches; leave all unticked to enter none."),
        ),
    ]
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        bot, errors = _submit(
            BotSerializer(data=request.POST),
            # (the form always shows the ladders: none ticked means none)
            lambda data: services.bot_create(owner=request.user, **{"join_ladders": [], **data}),
        )
        if bot is not None:
            messages.success(
                request, _("Bot %(name)s created: upload its first version.") % {"name": bot.name}
            )
            return redirect("version_upload", bot_id=bot.pk)
    return _form(
        request,
        title=_("New bot"),
        intro=_("Name your bot; its code comes next."),
        fields=fields,
        errors=errors,
        submit=_("Create the bot"),
    )


@login_required
def version_upload(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = selectors.bot_get(bot_id)
    if bot.owner_id != request.user.pk:
        raise PermissionDenied("only the bot's owner uploads versions")
    fields = [
        FormField(
            "file",
            _("Bot code"),
            kind="file",
            help=_(
                "a .py file (any name), or a .zip with bot.py at its top and any "
                "modules or data beside it, or a bot in C++, Rust, Java or JavaScript "
                "as bidel pack zips it (at most 1 MiB); it is built and played in a short "
                "validation match before it goes live"
            ),
        ),
    ]
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        try:  # the API's allowance of uploads, per user and per bot
            upload_throttle_check(request, bot_id=bot.pk)
        except exceptions.Throttled as refused:
            errors, status = {"detail": [str(refused.detail)]}, 429

        def upload(data: dict[str, Any]) -> BotVersion:
            file = data["file"]
            try:
                return services.version_upload(
                    bot=bot, user=request.user, filename=file.name, data=read_upload(file)
                )
            except (UploadError, ValidationError):
                upload_refused(request)  # (a failed try: its bound, not the new versions')
                raise

        version = None
        if not errors:
            version, errors = _submit(
                VersionUploadSerializer(data={"file": request.FILES.get("file")}), upload
            )
        if version is not None:
            messages.success(
                request,
                _(
                    "Version %(number)s uploaded: it is being validated "
                    "(its log appears below when done)."
                )
                % {"number": version.number},
            )
            return redirect("bot", bot_id=bot.pk)
    allowance = upload_allowance(request.user, bot.pk, request)
    return _form(
        request,
        title=_("Upload a version of %(name)s") % {"name": bot.name},
        intro=_(
            "Left this hour: %(bot)s new versions of this bot, %(user)s of all your bots; "
            "%(failed)s failed tries (a version its validation rejects is one of these, "
            "not a new version)."
        )
        % {"bot": allowance.bot_left, "user": allowance.user_left, "failed": allowance.failed_left},
        fields=fields,
        errors=errors,
        submit=_("Upload"),
        status=status,
        extra={"back": bot},
    )


def _table_size(request: HttpRequest, largest: int) -> int:
    """The seats a table form shows (``?seats=N``, 3 to ``largest``; 4 by default)."""
    try:
        return min(max(int(request.GET.get("seats", 4)), 3), largest)
    except ValueError:
        return 4


def _table_fields(request: HttpRequest, hands: str) -> list[FormField]:
    """The rules and the hands of a table form."""
    return [
        FormField(
            "rules",
            _("Rules"),
            kind="select",
            options=[(name, name.replace("_", " ")) for name in PRESETS],
            value=request.POST.get("rules", "standard"),
        ),
        FormField(
            "hands",
            _("Hands"),
            kind="number",
            required=False,
            value=request.POST.get("hands", hands),
            help=_("1 to 50; empty plays a whole game"),
        ),
    ]


def _table_data(request: HttpRequest, seats: list[Any], players: int) -> dict[str, Any]:
    """What a table form asks for, as the API takes it: the seats, the preset at ``players``
    players (when that is not its own count), the hands if given."""
    preset = request.POST.get("rules", "standard")
    rules: Any = preset
    if preset in PRESETS and players != PRESETS[preset].get("players", 4):
        rules = {"preset": preset, "players": players}
    data: dict[str, Any] = {"seats": [s for s in seats if s != ""], "rules": rules}
    if request.POST.get("hands"):
        data["hands"] = request.POST["hands"]
    return data


@login_required
def challenge_new(request: HttpRequest) -> HttpResponse:
    count = _table_size(request, 11)
    fields = [
        FormField(
            f"seat{i}",
            _("Seat %(number)s") % {"number": i},
            value=request.POST.get(f"seat{i}", ""),
            suggestions="bot-names",
            required=True,  # (the table has `count` seats)
            help=_("a bot's name or id, or a built-in") if i == 1 else "",
        )
        for i in range(1, count + 1)
    ] + _table_fields(request, hands="")
    errors: dict[str, Any] = {}
    if request.method == "POST":
        errors = _throttled(request, "challenges")
        if not errors:
            seats = [_seat_value(request.POST.get(f"seat{i}", "")) for i in range(1, count + 1)]
            data = _table_data(request, seats, len([s for s in seats if s != ""]))
            match, errors = _submit(
                ChallengeSerializer(data=data),
                lambda v: services.challenge_create(
                    user=request.user,
                    seats=v["seats"],
                    rules=v["rules"],
                    hands=v.get("hands"),
                ),
            )
            if match is not None:
                messages.success(
                    request, _("Challenge queued as match %(number)s.") % {"number": match.pk}
                )
                return redirect("match", match_id=match.pk)
    names = selectors.bot_names_playing(200)
    return _form(
        request,
        title=_("New challenge"),
        intro=_(
            "Seat bots at one table; the match "
            "is played on a worker and its replay appears on the match page."
        ),
        fields=fields,
        errors=errors,
        submit=_("Queue the challenge"),
        extra={
            "datalist": _opponents(names),
            "seat_counts": range(3, 12),
            "seat_count": count,
        },
    )


#: The opponents a new game offers first, seat by seat.
PLAY_DEFAULTS = ("heuristic", "montecarlo", "low", "heuristic", "random", "low")


def play_new(request: HttpRequest) -> HttpResponse:
    """Sit down against bots: choose the rules and the opponents; anyone may (throttled), one
    open game per visitor and ``HUMAN_GAMES_MAX_OPEN`` for everyone (arena.services.people): past
    either, this page says so and nothing is queued. ``?opponent=NAME`` (a bot page's link)
    seats that bot first. The seat's secret goes in the seat cookie, never in an address."""
    chosen = request.GET.get("opponent", "")[:64] or PLAY_DEFAULTS[0]
    count = _table_size(request, 7)
    rules_field, hands_field = _table_fields(request, hands="1")
    opponents = [
        FormField(
            f"opponent{i}",
            _("Opponent %(number)s") % {"number": i},
            value=request.POST.get(f"opponent{i}", chosen if i == 1 else PLAY_DEFAULTS[i - 1]),
            suggestions="bot-names",
            help=_("a bot's name or id, or a built-in") if i == 1 else "",
        )
        for i in range(1, count)
    ]
    fields = [rules_field, *opponents, hands_field]
    errors: dict[str, Any] = {}
    status, open_game = 200, None
    if request.method == "POST":
        errors, status = _throttled(request, "human_games"), 429
        if not errors:
            made, errors, status, open_game = _play_open(request, count)
            if made is not None:
                match, token = made
                response = redirect("play", match_id=match.pk)
                _set_seat_cookie(request, response, token)
                return response
    return _form(
        request,
        title=_("Play against bots"),
        intro=_(
            "Sit at a table with bots: your cards, the legal ones marked, chosen by click or "
            "keyboard. The game is refereed like any match and kept with its replay."
        ),
        fields=fields,
        errors=errors,
        submit=_("Sit down"),
        status=status if errors else 200,
        extra={
            "datalist": _opponents(selectors.bot_names_playing(200)),
            "seat_counts": range(3, 8),
            "seat_count": count,
            "open_game": open_game,
        },
    )


def _play_open(
    request: HttpRequest, count: int
) -> tuple[tuple[Match, str] | None, dict[str, Any], int, int | None]:
    """The game the play form asks for (arena.services.people.human_game_open), or why not: the
    errors, the answer's status and the visitor's open game (to link to), if that is why."""
    held = selectors.person_game_open(people.seat_cookie(request.COOKIES))
    if held is not None:  # this browser's seat cookie names a game still open
        return None, error_messages(people.OpenGameError(held)) or {}, 409, held
    serializer = HumanGameSerializer(
        data=_table_data(request, _opponent_values(request, count), count)
    )
    if not serializer.is_valid():
        errors = {name: _messages(value) for name, value in serializer.errors.items()}
        if "seats" in errors:
            errors["opponent1"] = errors.pop("seats")
        return None, errors, 400, None
    data = serializer.validated_data
    user = request.user if request.user.is_authenticated else None
    visitor = people.Visitor(user=user, address=request.META.get("REMOTE_ADDR", ""))
    try:
        made = people.human_game_open(
            visitor=visitor, opponents=data["seats"], rules=data["rules"], hands=data.get("hands")
        )
    except people.OpenGameError as exc:
        # The game is shown only to its own browser or user; to a neighbour behind the same
        # address, only that one is open.
        mine = exc.match_id is not None and user is not None
        mine = mine and selectors.person_seat(exc.match_id, user=user) is not None
        shown = people.OpenGameError(exc.match_id if mine else None)
        return None, error_messages(shown) or {}, 409, exc.match_id if mine else None
    except people.TablesFullError as exc:
        return None, error_messages(exc) or {}, 503, None
    except Exception as exc:  # a domain error in the API's words (as _submit), else a bug
        errors = error_messages(exc) or {}
        if not errors:
            raise
        if "seats" in errors:
            errors["opponent1"] = errors.pop("seats")
        return None, errors, 400, None
    return made, {}, 200, None


def _opponent_values(request: HttpRequest, count: int) -> list[Any]:
    return [_seat_value(request.POST.get(f"opponent{i}", "")) for i in range(1, count)]


def _set_seat_cookie(request: HttpRequest, response: HttpResponse, token: str) -> None:
    """The seat's secret in a cookie no script reads and no other site's page sends."""
    response.set_cookie(
        people.SEAT_COOKIE,
        token,
        max_age=services.HUMAN_LEASE_SECONDS,
        path="/",
        secure=request.is_secure() or settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Strict",
    )


def _seat_of(request: HttpRequest, match_id: int) -> MatchSeat:
    """The person's seat of match ``match_id`` that this visitor holds (its seat cookie, or
    the signed-in user); no such game (404) for anyone else, the same as for no game."""
    user = request.user if request.user.is_authenticated else None
    token = people.seat_cookie(request.COOKIES)
    seat = selectors.person_seat(match_id, token=token, user=user)
    if seat is None:
        raise Http404(_("No such game."))
    return seat


def play_page(request: HttpRequest, match_id: int) -> HttpResponse:
    """A person's seat: the table as it is played, and the person's hand and choices."""
    seat = _seat_of(request, match_id)
    match = seat.match
    if match.status == Match.Status.FINISHED:
        return redirect("match", match_id=match.pk)
    seats = selectors.match_seats(match)
    names = [_("you") if s.human_token else s.label for s in seats]
    frames = {**table_shape(RuleSet.from_spec(match.rules)), "hands": []}
    context = {
        "match": match,
        "seat": seat.seat,
        "frames_json": json.dumps(frames),
        "names_json": json.dumps(names),
        "live_url": f"/ws/matches/{match.pk}/live/",
        "play_url": f"/ws/play/{match.pk}/",
        "away_seconds": settings.HUMAN_AWAY_SECONDS,
        "game_seconds": settings.HUMAN_GAME_SECONDS,
    }
    return render(request, "arena/play.html", context)


@require_POST
def play_leave(request: HttpRequest, match_id: int) -> HttpResponse:
    """The person leaves the table: the fallback plays their seat from here (or a game no
    runner began ends); the match page follows."""
    seat = _seat_of(request, match_id)
    if people.human_game_leave(match_id=match_id, token=seat.human_token):
        messages.success(request, _("You left the table: the referee plays your seat from here."))
    return redirect("match", match_id=match_id)


def play_old_link(request: HttpRequest, token: str) -> HttpResponse:
    """``/play/<secret>/``, the address a seat once had: sent on to the play form, saying so
    (a redirect: Django logs no line for it, and the page shown holds no copy of the address,
    as a 404 page would in its forms)."""
    messages.info(
        request,
        _(
            "A game's page is now /play/ and its match number, opened in the browser that sat "
            "down (or by its signed-in player)."
        ),
    )
    return redirect("play_new")


def _seat_value(text: str) -> Any:
    """A seat as the API takes it: a built-in's name, a bot id, or a bot's name turned into
    its id (anything else is left for the serializer to refuse, in the API's words)."""
    text = text.strip()
    if parse_id(text) is not None:
        return parse_id(text)
    if text and text not in BUILTIN:
        found = selectors.bot_id_named(text)
        if found is not None:
            return found
    return text
