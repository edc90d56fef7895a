"""Server-rendered pages for people: thin views over the selectors and services (the API's
twins). The forms validate with the API's serializers, so they say the same things."""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
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
    UserCreateSerializer,
    VersionUploadSerializer,
)
from arena.charts import Point, rating_history_svg
from arena.errors import error_messages
from arena.models import BotVersion, LadderEntry, Match, MatchSeat, Tournament
from arena.uploads import read_upload
from bots_sdk.builtin import BUILTIN
from bots_sdk.frames import replay_frames, table_shape
from engine.rules import PRESETS, RuleSet

#: Rating-history points drawn per ladder on a bot page (thinned evenly by the database).
HISTORY_POINTS = 200


def _with_bars(rows: list[dict[str, Any]], value: str) -> list[dict[str, Any]]:
    """Each row's 95% interval and value as percentages of the whole table's range (the
    interval bars)."""
    low = min((r["ci95"][0] for r in rows if r["ci95"]), default=0.0)
    high = max((r["ci95"][1] for r in rows if r["ci95"]), default=1.0)
    span = max(high - low, 1e-9)
    for row in rows:
        if not row["ci95"]:  # not rated yet: no bar
            continue
        row["bar_left"] = round(100 * (row["ci95"][0] - low) / span, 2)
        row["bar_width"] = round(100 * (row["ci95"][1] - row["ci95"][0]) / span, 2)
        row["dot"] = round(100 * (row[value] - low) / span, 2)
    return rows


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


#: Rows per page of the indexes.
PAGE_SIZE = 25


def _page(request: HttpRequest, query: Any) -> Any:
    """The requested page (``?page=``) of ``query``: a bad or past-the-end number gives the
    last page, not an error."""
    return Paginator(query, PAGE_SIZE).get_page(request.GET.get("page"))


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
    builtins = [(name, _builtin_summary(name)) for name in sorted(BUILTIN)]
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


def _int_or_none(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() and len(text) < 12 else None


def matches_index(request: HttpRequest) -> HttpResponse:
    get = request.GET
    kind = get.get("kind", "") if get.get("kind", "") in Match.Kind.values else ""
    opponent_text = get.get("opponent", "").strip()
    opponent: int | str | None = _int_or_none(opponent_text)
    if opponent is None and opponent_text in BUILTIN:
        opponent = opponent_text
    query = selectors.matches(
        bot=_int_or_none(get.get("bot")),
        opponent=opponent,
        kind=kind or None,
        tournament=_int_or_none(get.get("tournament")),
    )
    return render(
        request,
        "arena/matches.html",
        {
            "page": _page(request, query),
            "kind": kind,
            "kinds": Match.Kind.choices,
            "bot": get.get("bot", ""),
            "opponent": opponent_text,
            "tournament": get.get("tournament", ""),
            "query": _query_without_page(request),
            "builtins": sorted(BUILTIN),
        },
    )


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
    rows = _with_bars(selectors.ladder_rankings(ladder), "rating")
    return render(request, "arena/ladder.html", {"ladder": ladder, "rows": rows})


#: A version in one of these is still to be validated: its page refreshes itself.
_WAITING = (BotVersion.Status.PENDING, BotVersion.Status.VALIDATING)


def bot_page(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = selectors.bot_get(bot_id)
    versions = selectors.bot_versions(bot, newest_first=True)
    owner = selectors.can_see_logs(request.user, bot)  # its logs, and the upload link
    matches = selectors.recent_matches(20, stderr=owner, bot=bot)
    entries = selectors.ladder_entries(bot=bot)
    ladder_of = {entry.pk: entry.ladder.name for entry in entries}
    points = selectors.rating_history(list(ladder_of), points=HISTORY_POINTS)
    series: dict[str, list[Point]] = {}
    for entry_id, at, rating, low, high, count in points:
        series.setdefault(ladder_of[entry_id], []).append(Point(at, rating, low, high, count))
    chart = rating_history_svg(series, title=_("Rating history of %(name)s") % {"name": bot.name})
    context = {
        "bot": bot,
        "versions": versions,
        "owner": owner,
        "matches": matches,
        "logs": selectors.bot_logs(bot, matches, request.user),
        "ratings": _ratings(entries),
        "chart": mark_safe(chart),  # built from numbers and escaped names
        "history": [(name, points[-10:][::-1]) for name, points in series.items()],
        "refresh": any(v.status in _WAITING for v in versions),
    }
    return render(request, "arena/bot.html", context)


def match_page(request: HttpRequest, match_id: int) -> HttpResponse:
    match = selectors.match_get(match_id)
    seats = selectors.match_seats(match)
    names = [s.version.bot.name if s.version else s.builtin for s in seats]  # type: ignore[union-attr]
    frames = None
    live = match.status in (Match.Status.QUEUED, Match.Status.RUNNING)
    if match.record is not None:
        frames = replay_frames(match.record)
        frames["faults"] = [seat.get("faults", []) for seat in match.record.get("seats", [])]
    elif live:  # followed as it is played (arena/consumers.py)
        frames = {**table_shape(RuleSet.from_spec(match.rules)), "hands": []}
    context = {
        "match": match,
        "seats": seats,
        "frames_json": json.dumps(frames) if frames else "",
        "names_json": json.dumps(names),
        "logs": selectors.match_logs(seats, request.user),
        "finished": match.status == Match.Status.FINISHED,
        "live_url": f"/ws/matches/{match.pk}/live/" if live else "",
    }
    return render(request, "arena/match.html", context)


def tournament_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    tournament = selectors.tournament_get(tournament_id)
    rows = _with_bars(selectors.tournament_standings(tournament), "mean_points_per_hand")
    pairs = selectors.tournament_crosstable(tournament)
    order = [r["entry"] for r in rows]

    def cell(row: int, column: int) -> str:
        return "—" if row == column else "{}/{}".format(*pairs.get((row, column), (0, 0)))

    crosstable = [{"row": r, "cells": [cell(r["entry"], c) for c in order]} for r in rows]
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
    names = {f.name for f in fields}
    for f in fields:
        f.errors = errors.get(f.name, [])
    general = [m for name, ms in errors.items() if name not in names for m in ms]
    context = {
        "title": title,
        "intro": intro,
        "fields": fields,
        "general": general,
        "submit": submit,
        "multipart": any(f.kind == "file" for f in fields),
        **(extra or {}),
    }
    return render(
        request, "arena/form.html", context, status=400 if errors and status == 200 else status
    )


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
        extra={"show_signup": True},
    )


@require_POST
def logout_page(request: HttpRequest) -> HttpResponse:
    logout(request)
    return redirect("home")


@login_required
def account(request: HttpRequest) -> HttpResponse:
    status = 200
    if request.method == "POST":  # a new API token (the old one stops working)
        refused = _throttled(request, "token")
        if not refused:
            services.token_rotate(user=request.user)
            messages.success(request, _("A new API token was made; the old one no longer works."))
            return redirect("account")
        for message in refused["detail"]:
            messages.error(request, message)
        status = 429
    context = {
        "bots": selectors.bots_of(request.user),
        "token": selectors.token_of(request.user),
        "games": selectors.games_of(request.user),
    }
    return render(request, "arena/account.html", context, status=status)


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
    if request.method == "POST":

        def upload(data: dict[str, Any]) -> BotVersion:
            file = data["file"]
            content = read_upload(file)
            return services.version_upload(
                bot=bot, user=request.user, filename=file.name, data=content
            )

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
    return _form(
        request,
        title=_("Upload a version of %(name)s") % {"name": bot.name},
        intro="",
        fields=fields,
        errors=errors,
        submit=_("Upload"),
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
            "datalist": sorted(BUILTIN) + names,
            "seat_counts": range(3, 12),
            "seat_count": count,
        },
    )


