"""Input validation and output shapes of the REST API; no workflow lives here."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from arena import formats, selectors
from arena.models import Bot, BotVersion, Ladder, Match, MatchSeat, Tournament
from arena.services import CHALLENGE_MAX_HANDS, SeatSpec
from arena.text import clean_text
from bots_sdk.builtin import BUILTIN
from engine.rules import PRESETS


class UserCreateSerializer(serializers.Serializer):
    username = serializers.RegexField(r"^[A-Za-z0-9_.-]{3,32}$", max_length=32)
    password = serializers.CharField(
        min_length=10, max_length=128, write_only=True, trim_whitespace=False
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Django's password validators (settings.AUTH_PASSWORD_VALIDATORS), the username
        known to the similarity check."""
        user = get_user_model()(username=attrs["username"])
        try:
            validate_password(attrs["password"], user=user)
        except DjangoValidationError as exc:
            raise serializers.ValidationError({"password": list(exc.messages)}) from None
        return attrs


_ID_TEXT = re.compile(r"[1-9][0-9]{0,17}")
_SEAT_SCHEMA = {
    "oneOf": [
        {"type": "integer", "minimum": 1, "description": "a bot's id (its active version plays)"},
        {"type": "string", "enum": sorted(BUILTIN), "description": "a built-in bot"},
    ]
}


@extend_schema_field(_SEAT_SCHEMA)
class SeatField(serializers.Field):  # type: ignore[type-arg]
    """Who sits: a bot's id (a number, or its digits in a form body) or a built-in's name."""

    def to_internal_value(self, data: Any) -> int | str:
        if isinstance(data, int) and not isinstance(data, bool) and 1 <= data < 2**63:
            return data
        if isinstance(data, str):
            if data in BUILTIN:
                return data
            if _ID_TEXT.fullmatch(data):
                return int(data)
        raise serializers.ValidationError(
            gettext("%(seat)s is neither a bot id nor a built-in") % {"seat": repr(str(data)[:40])}
        )

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": list(PRESETS), "description": "a preset by name"},
            {
                "type": "object",
                "additionalProperties": True,
                "description": '{"preset": name, ...settings} (docs/engine.md lists them)',
            },
        ]
    }
)
class RulesField(serializers.JSONField):
    """The rules: a preset's name or a rules object (checked by the engine when used)."""


@extend_schema_field(
    {
        "type": "object",
        "properties": {name: {"type": "number"} for name in formats.MatchTest.defaults},
        "additionalProperties": False,
        "description": "match_test only: the SPRT's settings (defaults: "
        + ", ".join(f"{k} {v:g}" for k, v in formats.MatchTest.defaults.items())
        + ")",
    }
)
class ParamsField(serializers.DictField):
    """A match test's SPRT settings (checked by arena.tournaments)."""


class NamedBotSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="null for a built-in")
    name = serializers.CharField()


class UserSerializer(serializers.ModelSerializer):
    class Meta:
        model = get_user_model()
        fields = ["id", "username"]


class MeSerializer(serializers.ModelSerializer):
    """The signed-in user: who, whether staff, and their bots."""

    bots = serializers.SerializerMethodField()

    class Meta:
        model = get_user_model()
        fields = ["id", "username", "is_staff", "date_joined", "bots"]

    @extend_schema_field(NamedBotSerializer(many=True))
    def get_bots(self, user: Any) -> list[dict[str, Any]]:
        return [{"id": b.pk, "name": b.name} for b in selectors.bots_of(user)]


class _LadderNames(serializers.ManyRelatedField):
    """A list of ladder names where leaving the field out means the default, in a form
    body as in JSON (DRF reads a form's missing list as an empty one)."""

    def get_value(self, dictionary: Any) -> Any:
        if self.field_name not in dictionary:
            return serializers.empty
        return super().get_value(dictionary)


