"""The list endpoints' filters (django-filter): each is a query parameter documented in the
OpenAPI schema, and a bad value is a 400 naming the parameter."""

from __future__ import annotations

from typing import Any

import django_filters as filters
from django import forms
from django.core.validators import RegexValidator
from django.db.models import QuerySet

from arena import selectors
from arena.domain import formats
from arena.models import Bot, Match, Tournament
from arena.selectors import Seated, with_seats
from bots_sdk.builtin import BUILTIN
from bots_sdk.ids import ID_PATTERN

# An id: a whole number from 1, short enough for a column ("²" is a digit to str.isdigit).
_ID = RegexValidator(rf"^{ID_PATTERN}$", "must be an id: a whole number from 1")
# A bot: its id, or its name.
_BOT = RegexValidator(rf"^{Bot.NAME_PATTERN}$", "a bot's id or its name")
# A version's number: from 1, within its column (a PositiveIntegerField).
_NUMBER = RegexValidator(r"^[1-9][0-9]{0,8}$", "must be a version number: a whole number from 1")


class IdFilter(filters.CharFilter):
    """A row's id: ASCII digits only, from 1, exactly as sent (no blanks, no other scripts'
    digits: ``٣`` is a digit to Python's ``int`` but names no row)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.extra.update(validators=[_ID], strip=False)

    def filter(self, qs: Any, value: Any) -> Any:
        return super().filter(qs, int(value) if value not in (None, "") else value)


class _MatchFilterForm(forms.Form):
    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if cleaned.get("version") and not cleaned.get("bot") and "bot" not in self.errors:
            # A number names a version only within its bot: v2 of which bot?
            self.add_error("version", "needs bot: a version's number is its bot's (bot=ID)")
        return cleaned


class MatchFilter(filters.FilterSet):
    ladder = IdFilter(field_name="ladder_id", help_text="matches of this ladder (its id)")
    bot = filters.CharFilter(
        method="_bot",
        max_length=64,
        validators=[_BOT],
        strip=False,
        help_text="matches in which this bot sat: its id or its name (any case)",
    )
    version = filters.CharFilter(
        method="_version",
        validators=[_NUMBER],
        strip=False,
        help_text="with bot: the matches in which that bot's version of this number (1, 2, …) "
        "sat; without bot, a 400",
    )
    opponent = filters.CharFilter(
        method="_opponent",
        max_length=64,
        validators=[_BOT],
        strip=False,
        help_text="matches in which this one also sat: a bot's id or name, or a built-in's "
        f"name ({', '.join(sorted(BUILTIN))})",
    )
    status = filters.ChoiceFilter(choices=Match.Status.choices)
    kind = filters.ChoiceFilter(choices=Match.Kind.choices)
    tournament = IdFilter(field_name="tournament_id", help_text="matches of this tournament")
    before = IdFilter(
        field_name="id",
        lookup_expr="lt",
        help_text="matches older than this one (its id): a page from anywhere in a long list",
    )

    class Meta:
        model = Match
        fields = ["ladder", "bot", "version", "opponent", "status", "kind", "tournament", "before"]
        form = _MatchFilterForm

    def filter_queryset(self, queryset: QuerySet[Match]) -> QuerySet[Match]:
        # The seats asked for (bot, its version, an opponent) in one semi-join of the seats.
        query = super().filter_queryset(queryset)
        data = self.form.cleaned_data
        seated = []
        if data.get("bot"):  # with a version, one seat must be both: that version of this bot
            number = int(data["version"]) if data.get("version") else None
            seated.append(Seated(bot=selectors.bot_named(data["bot"]), number=number))
        opponent = data.get("opponent")
        if opponent:
            if opponent in BUILTIN:
                seated.append(Seated(builtin=opponent))
            else:
                seated.append(Seated(bot=selectors.bot_named(opponent)))
        return with_seats(query, *seated)

    def _bot(self, query: QuerySet[Match], name: str, value: int) -> QuerySet[Match]:
        return query  # read by filter_queryset

    def _version(self, query: QuerySet[Match], name: str, value: str) -> QuerySet[Match]:
        return query  # read by _bot (the form refuses a version without a bot)

    def _opponent(self, query: QuerySet[Match], name: str, value: str) -> QuerySet[Match]:
        return query  # read by filter_queryset


class TournamentFilter(filters.FilterSet):
    status = filters.ChoiceFilter(choices=Tournament.Status.choices)
    format = filters.ChoiceFilter(choices=formats.choices)

    class Meta:
        model = Tournament
        fields = ["status", "format"]


class BotFilter(filters.FilterSet):
    search = filters.CharFilter(
        field_name="name",
        lookup_expr="icontains",
        max_length=64,
        help_text="bots whose name contains this (any case)",
    )
    owner = filters.CharFilter(
        field_name="owner__username", max_length=150, help_text="bots of this user (a username)"
    )

    class Meta:
        model = Bot
        fields = ["search", "owner"]
