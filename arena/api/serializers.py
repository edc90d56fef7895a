"""Input validation and output shapes of the REST API; no workflow lives here."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import serializers

from arena.models import Bot, BotVersion, Ladder, Match, MatchSeat
from arena.selectors import active_version


class UserCreateSerializer(serializers.Serializer):
    username = serializers.RegexField(r"^[A-Za-z0-9_.-]{3,32}$", max_length=32)
    password = serializers.CharField(
        min_length=10, max_length=128, write_only=True, trim_whitespace=False
    )


class UserSerializer(serializers.ModelSerializer):
    class Meta:
        model = get_user_model()
        fields = ["id", "username"]


class BotSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    name = serializers.RegexField(r"^[A-Za-z0-9_.-]{2,64}$", max_length=64)
    active_version = serializers.SerializerMethodField()

    class Meta:
        model = Bot
        fields = ["id", "name", "description", "owner", "disabled", "created_at", "active_version"]
        read_only_fields = ["id", "owner", "disabled", "created_at", "active_version"]

    def get_active_version(self, bot: Bot) -> int | None:
        version = active_version(bot.pk)
        return version.number if version else None


class VersionUploadSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True)


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


class EntryCreateSerializer(serializers.Serializer):
    bot = serializers.IntegerField(min_value=1)


class SeatSerializer(serializers.ModelSerializer):
    bot = serializers.SerializerMethodField()
    version = serializers.SerializerMethodField()

    class Meta:
        model = MatchSeat
        fields = ["seat", "bot", "version", "score", "rank", "faults"]

    def get_bot(self, seat: MatchSeat) -> dict[str, Any]:
        if seat.version_id:
            return {"id": seat.version.bot_id, "name": seat.version.bot.name}  # type: ignore[union-attr]
        return {"id": None, "name": seat.builtin}

    def get_version(self, seat: MatchSeat) -> int | None:
        return seat.version.number if seat.version_id else None  # type: ignore[union-attr]


class MatchSerializer(serializers.ModelSerializer):
    seats = SeatSerializer(many=True, read_only=True)

    class Meta:
        model = Match
        fields = [
            "id", "status", "kind", "rules", "seed", "hands", "engine_version", "ladder",
            "attempts", "seats", "created_at", "started_at", "finished_at",
        ]  # fmt: skip


class ChallengeSerializer(serializers.Serializer):
    seats = serializers.ListField(child=serializers.JSONField(), min_length=3, max_length=11)
    rules = serializers.JSONField(default="standard")
    hands = serializers.IntegerField(min_value=1, max_value=50, required=False)