class _LadderName(serializers.SlugRelatedField):  # type: ignore[type-arg]
    """An active ladder by name; a name PostgreSQL could not compare (NUL, a lone surrogate)
    is cleaned first, so it is simply no such ladder."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(slug_field="name", queryset=selectors.ladders_active(), **kwargs)

    def to_internal_value(self, data: Any) -> Any:
        return super().to_internal_value(clean_text(data) if isinstance(data, str) else data)


class BotSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    name = serializers.RegexField(r"^[A-Za-z0-9_.-]{2,64}$", max_length=64)
    description = serializers.CharField(max_length=2000, allow_blank=True, required=False)
    active_version = serializers.SerializerMethodField()
    join_ladders = _LadderNames(
        child_relation=_LadderName(),
        required=False,
        help_text="Ladders (by name) the bot enters by itself when its first version becomes "
        'active; default ["standard"], [] for none.',
    )

    class Meta:
        model = Bot
        fields = [
            "id",
            "name",
            "description",
            "owner",
            "disabled",
            "retired_at",
            "created_at",
            "active_version",
            "join_ladders",
        ]
        read_only_fields = ["id", "owner", "disabled", "retired_at", "created_at", "active_version"]

    def get_active_version(self, bot: Bot) -> int | None:
        version = selectors.active_version(bot.pk)
        return version.number if version else None


class BotUpdateSerializer(serializers.Serializer):
    """What its owner may change: the description and the ladders it joins (not its name)."""

    description = serializers.CharField(max_length=2000, allow_blank=True, required=False)
    join_ladders = _LadderNames(
        child_relation=_LadderName(),
        required=False,
    )


class VersionUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        allow_empty_file=True,  # refused by the upload check, with its own message
        error_messages={"null": "No file was submitted.", "required": "No file was submitted."},
    )


class VersionSerializer(serializers.ModelSerializer):
    bot = serializers.IntegerField(source="bot_id", read_only=True)

    class Meta:
        model = BotVersion
        fields = ["bot", "number", "filename", "sha256", "status", "created_at"]


class VersionOwnerSerializer(VersionSerializer):
    class Meta(VersionSerializer.Meta):
        fields = [*VersionSerializer.Meta.fields, "validation_log"]


class LadderSerializer(serializers.ModelSerializer):
    class Meta:
        model = Ladder
        fields = ["id", "name", "rules", "table_size", "hands", "concurrency", "active"]


class RankingSerializer(serializers.Serializer):
    """A row of ``selectors.ladder_rankings`` (documentation of the shape only)."""

    rank = serializers.IntegerField(allow_null=True, help_text="1 = best; null: not rated yet")
    bot = NamedBotSerializer()
    builtin = serializers.BooleanField()
    version = serializers.IntegerField(allow_null=True)
    rating = serializers.FloatField(allow_null=True, help_text="null: not rated yet")
    ci95 = serializers.ListField(
        child=serializers.FloatField(), min_length=2, max_length=2, allow_null=True
    )
    live_elo = serializers.FloatField()
    matches = serializers.IntegerField()
    provisional = serializers.BooleanField(
        help_text="not rated yet, fewer than 10 matches, or a 95% interval wider than 400"
    )


class EntryCreateSerializer(serializers.Serializer):
    bot = serializers.IntegerField(min_value=1)


class FaultSerializer(serializers.Serializer):
    """One fault of a seat (documentation of the shape only)."""

    class_ = serializers.CharField(help_text="timeout, crash, illegal, protocol or memory")
    detail = serializers.CharField()
    decision = serializers.CharField(allow_null=True, required=False)
    hand = serializers.IntegerField(allow_null=True, required=False)

    def get_fields(self) -> dict[str, Any]:  # "class" is a keyword in Python
        fields = super().get_fields()
        fields["class"] = fields.pop("class_")
        return fields


class SeatSerializer(serializers.ModelSerializer):
    bot = serializers.SerializerMethodField()
    version = serializers.SerializerMethodField()
    rank = serializers.SerializerMethodField()
    faults = FaultSerializer(many=True, read_only=True)

    class Meta:
        model = MatchSeat
        fields = ["seat", "bot", "version", "score", "rank", "faults"]

    @extend_schema_field(NamedBotSerializer)
    def get_bot(self, seat: MatchSeat) -> dict[str, Any]:
        if seat.version_id:
            return {"id": seat.version.bot_id, "name": seat.version.bot.name}  # type: ignore[union-attr]
        return {"id": None, "name": seat.builtin}

    def get_version(self, seat: MatchSeat) -> int | None:
        return seat.version.number if seat.version_id else None  # type: ignore[union-attr]

    def get_rank(self, seat: MatchSeat) -> int | None:
        """1 for the winner (the fewest points), as in every ranking; null until finished."""
        return None if seat.rank is None else seat.rank + 1


class MatchSerializer(serializers.ModelSerializer):
    seats = SeatSerializer(many=True, read_only=True)
    seed = serializers.SerializerMethodField()

    class Meta:
        model = Match
        fields = [
            "id",
            "status",
            "kind",
            "rules",
            "seed",
            "hands",
            "engine_version",
            "ladder",
            "attempts",
            "seats",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_seed(self, match: Match) -> int | None:
        """The deal seed, once the match is finished (null before: nobody may know the deals
        of a match still to be played)."""
        return match.seed if match.status == Match.Status.FINISHED else None


class ChallengeSerializer(serializers.Serializer):
    seats = serializers.ListField(child=SeatField(), min_length=3, max_length=11)
    rules = RulesField(default="standard")
    hands = serializers.IntegerField(min_value=1, max_value=CHALLENGE_MAX_HANDS, required=False)

    def validate_seats(self, value: list[Any]) -> list[SeatSpec]:
        """Each seat a bot id with an active version, or a built-in's name."""
        seats = []
        for item in value:
            if isinstance(item, str) and item in BUILTIN:
                seats.append(SeatSpec(builtin=item))
            elif isinstance(item, int):  # (SeatField took only ids and built-in names)
                version = selectors.active_version(item)
                if version is None or version.bot.disabled:
                    raise serializers.ValidationError(
                        gettext("bot %(id)s has no active version") % {"id": item}
                    )
                seats.append(SeatSpec(version=version))
            else:
                raise serializers.ValidationError(f"{item!r} is neither a bot id nor a built-in")
        return seats