#: The opponents a new game offers first, seat by seat.
PLAY_DEFAULTS = ("heuristic", "montecarlo", "low", "heuristic", "random", "low")


def play_new(request: HttpRequest) -> HttpResponse:
    """Sit down against bots: choose the rules and the opponents; anyone may (throttled).
    ``?opponent=NAME`` (a bot page's link) seats that bot first."""
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
    if request.method == "POST":
        errors = _throttled(request, "human_games")
        if not errors:
            chosen_seats = [
                _seat_value(request.POST.get(f"opponent{i}", "")) for i in range(1, count)
            ]
            data = _table_data(request, chosen_seats, count)
            user = request.user if request.user.is_authenticated else None
            made, errors = _submit(
                HumanGameSerializer(data=data),
                lambda v: services.human_game_create(
                    user=user, opponents=v["seats"], rules=v["rules"], hands=v.get("hands")
                ),
            )
            if "seats" in errors:
                errors["opponent1"] = errors.pop("seats")
            if made is not None:
                return redirect("play", token=made[1])
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
        extra={
            "datalist": sorted(BUILTIN) + selectors.bot_names_playing(200),
            "seat_counts": range(3, 8),
            "seat_count": count,
        },
    )


def play_page(request: HttpRequest, token: str) -> HttpResponse:
    """A person's seat: the table as it is played, and the person's hand and choices."""
    seat = selectors.person_seat(token)
    if seat is None:
        raise Http404(_("No such game."))
    match = seat.match
    if match.status == Match.Status.FINISHED:
        return redirect("match", match_id=match.pk)
    seats = selectors.match_seats(match)
    names = [_("you") if s.human_token else _seat_name(s) for s in seats]
    frames = {**table_shape(RuleSet.from_spec(match.rules)), "hands": []}
    context = {
        "match": match,
        "seat": seat.seat,
        "frames_json": json.dumps(frames),
        "names_json": json.dumps(names),
        "live_url": f"/ws/matches/{match.pk}/live/",
        "play_url": f"/ws/play/{token}/",
    }
    return render(request, "arena/play.html", context)


def _seat_name(seat: MatchSeat) -> str:
    return seat.version.bot.name if seat.version else seat.builtin


def _seat_value(text: str) -> Any:
    """A seat as the API takes it: a built-in's name, a bot id, or a bot's name turned into
    its id (anything else is left for the serializer to refuse, in the API's words)."""
    text = text.strip()
    if text.isascii() and text.isdigit() and len(text) <= 18:  # "²" is a digit, not a number
        return int(text)
    if text and text not in BUILTIN:
        found = selectors.bot_id_named(text)
        if found is not None:
            return found
    return text
