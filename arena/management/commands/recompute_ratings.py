"""``python manage.py recompute_ratings [--ladder NAME] [--check]``: refit every ladder's
ratings from its whole match log, from zero, each bot version rated on its own matches. With
``--check``, audit first: every finished match's record is replayed by the engine and must give
the scores stored with its seats, and the refit must give the stored ratings to the printed
precision (:data:`PRINTED`: the stored ones may come of folding results into a kept fit, whose
approximation stays far under it); exit 1 if anything differs."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import services
from arena.models import Ladder, Match, Rating, VersionRating

#: The API prints ratings and intervals to a tenth of a point: stored and refit numbers are
#: the same when they are within half of it.
PRINTED = 0.05


def _same(
    before: dict[str, dict[Any, tuple[Any, ...]]], after: dict[str, dict[Any, tuple[Any, ...]]]
) -> bool:
    if before.keys() != after.keys() or any(before[k].keys() != after[k].keys() for k in before):
        return False
    for kind, rows in before.items():
        for key, row in rows.items():
            other = after[kind][key]
            for a, b in zip(row, other, strict=True):
                if isinstance(a, float) or isinstance(b, float):
                    if abs(a - b) > PRINTED:
                        return False
                elif a != b:
                    return False
    return True


def _stored(ladder: Ladder) -> dict[str, dict[Any, tuple[Any, ...]]]:
    """A ladder's stored ratings: each entry's (and whose fit it shows), each version's."""
    return {
        "entries": {
            r.entry_id: (r.version_id, r.rating, r.low, r.high, r.matches)
            for r in Rating.objects.filter(entry__ladder=ladder)
        },
        "versions": {
            (r.entry_id, r.version_id): (r.rating, r.low, r.high, r.matches)
            for r in VersionRating.objects.filter(entry__ladder=ladder)
        },
    }


class Command(BaseCommand):
    help = "Refit the ladders' ratings from their whole match history."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ladder", help="only this ladder (by name)")
        parser.add_argument("--check", action="store_true", help="fail if stored numbers differ")

    def handle(self, *args: Any, ladder: str | None, check: bool, **options: Any) -> None:
        ladders = Ladder.objects.filter(name=ladder) if ladder else Ladder.objects.all()
        if ladder and not ladders.exists():
            raise CommandError(f"no ladder named {ladder!r}")
        differ = 0
        if check:
            differ += self._audit_records(ladders)
        for item in ladders.order_by("id"):
            before = _stored(item)
            services.ratings_recompute(ladder=item, fresh=True)
            after = _stored(item)
            same = _same(before, after)
            differ += not same
            verdict = "identical to" if same else "DIFFERENT from"
            self.stdout.write(
                f"{item.name}: {len(after['entries'])} ratings ({len(after['versions'])} bot "
                f"versions), {verdict} the stored ones"
            )
        if check and differ:
            raise CommandError(f"{differ} ladders or records differ from their match log")

    def _audit_records(self, ladders: Any) -> int:
        """Replay each finished match of ``ladders``; count those whose stored seat scores
        are not their record's."""
        wrong = 0
        finished = Match.objects.filter(ladder__in=ladders, status=Match.Status.FINISHED)
        for match in finished.exclude(record=None).prefetch_related("seats").iterator(500):
            try:
                totals, hand_scores = services.result_scores(match.record)
            except Exception as exc:  # noqa: BLE001 — any record that does not replay is reported
                self.stdout.write(f"match {match.pk}: its record does not replay: {exc}")
                wrong += 1
                continue
            seats = sorted(match.seats.all(), key=lambda seat: seat.seat)
            stored = ([s.score for s in seats], [s.hand_scores for s in seats])
            if stored != (totals, hand_scores):
                self.stdout.write(
                    f"match {match.pk}: stored scores {stored[0]} are not its record's {totals}"
                )
                wrong += 1
        self.stdout.write(f"records: {finished.count()} replayed, {wrong} differing")
        return wrong
