"""A ladder grown to a million matches: the refit, and every page and list endpoint, at each size.

    .venv/bin/python bench/ladder_scale.py --use-env [--sizes 10000,100000,1000000]
        [--bots 200] [--requests 60]

Seeds a ladder of --bots uploaded bots (one active version each) beside the built-ins, then
grows it to each size of finished four-seat ladder matches (PostgreSQL's COPY where the database
is PostgreSQL: a million matches in minutes, not hours; each with a real one-hand game record,
seats with scores, places, per-hand scores and a few lines of stderr). At each size it prints:

- the refit (``services.ratings_recompute``): from no stored fit, again (the last fit kept),
  and after 100 more results (what the ladder does all day);
- each page's and list endpoint's server time (its ``Server-Timing``) p50 / p99 over
  --requests requests after a warm-up, and its database queries.

The database grows and stays (a scratch schema is not made: run it against a database you can
drop); a later run on it goes on from the size it has, with its bots. Without --use-env it runs
on a fresh SQLite file, where only small sizes are reasonable.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import time
from datetime import timedelta
from typing import Any

from django_setup import ROOT, setup_django

SEATS = 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--use-env", action="store_true")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--requests", type=int, default=60)
    args = parser.parse_args()
    os.environ["BIDEL_UNSAFE_NO_SANDBOX"] = "1"  # nothing is played: stored results only
    setup_django(use_env=args.use_env, prefix="bidel-scale-")
    from django.db import connection

    world = _seed_world(args.bots)
    print(
        f"A ladder of {len(world['seats']) - len(world['builtin'])} uploaded bots and the "
        f"built-ins ({connection.vendor}); "
        f"times in seconds (refit) and milliseconds (requests, server time, p50 / p99)"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        started = time.perf_counter()
        _grow(world, size)
        grown = time.perf_counter() - started
        print(f"\n== {size:,} matches (grown in {grown:.0f} s)", flush=True)
        _refits(world)
        _requests(world, args.requests)


# --- the world --------------------------------------------------------------------------------


def _seed_world(bots: int) -> dict[str, Any]:
    from arena import services
    from arena.models import BotVersion, Ladder, LadderEntry

    ladder = Ladder.objects.get(name="standard")
    builtins = list(LadderEntry.objects.filter(ladder=ladder).exclude(builtin=""))
    kept = list(
        LadderEntry.objects.filter(ladder=ladder, bot__name__startswith="scale-")
        .select_related("bot")
        .order_by("pk")
    )
    if kept:  # a database grown by an earlier run: its bots, and on from its size
        versions = dict(
            BotVersion.objects.filter(bot__in=[e.bot for e in kept]).values_list("bot_id", "pk")
        )
        return {
            "ladder": ladder,
            "seats": [(e.pk, versions[e.bot_id], e.bot_id) for e in kept]
            + [(e.pk, None, None) for e in builtins],
            "builtin": {e.pk: e.builtin for e in builtins},
            "record": _record(),
            "rng": random.Random(7),
        }
    code = (ROOT / "bots_sdk" / "examples" / "ducker.py").read_bytes()
    owner = services.user_create(username=f"scale-{random.randrange(10**9)}", password="x" * 16)
    made = []
    for i in range(bots):
        bot = services.bot_create(owner=owner, name=f"scale-{owner.pk}-{i}", join_ladders=[])
        version = BotVersion.objects.create(
            bot=bot,
            number=1,
            filename="bot.py",
            code=code,
            sha256="0" * 64,
            status=BotVersion.Status.ACTIVE,
        )
        entry = LadderEntry.objects.create(ladder=ladder, bot=bot)
        made.append((entry.pk, version.pk, bot.pk))
    return {
        "ladder": ladder,
        "seats": made + [(e.pk, None, None) for e in builtins],
        "builtin": {e.pk: e.builtin for e in builtins},
        "record": _record(),
        "rng": random.Random(7),
    }


def _record() -> tuple[dict[str, Any], list[list[int]]]:
    """A real one-hand game record and its hand's scores per seat."""
    from engine.record import replay
    from engine.rules import RuleSet
    from engine.simulate import random_game

    rules = RuleSet.from_preset("standard")
    record = random_game(rules, 1, random.Random(1)).to_record()
    return record, [list(h.scores) for h in replay(record).history]


