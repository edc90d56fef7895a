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

from arena import selectors
from arena.domain import formats
from arena.models import (
    ApiToken,
    Bot,
    BotVersion,
    Comparison,
    Ladder,
    Match,
    MatchSeat,
    Tournament,
)
from arena.services import CHALLENGE_MAX_HANDS, SeatSpec
from arena.text import clean_text
from bots_sdk.analysis import MAX_SAMPLES as ANALYSIS_MAX_SAMPLES
from bots_sdk.analysis import SAMPLES as ANALYSIS_SAMPLES
from bots_sdk.builtin import BUILTIN
from engine.rules import PRESETS

#: Every error body (``arena.api.views.error_body``), as the schema says it.
ERROR_SCHEMA = {
    "type": "object",
    "additionalProperties": {"type": "array", "items": {"type": "string"}},
    "description": "field → messages; `detail` for what concerns no one field",
}


class UserCreateSerializer(serializers.Serializer):
    username = serializers.RegexField(r"^[A-Za-z0-9_.-]{3,32}$", max_length=32)
    password = serializers.CharField(
        min_length=10, max_length=128, write_only=True, trim_whitespace=False
    )
    email = serializers.EmailField(
        max_length=254,
        required=False,
        allow_blank=True,
        help_text="optional: where a password reset is sent",
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
    """A match test's SPRT settings (checked by arena.services.tournaments)."""


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
        fields = ["id", "username", "email", "is_staff", "date_joined", "bots"]

    @extend_schema_field(NamedBotSerializer(many=True))
    def get_bots(self, user: Any) -> list[dict[str, Any]]:
        return [{"id": b.pk, "name": b.name} for b in selectors.bots_of(user)]


class MeUpdateSerializer(serializers.Serializer):
    """A change of the signed-in user's e-mail address, with their current password."""

    email = serializers.EmailField(
        max_length=254, allow_blank=True, help_text='where a password reset is sent; "" for none'
    )
    password = serializers.CharField(
        max_length=128, write_only=True, trim_whitespace=False, help_text="the current password"
    )


class TokenNameSerializer(serializers.Serializer):
    """What a new token is for (the log-in's optional field)."""

    name = serializers.CharField(
        max_length=64,
        required=False,
        allow_blank=True,
        help_text="what the token is for; the client's User-Agent when left out",
    )


class TokenObtainSerializer(TokenNameSerializer):
    """A log-in for a new API token."""

    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, write_only=True, trim_whitespace=False)


class ApiTokenSerializer(serializers.ModelSerializer):
    """An API token as its owner sees it: never its key (none is stored)."""

    prefix = serializers.CharField(read_only=True, help_text="the key's first characters")
    ends_with_session = serializers.SerializerMethodField(
        help_text="made by a web session (the account page): revoked when that session logs out"
    )

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created", "last_used", "expires", "ends_with_session"]
        read_only_fields = fields

    def get_ends_with_session(self, token: ApiToken) -> bool:
        return bool(token.session_key)


class TokenIssuedSerializer(ApiTokenSerializer):
    """A new API token with its key: the only time the key is shown."""

    token = serializers.CharField(
        read_only=True, help_text="the key: send it as `Authorization: Token <key>`"
    )

    class Meta(ApiTokenSerializer.Meta):
        fields = ["token", *ApiTokenSerializer.Meta.fields]
        read_only_fields = fields


class TokensRevokedSerializer(serializers.Serializer):
    revoked = serializers.IntegerField(help_text="how many tokens were revoked")


class PasswordResetSerializer(serializers.Serializer):
    email = serializers.EmailField(max_length=254)


class PasswordResetConfirmSerializer(serializers.Serializer):
    """What the reset mail's link carries (its last two parts), and the new password."""

    uid = serializers.CharField(max_length=32, help_text="the link's first part")
    token = serializers.CharField(max_length=64, help_text="the link's second part")
    new_password = serializers.CharField(max_length=128, write_only=True, trim_whitespace=False)


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="what was done, in words")


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
    name = serializers.RegexField(
        rf"^{Bot.NAME_PATTERN}$",
        max_length=64,
        error_messages={
            "invalid": "a bot's name is 1 to 64 letters, digits, '_', '.' or '-' (no spaces)"
        },
    )
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
            "notice",
        ]
        read_only_fields = [
            "id",
            "owner",
            "disabled",
            "retired_at",
            "created_at",
            "active_version",
            "notice",
        ]
        extra_kwargs = {
            "notice": {
                "help_text": "what the platform last did to its versions by itself (a version "
                "benched, a candidate not made active); empty when nothing"
            }
        }

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
    activate = serializers.ChoiceField(
        choices=BotVersion.Activation.values,
        default=BotVersion.Activation.NOW.value,
        help_text="what its validation leads to: `now` (it replaces the active version), "
        "`if-not-weaker` (it plays a comparison with the active version first and replaces "
        "it only if not found weaker and without a fault), `never` (validated only: "
        "activate it yourself)",
    )


class VersionActivateSerializer(serializers.Serializer):
    """Which of the bot's validated versions plays."""

    version = serializers.IntegerField(min_value=1, max_value=999_999_999)


class ComparisonRequestSerializer(serializers.Serializer):
    """Two of the bot's versions (by number) that have been active: is ``newer`` stronger
    than ``older``?"""

    older = serializers.IntegerField(min_value=1, max_value=999_999_999)
    newer = serializers.IntegerField(min_value=1, max_value=999_999_999)


