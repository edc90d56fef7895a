"""The Django admin for every model, with the operators' actions."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet

from arena import services
from arena.models import (
    Bot,
    BotVersion,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
    Rating,
    RatingPoint,
)


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "owner", "disabled", "created_at"]
    list_filter = ["disabled"]
    search_fields = ["name", "owner__username"]
    actions = ["disable", "enable"]

    @admin.action(description="Disable the selected bots (they leave matchmaking)")
    def disable(self, request: Any, queryset: QuerySet[Bot]) -> None:
        count = queryset.update(disabled=True)
        self.message_user(request, f"{count} bots disabled", messages.SUCCESS)

    @admin.action(description="Enable the selected bots")
    def enable(self, request: Any, queryset: QuerySet[Bot]) -> None:
        queryset.update(disabled=False)


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    list_display = ["id", "bot", "number", "status", "sha256", "created_at"]
    list_filter = ["status"]
    exclude = ["code"]
    readonly_fields = ["bot", "number", "filename", "sha256", "validation_log"]


class MatchSeatInline(admin.TabularInline):
    model = MatchSeat
    extra = 0
    # Who sat and how it went, as played: shown, not edited (as a choice, each seat would list
    # every tournament entry and every user, a query per entry's bot).
    readonly_fields = [
        "seat",
        "entry",
        "tournament_entry",
        "version",
        "builtin",
        "person",
        "score",
        "rank",
        "faults",
    ]
    exclude = ["stderr"]


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "ladder", "attempts", "created_at", "finished_at"]
    list_filter = ["status", "kind", "ladder"]
    inlines = [MatchSeatInline]
    exclude = ["record"]
    actions = ["requeue"]

    @admin.action(description="Re-queue the selected matches (failed or stuck ones)")
    def requeue(self, request: Any, queryset: QuerySet[Match]) -> None:
        count = sum(services.match_requeue(match_id=m.pk) for m in queryset)
        self.message_user(request, f"{count} matches re-queued", messages.SUCCESS)


class LadderEntryInline(admin.TabularInline):
    model = LadderEntry
    extra = 0
    readonly_fields = ["live_elo"]


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "table_size", "concurrency", "active"]
    inlines = [LadderEntryInline]

    def save_model(self, request: Any, obj: Ladder, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        services.ladder_add_builtins(ladder=obj)  # the reference points of every ladder


@admin.register(LadderEntry)
class LadderEntryAdmin(admin.ModelAdmin):
    list_display = ["id", "ladder", "bot", "builtin", "live_elo"]


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ["entry", "rating", "low", "high", "matches", "updated_at"]


@admin.register(RatingPoint)
class RatingPointAdmin(admin.ModelAdmin):
    list_display = ["entry", "at", "rating", "low", "high", "matches"]
    list_filter = ["entry__ladder"]
    date_hierarchy = "at"
