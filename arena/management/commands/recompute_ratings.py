"""``python manage.py recompute_ratings [--ladder NAME] [--check]``: refit every ladder's
ratings from its match log. With ``--check``, compare with the stored numbers first and exit
1 if any differs (they are a pure function of the log, so they never should)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import services
from arena.models import Ladder, Rating


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
        for item in ladders.order_by("id"):
            before = {
                r.entry_id: (r.rating, r.low, r.high, r.matches)
                for r in Rating.objects.filter(entry__ladder=item)
            }
            after = {
                r.entry_id: (r.rating, r.low, r.high, r.matches)
                for r in services.ratings_recompute(ladder=item)
            }
            same = before == after
            differ += not same
            verdict = "identical to" if same else "DIFFERENT from"
            self.stdout.write(f"{item.name}: {len(after)} ratings, {verdict} the stored ones")
        if check and differ:
            raise CommandError(f"{differ} ladders had ratings that differ from their match log")