class ComparisonSerializer(serializers.ModelSerializer):
    """A comparison of two versions of a bot on duplicate deals (arena.services.comparisons)."""

    older = serializers.IntegerField(source="older.number", read_only=True)
    newer = serializers.IntegerField(source="newer.number", read_only=True)
    requested = serializers.SerializerMethodField(
        help_text="'owner' when its owner asked for it, 'new version' when the platform did"
    )
    deals = serializers.SerializerMethodField(help_text="duplicate deals played so far")
    mean = serializers.SerializerMethodField(
        help_text="newer minus older, in points a hand (negative: the newer takes fewer)"
    )
    ci95 = serializers.SerializerMethodField()
    decision = serializers.SerializerMethodField(
        help_text="the SPRT's: H1 (newer stronger), H0 (not stronger), or '' undecided"
    )

    class Meta:
        model = Comparison
        fields = [
            "id",
            "older",
            "newer",
            "status",
            "verdict",
            "requested",
            "deals",
            "mean",
            "ci95",
            "decision",
            "rounds",
            "created_at",
            "finished_at",
        ]

    def get_requested(self, comparison: Comparison) -> str:
        return "owner" if comparison.requested_by_id else "new version"

    def get_deals(self, comparison: Comparison) -> int:
        return int(comparison.result.get("deals", 0))

    def get_mean(self, comparison: Comparison) -> float | None:
        return comparison.result.get("mean")

    @extend_schema_field(serializers.ListField(child=serializers.FloatField(), allow_null=True))
    def get_ci95(self, comparison: Comparison) -> list[float] | None:
        result = comparison.result
        return [result["low"], result["high"]] if "low" in result else None

    def get_decision(self, comparison: Comparison) -> str:
        return str(comparison.result.get("decision", ""))


class VersionRatingSerializer(serializers.Serializer):
    """A version's rating on one ladder (documentation of the shape only)."""

    ladder = serializers.CharField()
    rating = serializers.FloatField()
    ci95 = serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2)
    matches = serializers.IntegerField(help_text="the rated matches this version played")
    provisional = serializers.BooleanField(
        help_text="fewer than 10 matches, or a 95% interval wider than 400"
    )


class VersionSerializer(serializers.ModelSerializer):
    bot = serializers.IntegerField(source="bot_id", read_only=True)
    ratings = serializers.SerializerMethodField(
        help_text="its rating on each ladder, fitted on the matches it played alone"
    )
    compared = serializers.SerializerMethodField(
        help_text="the latest comparison of this version with an earlier one (null: none)"
    )

    class Meta:
        model = BotVersion
        fields = [
            "bot",
            "number",
            "filename",
            "sha256",
            "status",
            "activation",
            "created_at",
            "activated_at",
            "ratings",
            "compared",
        ]

    @extend_schema_field(VersionRatingSerializer(many=True))
    def get_ratings(self, version: BotVersion) -> list[dict[str, Any]]:
        return selectors.version_ratings(version)

    @extend_schema_field(ComparisonSerializer(allow_null=True))
    def get_compared(self, version: BotVersion) -> dict[str, Any] | None:
        comparison = selectors.version_compared(version)
        return None if comparison is None else dict(ComparisonSerializer(comparison).data)


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
    version = serializers.IntegerField(allow_null=True, help_text="the active version")
    rated_version = serializers.IntegerField(
        allow_null=True,
        help_text="the version whose fit the rating is: the active one once fitted, an "
        "earlier one until then (the row is then provisional)",
    )
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
    player = serializers.SerializerMethodField(
        help_text="Who sat: an uploaded bot's version, a built-in, or a person (/play/)."
    )

    class Meta:
        model = MatchSeat
        fields = [
            "seat",
            "player",
            "bot",
            "version",
            "score",
            "rank",
            "faults",
            "expected",
            "hand_expected",
        ]
        extra_kwargs = {
            "expected": {
                "help_text": "The luck of the deal: the points this seat's cards were worth in "
                "all, before anyone chose (expected under the reference policy); a score "
                "below it played better than its cards. Null when not valued."
            },
            "hand_expected": {"help_text": "The same, hand by hand (null: a hand not valued)."},
        }

    @extend_schema_field(NamedBotSerializer)
    def get_bot(self, seat: MatchSeat) -> dict[str, Any]:
        """A person's seat: no id, and the player's username (empty for a visitor)."""
        if seat.version_id:
            return {"id": seat.version.bot_id, "name": seat.version.bot.name}  # type: ignore[union-attr]
        if seat.builtin:
            return {"id": None, "name": seat.builtin}
        return {"id": None, "name": seat.person.get_username() if seat.person_id else ""}  # type: ignore[union-attr]

    @extend_schema_field(serializers.ChoiceField(choices=["version", "builtin", "person"]))
    def get_player(self, seat: MatchSeat) -> str:
        return "version" if seat.version_id else "builtin" if seat.builtin else "person"

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


class AnalysisRequestSerializer(serializers.Serializer):
    samples = serializers.IntegerField(
        required=False,
        min_value=2,
        max_value=ANALYSIS_MAX_SAMPLES,
        help_text=f"deals each play is valued on (default {ANALYSIS_SAMPLES}, as bidel analyse)",
    )


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
                if version is None:  # (one disabled: arena.services.policy, in match_create)
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
    expected_per_hand = serializers.FloatField(
        allow_null=True,
        help_text="The luck of its deals: points per hand its cards were worth (expected under "
        "the reference policy, before anyone chose); null when none was valued.",
    )
