"""Every stored rated match re-attributed to the bot versions that played it: each ladder is
refit with each version its own participant (``arena.ratings.rated_as``), as
``services.ratings_recompute`` fits from now on, so that ``recompute_ratings --check`` finds
the stored ratings identical to a fresh refit. The rating history kept so far stays (its
points name no version: they were fitted per bot)."""

from django.db import migrations

from arena.ratings import Table, fit_ratings, rated_as, shown_ratings

FINISHED, RATED_KINDS = "finished", ("ladder", "tournament")


def refit(apps, schema_editor):  # type: ignore[no-untyped-def]
    Ladder = apps.get_model("arena", "Ladder")
    Match = apps.get_model("arena", "Match")
    MatchSeat = apps.get_model("arena", "MatchSeat")
    Rating = apps.get_model("arena", "Rating")
    VersionRating = apps.get_model("arena", "VersionRating")
    BotVersion = apps.get_model("arena", "BotVersion")
    for ladder in Ladder.objects.order_by("pk"):
        matches = Match.objects.filter(ladder=ladder, kind__in=RATED_KINDS, status=FINISHED)
        rows = (
            MatchSeat.objects.filter(match__in=matches)
            .order_by("match_id", "seat")
            .values_list("match_id", "entry_id", "version_id", "rank")
        )
        tables, owners, seated = [], {}, {}
        for match_id, entry_id, version_id, rank in rows:
            name = rated_as(entry_id, version_id)
            owners.setdefault(name, (entry_id, version_id))
            seated.setdefault(match_id, []).append((name, rank))
        for seats in seated.values():
            tables.append(Table(tuple(n for n, _ in seats), tuple(r for _, r in seats)))
        builtins = ladder.entries.exclude(builtin="").values_list("pk", flat=True)
        for pk in builtins:
            owners.setdefault(rated_as(pk, None), (pk, None))
        fitted = fit_ratings(tables, [rated_as(pk, None) for pk in builtins])
        Rating.objects.filter(entry__ladder=ladder).delete()
        VersionRating.objects.filter(entry__ladder=ladder).delete()
        VersionRating.objects.bulk_create(
            VersionRating(
                entry_id=owners[name][0],
                version_id=owners[name][1],
                rating=r.rating,
                low=r.low,
                high=r.high,
                matches=r.matches,
                fitted_on=len(tables),
            )
            for name, r in fitted.items()
            if owners[name][1] is not None
        )
        versions = [v for _, v in owners.values() if v is not None]
        active = set(
            BotVersion.objects.filter(pk__in=versions, status="active").values_list("pk", flat=True)
        )
        numbers = dict(BotVersion.objects.filter(pk__in=versions).values_list("pk", "number"))
        shown = shown_ratings(list(fitted), owners, active, numbers)
        Rating.objects.bulk_create(
            Rating(
                entry_id=entry,
                version_id=owners[name][1],
                rating=fitted[name].rating,
                low=fitted[name].low,
                high=fitted[name].high,
                matches=fitted[name].matches,
                fitted_on=len(tables),
            )
            for entry, name in shown.items()
        )


class Migration(migrations.Migration):
    dependencies = [("arena", "0018_ratings_per_version")]

    operations = [migrations.RunPython(refit, migrations.RunPython.noop)]
