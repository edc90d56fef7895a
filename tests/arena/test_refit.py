"""The refit as a ladder lives it: the fitted model kept (``RatingFit``), each result taken in
once (``Match.rated``), a few new results folded into the kept fit, many refit from the whole
history; always the ratings a fit from zero gives, to the printed precision, which
``recompute_ratings --check`` confirms. Runs on SQLite and, where configured, PostgreSQL (whose
history is read as a binary COPY)."""

from __future__ import annotations

import hashlib
import random
from io import StringIO

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from arena import services
from arena.models import (
    Bot,
    BotVersion,
    Ladder,
    LadderEntry,
    Match,
    MatchSeat,
    Rating,
    RatingFit,
    VersionRating,
)
from arena.services import ratings
from bots_sdk.builtin import BUILTIN

pytestmark = pytest.mark.django_db
PRINTED = 0.05  # the API prints a tenth of a point


def _field(bots: int) -> tuple[Ladder, list[tuple[LadderEntry, BotVersion | None]]]:
    ladder = Ladder.objects.get(name="standard")
    owner = get_user_model().objects.create_user("ada", password="a long passphrase")
    seats: list[tuple[LadderEntry, BotVersion | None]] = []
    for i in range(bots):
        bot = Bot.objects.create(owner=owner, name=f"bot-{i}")
        code = f"# {i}\n".encode()
        version = BotVersion.objects.create(
            bot=bot,
            number=1,
            filename="bot.py",
            code=code,
            sha256=hashlib.sha256(code).hexdigest(),
            status="active",
        )
        seats.append((LadderEntry.objects.create(ladder=ladder, bot=bot), version))
    seats += [(entry, None) for entry in ladder.entries.exclude(builtin="")]
    return ladder, seats


def _finish(ladder: Ladder, seats: list, count: int, rng: random.Random) -> list[int]:
    """``count`` finished ladder matches at random tables of four, stronger bots (by their
    place in ``seats``) finishing higher more often; some places tie."""
    made = Match.objects.bulk_create(
        Match(kind="ladder", status="finished", ladder=ladder, seed=rng.getrandbits(40))
        for _ in range(count)
    )
    rows = []
    for match in made:
        table = rng.sample(range(len(seats)), 4)
        scores = [rng.gauss(index, len(seats) / 2) // 8 for index in table]
        places = [sorted(set(scores)).index(s) for s in scores]
        for seat, (index, place) in enumerate(zip(table, places, strict=True)):
            entry, version = seats[index]
            rows.append(
                MatchSeat(
                    match=match,
                    seat=seat,
                    entry=entry,
                    version=version,
                    builtin=entry.builtin,
                    rank=place,
                    score=place,
                )
            )
    MatchSeat.objects.bulk_create(rows)
    return [m.pk for m in made]


def _shown(ladder: Ladder) -> dict[object, tuple[float, float, float, int]]:
    return {
        **{
            ("entry", r.entry_id): (r.rating, r.low, r.high, r.matches)
            for r in Rating.objects.filter(entry__ladder=ladder)
        },
        **{
            ("version", r.version_id): (r.rating, r.low, r.high, r.matches)
            for r in VersionRating.objects.filter(entry__ladder=ladder)
        },
    }


def _close(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        x[3] == y[3] and all(abs(u - v) <= PRINTED for u, v in zip(x[:3], y[:3], strict=False))
        for x, y in ((a[k], b[k]) for k in a)
    )


def test_a_few_new_results_are_folded_into_the_kept_fit_and_rate_as_a_full_refit() -> None:
    ladder, seats = _field(12)
    rng = random.Random(5)
    _finish(ladder, seats, 4000, rng)
    services.ratings_recompute(ladder=ladder)
    kept = RatingFit.objects.get(ladder=ladder)
    assert (kept.tables, kept.folds) == (4000, 0) and len(kept.names) == 12 + len(BUILTIN)
    assert not Match.objects.filter(ladder=ladder, rated=False).exists()
    for rounds in range(1, 4):
        _finish(ladder, seats, 3, rng)
        services.ratings_recompute(ladder=ladder)
        kept.refresh_from_db()
        assert (kept.tables, kept.folds) == (4000 + 3 * rounds, rounds)  # folded: no reread
    folded = _shown(ladder)
    services.ratings_recompute(ladder=ladder, fresh=True)  # from zero, the whole history
    assert _close(folded, _shown(ladder))
    kept.refresh_from_db()
    assert (kept.tables, kept.folds) == (4009, 0)
    # every seat of every match counted once
    total = sum(r.matches for r in VersionRating.objects.filter(entry__ladder=ladder))
    total += sum(r.matches for r in Rating.objects.filter(entry__ladder=ladder, version=None))
    assert total == 4 * 4009


def test_many_new_results_refit_the_whole_history_and_the_audit_agrees() -> None:
    ladder, seats = _field(6)
    rng = random.Random(8)
    _finish(ladder, seats, 300, rng)
    services.ratings_recompute(ladder=ladder)
    _finish(ladder, seats, 200, rng)  # far more than a fold takes
    services.ratings_recompute(ladder=ladder)
    kept = RatingFit.objects.get(ladder=ladder)
    assert (kept.tables, kept.folds) == (500, 0)
    out = StringIO()
    call_command("recompute_ratings", "--check", "--ladder", "standard", stdout=out)
    assert "identical to the stored ones" in out.getvalue()


def test_the_audit_sees_stored_ratings_that_are_not_the_logs() -> None:
    ladder, seats = _field(4)
    _finish(ladder, seats, 100, random.Random(3))
    services.ratings_recompute(ladder=ladder)
    Rating.objects.filter(entry__ladder=ladder).update(rating=1234.5)
    with pytest.raises(Exception, match="differ from their match log"):
        call_command("recompute_ratings", "--check", "--ladder", "standard", stdout=StringIO())


def test_a_result_finished_after_a_refit_is_taken_in_by_the_next() -> None:
    ladder, seats = _field(4)
    rng = random.Random(4)
    _finish(ladder, seats, 50, rng)
    services.ratings_recompute(ladder=ladder)
    late = _finish(ladder, seats, 1, rng)
    assert not Match.objects.get(pk=late[0]).rated
    services.ratings_recompute(ladder=ladder)
    assert Match.objects.get(pk=late[0]).rated
    assert RatingFit.objects.get(ladder=ladder).tables == 51


def test_the_history_reads_the_same_whichever_way_the_database_gives_it() -> None:
    ladder, seats = _field(5)
    _finish(ladder, seats, 40, random.Random(6))
    MatchSeat.objects.filter(pk=MatchSeat.objects.order_by("pk")[0].pk).update(entry=None)
    expected = [
        (m, e or 0, v or 0, r or 0)
        for m, e, v, r in MatchSeat.objects.filter(match__ladder=ladder)
        .order_by("match_id", "seat")
        .values_list("match_id", "entry_id", "version_id", "rank")
    ]
    got = ratings._seats(Match.objects.filter(ladder=ladder))
    assert got.dtype == np.int64 and got.tolist() == [list(row) for row in expected]
