"""Matches per minute of a running platform: four uploaded bots, COUNT challenge matches
(games to 100) created at once, timed until every one is finished or failed. Its workers and
runners must already be up; it only creates matches and watches the database.

    python bench/ladder_rate.py COUNT        (prints one JSON line)

Imported by ``runners_bench.py`` for the `make demo` form, and piped into a platform container
(``docker-compose exec -T worker python - COUNT``) for the compose form: the same code
measures both. Needs Django configured (DJANGO_SETTINGS_MODULE and the database's settings).
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid

EXAMPLES = ("ducker", "dumper", "ducker", "dumper")


def rate(count: int, timeout: float = 1800) -> dict[str, float | int]:
    import bots_sdk
    from arena import services
    from arena.models import BotVersion as Version
    from arena.models import Match

    user = services.user_create(username=f"bench-{uuid.uuid4().hex[:6]}", password="bench phrase")
    examples = os.path.join(os.path.dirname(bots_sdk.__file__), "examples")
    versions = []
    for i, example in enumerate(EXAMPLES):
        bot = services.bot_create(owner=user, name=f"{example}-{i}-{uuid.uuid4().hex[:4]}")
        with open(f"{examples}/{example}.py", "rb") as source:
            version = services.version_upload(
                bot=bot, user=user, filename=f"{example}.py", data=source.read()
            )
        versions.append(version.pk)
    # the platform validates uploads on its runners: wait until they are active
    deadline = time.monotonic() + timeout
    active, rejected = Version.Status.ACTIVE, Version.Status.REJECTED
    while Version.objects.filter(pk__in=versions, status=active).count() < len(versions):
        if Version.objects.filter(pk__in=versions, status=rejected).exists():
            raise SystemExit("an example bot was rejected: is the sandbox green?")
        if time.monotonic() > deadline:
            raise SystemExit("the uploads were not validated in time")
        time.sleep(0.2)  # (a benchmark watching its platform's database)
    seats = [services.SeatSpec(version=Version.objects.get(pk=pk)) for pk in versions]
    started = time.perf_counter()
    ids = [services.match_create(kind=Match.Kind.CHALLENGE, seats=seats).pk for _ in range(count)]
    done = [Match.Status.FINISHED, Match.Status.FAILED]
    while Match.objects.filter(pk__in=ids).exclude(status__in=done).exists():
        if time.monotonic() > deadline + timeout:
            raise SystemExit("the matches did not finish in time")
        time.sleep(0.2)
    elapsed = time.perf_counter() - started
    failed = Match.objects.filter(pk__in=ids, status=Match.Status.FAILED).count()
    return {
        "matches": count,
        "seconds": round(elapsed, 2),
        "per_minute": round(count / elapsed * 60, 2),
        "failed": failed,
    }


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hearts_platform.settings")
    sys.path.insert(0, os.getcwd())
    import django

    django.setup()
    print(json.dumps(rate(int(sys.argv[1]) if len(sys.argv) > 1 else 8)))