class HumanGameSerializer(ChallengeSerializer):
    """A person's game: the opponents (bots or built-ins), the rules, the hands, the seat."""

    seats = serializers.ListField(child=SeatField(), min_length=2, max_length=10)
    seat = serializers.IntegerField(min_value=0, max_value=10, default=0)


class TournamentSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    bots = serializers.SerializerMethodField()

    class Meta:
        model = Tournament
        fields = [
            "id",
            "name",
            "rules",
            "format",
            "table_size",
            "games_per_table",
            "hands_per_table",
            "duplicate",
            "ladder",
            "starts_at",
            "repeat",
            "status",
            "rounds",
            "current_round",
            "params",
            "verdict",
            "outcome",
            "edition_of",
            "bots",
            "progress",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_progress(self, tournament: Any) -> dict[str, int]:
        return selectors.tournament_progress(tournament)

    def get_bots(self, tournament: Any) -> list[dict[str, Any]]:
        return [{"id": e.bot_id, "name": e.label} for e in selectors.tournament_field(tournament)]


class TournamentCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    rules = RulesField(default="standard")
    format = serializers.ChoiceField(choices=formats.choices())
    bots = serializers.ListField(child=SeatField(), min_length=2, max_length=64)
    table_size = serializers.IntegerField(min_value=3, max_value=11, default=4)
    games_per_table = serializers.IntegerField(min_value=1, max_value=50, default=1)
    hands_per_table = serializers.IntegerField(min_value=1, max_value=100, required=False)
    duplicate = serializers.BooleanField(default=False)
    ladder = serializers.IntegerField(min_value=1, required=False)
    starts_at = serializers.DateTimeField(required=False)
    repeat = serializers.CharField(max_length=100, required=False, allow_blank=True)
    rounds = serializers.IntegerField(min_value=1, max_value=100, required=False)
    params = ParamsField(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = formats.choices()  # (formats registered since import)


class StandingSerializer(serializers.Serializer):
    """A row of ``selectors.tournament_standings`` (documentation of the shape only)."""

    rank = serializers.IntegerField()
    entry = serializers.IntegerField()
    bot = NamedBotSerializer()
    version = serializers.IntegerField(allow_null=True)
    points = serializers.FloatField()
    mean_points_per_hand = serializers.FloatField()
    ci95 = serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2)
    hands = serializers.IntegerField()
    matches = serializers.IntegerField()
    wins = serializers.IntegerField()
    faults = serializers.IntegerField()
