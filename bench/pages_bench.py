"""Server time of every web page with a large history stored (the pages' 100 ms aim).

    .venv/bin/python bench/pages_bench.py [--stored 10000] [--requests 50] [--use-env]

Seeds a ladder with --stored finished matches, each with a real game record (games to 100
played by the engine), scores, per-hand scores and a bot's stderr; twelve uploaded bots;
3,000 points of rating history for one of them; a finished round-robin tournament played by
the engine. Then, per page: the database queries of one request with a tenth of the matches
stored and with all of them (they must not grow), and the server time of --requests requests
as the page's own ``Server-Timing`` header reports it (p50, p99), against the 100 ms aim.

Runs on a fresh SQLite database in a temporary folder, unless --use-env (then DATABASE_URL as
configured, e.g. PostgreSQL).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import time
from typing import Any

from django_setup import ROOT, setup_django

AIM_MS = 100.0
BOTS = 12
HISTORY_POINTS = 3000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stored", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--use-env", action="store_true")
    args = parser.parse_args()
    os.environ["BIDEL_UNSAFE_NO_SANDBOX"] = "1"  # built-ins only play here; nothing uploaded runs
    setup_django(use_env=args.use_env, prefix="bidel-pages-")
    from django.conf import settings

    database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(f"Pages with {args.stored} matches stored ({database}); aim: under {AIM_MS:.0f} ms")
    world = _seed_fixed()
    tenth = args.stored // 10
    _seed_matches(world, tenth)
    counts_small = {name: _queries(world, path) for name, path in _pages(world).items()}
    _seed_matches(world, args.stored)
    counts_large = {name: _queries(world, path) for name, path in _pages(world).items()}
    # As hearts_platform/wsgi.py does once the app is loaded: what exists now (here, also the
    # seeding's leftovers, which no server holds) is left out of the collector's full passes.
    world.pop("records")
    gc.collect()
    gc.freeze()
    print(f"{'page':<16} {'queries':>9} {'p50 ms':>8} {'p99 ms':>8}  aim")
    print(f"{'':<16} {f'@{tenth}/@{args.stored}':>9}")
    worst = 0.0
    for name, path in _pages(world).items():
        p50, p99 = _timings(world, path, args.requests)
        worst = max(worst, p99)
        same = counts_small[name] == counts_large[name]
        print(
            f"{name:<16} {counts_small[name]:>4}/{counts_large[name]:<4} {p50:>8.1f} {p99:>8.1f}"
            f"  {'ok' if p99 < AIM_MS else 'OVER'}{'' if same else '  (queries grew!)'}"
        )
    print(f"slowest p99: {worst:.1f} ms ({'within' if worst < AIM_MS else 'over'} the aim)")


def _seed_fixed() -> dict[str, Any]:
    from arena import services
    from arena.models import BotVersion, Ladder, LadderEntry, Match, Tournament
    from arena.services import tournaments

    ladder = Ladder.objects.get(name="standard")
    code = (ROOT / "bots_sdk" / "examples" / "ducker.py").read_bytes()
    bots, versions = [], []
    for i in range(BOTS):
        user = services.user_create(username=f"author{i}", password="a long passphrase")
        bot = services.bot_create(owner=user, name=f"bot-{i}", description="benchmark bot")
        versions.append(
            BotVersion.objects.create(
                bot=bot,
                number=1,
                filename="bot.py",
                code=code,
                sha256="0" * 64,
                status=BotVersion.Status.ACTIVE,
            )
        )
        LadderEntry.objects.create(ladder=ladder, bot=bot)
        bots.append(bot)
    tournament = tournaments.tournament_create(
        name="bench cup",
        format="round_robin",
        bots=["random", "low", "heuristic", "montecarlo"],
        table_size=3,
        hands_per_table=1,
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    while tournament.status != Tournament.Status.FINISHED:
        for match in tournament.matches.filter(status=Match.Status.QUEUED):
            services.match_run(match_id=match.pk)
        tournament = tournaments.tournament_advance(tournament_id=tournament.pk)
    return {
        "ladder": ladder,
        "bots": bots,
        "versions": versions,
        "tournament": tournament,
        "entries": list(LadderEntry.objects.filter(ladder=ladder).order_by("pk")),
        "records": _records(40),
    }


def _records(count: int) -> list[tuple[dict[str, Any], list[tuple[int, ...]]]]:
    """Real game records (games to 100) to store with the seeded matches, and the scores of
    their hands."""
    from engine.record import replay
    from engine.rules import RuleSet
    from engine.simulate import random_game

    rules = RuleSet.from_preset("standard")
    records = [random_game(rules, seed, random.Random(seed)).to_record() for seed in range(count)]
    return [(r, [hand.scores for hand in replay(r).history]) for r in records]


def _seed_matches(world: dict[str, Any], target: int) -> None:
    from django.utils import timezone

    from arena import services
    from arena.models import LadderEntry, Match, MatchSeat, RatingPoint

    ladder, entries = world["ladder"], world["entries"]
    versions = {v.bot_id: v for v in world["versions"]}
    rng = random.Random(target)
    have = Match.objects.filter(ladder=ladder).count()
    for start in range(have, target, 500):
        batch = Match.objects.bulk_create(
            Match(
                kind=Match.Kind.LADDER,
                status=Match.Status.FINISHED,
                ladder=ladder,
                seed=i,
                rules="standard",
                record=world["records"][i % len(world["records"])][0],
                finished_at=timezone.now(),
            )
            for i in range(start, min(start + 500, target))
        )
        seats = []
        for match in batch:
            table = rng.sample(entries, 4)
            totals = world["records"][match.seed % len(world["records"])][1]
            for seat, entry in enumerate(table):
                score = sum(scores[seat] for scores in totals)
                seats.append(
                    MatchSeat(
                        match=match,
                        seat=seat,
                        entry=entry,
                        builtin=entry.builtin,
                        version=versions.get(entry.bot_id),
                        score=score,
                        rank=seat,
                        hand_scores=[scores[seat] for scores in totals],
                        stderr="" if entry.builtin else "thinking…\n" * 50,
                    )
                )
        MatchSeat.objects.bulk_create(seats)
    services.ratings_recompute(ladder=ladder)
    _analyze()
    entry = LadderEntry.objects.get(ladder=ladder, bot=world["bots"][0])
    missing = HISTORY_POINTS - RatingPoint.objects.filter(entry=entry).count()
    now = timezone.now()
    RatingPoint.objects.bulk_create(
        RatingPoint(
            entry=entry,
            rating=1500 + 100 * random.Random(i).random(),
            low=1400,
            high=1700,
            matches=i,
            at=now - timezone.timedelta(minutes=missing - i),
        )
        for i in range(max(missing, 0))
    )
    _analyze()


def _analyze() -> None:
    """Fresh planner statistics, as autovacuum keeps them on a live server: right after a bulk
    insert PostgreSQL would plan for row counts it has not seen (parallel scans for 40 rows)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def _pages(world: dict[str, Any]) -> dict[str, str]:
    from arena.models import Match

    latest = Match.objects.filter(ladder=world["ladder"]).order_by("-pk").first()
    bot = world["bots"][0]
    return {
        "home": "/",
        "ladder": f"/ladders/{world['ladder'].pk}/",
        "bot": f"/bots/{bot.pk}/",
        "bot (owner)": f"/bots/{bot.pk}/#owner",
        "match": f"/matches/{latest.pk}/",  # type: ignore[union-attr]
        "tournament": f"/tournaments/{world['tournament'].pk}/",
        "sign up": "/signup/",
        "log in": "/login/",
        "account": "/account/#owner",
        "new bot": "/bots/new/#owner",
        "upload": f"/bots/{bot.pk}/upload/#owner",
        "challenge": "/challenges/new/#owner",
    }


def _client(world: dict[str, Any], path: str) -> Any:
    from django.test import Client

    client = Client()
    if path.endswith("#owner"):
        client.force_login(world["bots"][0].owner)
    return client


def _queries(world: dict[str, Any], path: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = _client(world, path)
    client.get(path.split("#")[0])
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path.split("#")[0]).status_code == 200, path
    return len(queries)


def _timings(world: dict[str, Any], path: str, requests: int) -> tuple[float, float]:
    client = _client(world, path)
    url = path.split("#")[0]
    for _ in range(3):
        client.get(url)  # warm: templates compiled, connection open
    times = []
    for _ in range(requests):
        response = client.get(url)
        times.append(float(response.headers["Server-Timing"].split("dur=")[1]))
    times.sort()
    return statistics.median(times), times[max(0, int(0.99 * len(times)) - 1)]


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"({time.perf_counter() - started:.0f} s in all)")