def _grow(world: dict[str, Any], target: int) -> None:
    from django.db import connection

    from arena.models import Match

    have = Match.objects.filter(ladder=world["ladder"], status=Match.Status.FINISHED).count()
    for start in range(have, target, 100_000):
        count = min(100_000, target - start)
        if connection.vendor == "postgresql":
            _copy_matches(world, count)
        else:
            _create_matches(world, count)
    _analyze()


def _analyze() -> None:
    """Fresh planner statistics and visibility maps, as autovacuum keeps them on a live server
    (without them, right after a bulk load, every index scan also reads the table)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")


def _tables(world: dict[str, Any], count: int) -> list[list[tuple[int, int | None, int | None]]]:
    rng = world["rng"]
    return [rng.sample(world["seats"], SEATS) for _ in range(count)]


def _places(scores: list[int]) -> list[int]:
    ordered = sorted(set(scores))
    return [ordered.index(s) for s in scores]


def _copy_matches(world: dict[str, Any], count: int) -> None:
    from django.db import connection
    from django.utils import timezone

    from arena.models import Match, MatchSeat

    record, hands = world["record"]
    record_text = json.dumps(record)
    rules = json.dumps(record["rules"])
    rng = world["rng"]
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [Match._meta.db_table, count],
        )
        ids = [row[0] for row in cursor.fetchall()]
        match_columns = {
            "id": None,
            "kind": Match.Kind.LADDER,
            "status": Match.Status.FINISHED,
            "rules": rules,
            "seed": None,
            "hands": 1,
            "engine_version": "1",
            "ladder_id": world["ladder"].pk,
            "rotation": 0,
            "attempts": 1,
            "claim_token": "",
            "record": record_text,
            "error": "",
            "live_elo_applied": True,
            "created_at": None,
            "started_at": None,
            "finished_at": None,
        }
        extra = _required_columns(Match, match_columns)
        match_columns.update(extra)
        names = ", ".join(match_columns)
        with cursor.copy(f"COPY {Match._meta.db_table} ({names}) FROM STDIN") as copy:  # type: ignore[attr-defined]
            for i, pk in enumerate(ids):
                at = now - timedelta(seconds=count - i)
                row = dict(match_columns, id=pk, seed=rng.getrandbits(62))
                row.update(created_at=at, started_at=at, finished_at=at)
                copy.write_row(list(row.values()))
        seat_columns = {
            "match_id": None,
            "seat": None,
            "entry_id": None,
            "version_id": None,
            "builtin": "",
            "human_token": "",
            "score": None,
            "rank": None,
            "faults": "[]",
            "stderr": "thinking\n" * 3,
            "hand_scores": None,
        }
        seat_columns.update(_required_columns(MatchSeat, seat_columns))
        names = ", ".join(seat_columns)
        with cursor.copy(f"COPY {MatchSeat._meta.db_table} ({names}) FROM STDIN") as copy:  # type: ignore[attr-defined]
            for pk, table in zip(ids, _tables(world, count), strict=True):
                scores = [rng.randrange(0, 27) for _ in table]
                for seat, ((entry, version, _), score, place) in enumerate(
                    zip(table, scores, _places(scores), strict=True)
                ):
                    row = dict(seat_columns, match_id=pk, seat=seat, entry_id=entry)
                    row.update(version_id=version, score=score, rank=place)
                    row.update(builtin=world["builtin"].get(entry, ""))
                    row.update(hand_scores=json.dumps([score]))
                    copy.write_row(list(row.values()))
        del hands


def _required_columns(model: Any, given: dict[str, Any]) -> dict[str, Any]:
    """Columns added since this bench was written that the database requires: their model
    default (so the bench keeps working as the schema grows)."""
    extra = {}
    for field in model._meta.concrete_fields:
        if field.column in given or field.null or field.primary_key:
            continue
        value = field.get_default()
        extra[field.column] = (
            json.dumps(value) if field.get_internal_type() == "JSONField" else value
        )
    return extra


def _create_matches(world: dict[str, Any], count: int) -> None:
    from django.utils import timezone

    from arena.models import Match, MatchSeat

    record, _ = world["record"]
    rng = world["rng"]
    for start in range(0, count, 1000):
        batch = Match.objects.bulk_create(
            Match(
                kind=Match.Kind.LADDER,
                status=Match.Status.FINISHED,
                ladder=world["ladder"],
                seed=rng.getrandbits(62),
                hands=1,
                rules=record["rules"],
                record=record,
                live_elo_applied=True,
                finished_at=timezone.now(),
            )
            for _ in range(min(1000, count - start))
        )
        seats = []
        for match, table in zip(batch, _tables(world, len(batch)), strict=True):
            scores = [rng.randrange(0, 27) for _ in table]
            for seat, ((entry, version, _), score, place) in enumerate(
                zip(table, scores, _places(scores), strict=True)
            ):
                seats.append(
                    MatchSeat(
                        match=match,
                        seat=seat,
                        entry_id=entry,
                        version_id=version,
                        builtin=world["builtin"].get(entry, ""),
                        score=score,
                        rank=place,
                        hand_scores=[score],
                        stderr="thinking\n" * 3,
                    )
                )
        MatchSeat.objects.bulk_create(seats)


# --- what is measured -------------------------------------------------------------------------


def _refits(world: dict[str, Any]) -> None:
    from arena import services
    from arena.models import RatingFit

    ladder = world["ladder"]
    RatingFit.objects.filter(ladder=ladder).delete()
    started = time.perf_counter()
    services.ratings_recompute(ladder=ladder)
    cold = time.perf_counter() - started
    _analyze()  # (as autovacuum would after the first refit marked every result taken in)
    started = time.perf_counter()
    services.ratings_recompute(ladder=ladder, full=True)
    warm = time.perf_counter() - started
    _create_matches(world, 100)
    started = time.perf_counter()
    services.ratings_recompute(ladder=ladder)
    fold = time.perf_counter() - started
    print(
        f"refit: {cold:.2f} s with no fit kept, {warm:.2f} s full from the kept one, "
        f"{fold:.2f} s after 100 more results",
        flush=True,
    )


def _paths(world: dict[str, Any]) -> dict[str, str]:
    from arena.models import Match

    ladder = world["ladder"]
    latest = Match.objects.filter(ladder=ladder).order_by("-pk").first()
    bot = world["seats"][0][2]
    other = world["seats"][1][2]
    return {
        "/": "/",
        "/matches/": "/matches/",
        "/ladders/{id}/": f"/ladders/{ladder.pk}/",
        "/bots/{id}/": f"/bots/{bot}/",
        "/matches/{id}/": f"/matches/{latest.pk}/",  # type: ignore[union-attr]
        "/api/matches/": "/api/matches/",
        "/api/matches/?ladder=": f"/api/matches/?ladder={ladder.pk}",
        "/api/matches/?bot=": f"/api/matches/?bot={bot}",
        "/api/matches/?bot=&version=": f"/api/matches/?bot={bot}&version=1",
        "/api/matches/?opponent=": f"/api/matches/?bot={bot}&opponent={other}",
        "/api/matches/?status=": "/api/matches/?status=finished",
        "/api/matches/?kind=": "/api/matches/?kind=ladder",
        "/api/ladders/{id}/rankings/": f"/api/ladders/{ladder.pk}/rankings/",
    }


def _requests(world: dict[str, Any], requests: int) -> None:
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    # As hearts_platform/wsgi.py does once the app is loaded: what exists now (here, also the
    # seeding's leftovers, which no server holds) is left out of the collector's full passes.
    gc.collect()
    gc.freeze()
    client = Client()
    for name, path in _paths(world).items():
        for _ in range(3):
            assert client.get(path).status_code == 200, path
        reset_queries()  # (the log keeps 9,000 at most: a full one counts none)
        with CaptureQueriesContext(connection) as queries:
            client.get(path)
        times = []
        for _ in range(requests):
            response = client.get(path)
            times.append(float(response.headers["Server-Timing"].split("dur=")[1]))
        times.sort()
        p99 = times[max(0, int(0.99 * len(times)) - 1)]
        print(
            f"  {name:<30} {statistics.median(times):8.1f} {p99:8.1f}   {len(queries)} queries",
            flush=True,
        )


if __name__ == "__main__":
    main()
