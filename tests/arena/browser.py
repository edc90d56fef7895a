"""Helpers for the browser tests: Debian's Chromium driven by Playwright, the project's web
server as a real uvicorn process, and a small world of real data (matches played by the
engine, a validated upload, ratings refitted over time, a finished tournament)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from tests.support import PROJECT_DIR, _stop_group, wait_for_line, wait_until

#: The browser: Debian's package (``apt-get install chromium``); Playwright downloads none.
CHROMIUM = os.environ.get("BIDEL_CHROMIUM", "/usr/bin/chromium")
#: Where screenshots go (kept by CI as the tests' artifacts; ignored by git).
ARTIFACTS = Path(os.environ.get("BIDEL_TEST_ARTIFACTS", PROJECT_DIR / "test-artifacts"))
#: Flags for a root, offline, headless machine: no setuid sandbox, and no calls home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "a long passphrase"


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright's Python package is missing (pip install -e '.[test]')"
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/run does)"
    return None


@dataclass
class Server:
    url: str
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)

    def log(self) -> str:
        return "".join(self.output)


def _accepts(host: str, port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((host, port)) == 0


@contextmanager
def web_server(env: Mapping[str, str]) -> Iterator[Server]:
    """``uvicorn hearts_platform.asgi`` on a free port, as production runs the pages and the
    live WebSockets."""
    argv = [
        sys.executable,
        "-m",
        "uvicorn",
        "hearts_platform.asgi:application",
        "--host=127.0.0.1",
        "--port=0",
        "--workers=2",
        "--ws=websockets-sansio",
        f"--ws-max-size={settings.WS_MESSAGE_MAX_BYTES}",  # as production
        "--lifespan=off",
    ]
    process = subprocess.Popen(
        argv,
        cwd=PROJECT_DIR,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    output: list[str] = []
    try:
        line = wait_for_line(process, output, "Uvicorn running on ", "uvicorn")
        url = re.search(r"Uvicorn running on (http://[0-9.:]+)", line).group(1)  # type: ignore[union-attr]
        # The parent binds the socket; its workers listen once each has started.
        host, port = url.removeprefix("http://").rsplit(":", 1)

        def listening() -> bool:
            assert process.poll() is None, "uvicorn exited:\n" + "".join(output)
            return _accepts(host, int(port))

        wait_until(listening, "uvicorn's workers to listen", interval=0.05)
        yield Server(url=url, process=process, output=output)
    finally:
        _stop_group(process)


# --- the world the pages show ---------------------------------------------------------------

GOOD_BOT = b"""\
import sys
from bots_sdk import Bot, lowest


class Ducker(Bot):
    def pass_cards(self, view):
        return view.hand[-3:]

    def play(self, view):
        if len(view.hand) == 13:
            print(f"hand {view.hand_number}: ducking", file=sys.stderr)
        return lowest(view.legal)
"""

#: Plays a card it does not hold at its first decision of every hand: a fault each hand.
FAULTY_BOT = b"""\
import sys
from bots_sdk import Bot, lowest


class Faulty(Bot):
    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        if len(view.hand) == 13:
            print("about to cheat", file=sys.stderr)
            return next(c for c in ("2C", "3C", "4C", "5C") if c not in view.hand)
        return lowest(view.legal)
"""


#: Passes its lowest cards and plays its highest: against three `low` bots, the deal of seed
#: MOON_SEED gives it every heart and the queen of spades.
SHOOTER_BOT = b"""\
from bots_sdk import Bot, highest, strength


class Shooter(Bot):
    def pass_cards(self, view):
        return sorted(view.hand, key=lambda c: (strength(c), "CDHS".index(c[1])))[:3]

    def play(self, view):
        return highest(view.legal)
"""
MOON_SEED = 55


@contextmanager
def scratch_database(folder: Path) -> Iterator[str]:
    """A new empty database of the configured kind, its URL yielded, dropped afterwards: the
    browser tests' data, committed, shared with the server and worker processes, and apart
    from the test database of the other tests."""
    from django.conf import settings

    config = settings.DATABASES["default"]
    if config["ENGINE"] != "django.db.backends.postgresql":
        yield f"sqlite:///{folder / 'browser.sqlite3'}"
        return
    import psycopg

    name = f"bidel_browser_{uuid.uuid4().hex[:10]}"
    where = {
        "host": config["HOST"],
        "port": config["PORT"] or 5432,
        "user": config["USER"],
        "password": config.get("PASSWORD") or None,
        "dbname": "postgres",
        "autocommit": True,
    }
    with psycopg.connect(**where) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgres://{config['USER']}@{where['host']}:{where['port']}/{name}"
    finally:
        with psycopg.connect(**where) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def prepare_world(env: Mapping[str, str]) -> World:
    """Migrate the database of ``env`` and build the world in it, in child processes (this
    one keeps Playwright's event loop and no database connection)."""
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v0"],
        cwd=PROJECT_DIR,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert migrate.returncode == 0, migrate.stderr
    code = (
        "import dataclasses, json, django\n"
        "django.setup()\n"
        "from tests.arena.browser import build_world\n"
        "print(json.dumps(dataclasses.asdict(build_world())))\n"
    )
    built = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_DIR,
        env={**env, "DJANGO_SETTINGS_MODULE": "hearts_platform.settings"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    data = json.loads(built.stdout.strip().splitlines()[-1])
    data["records"] = {int(k): v for k, v in data["records"].items()}
    data["names"] = {int(k): v for k, v in data["names"].items()}
    data["env"] = dict(env)
    return World(**data)


@dataclass
class World:
    ladder: int
    owner: str
    bot: int
    bot_name: str
    replay_match: int
    fault_match: int
    moon_match: int
    person_match: int  # a person's game, as one played at /play/
    tournament: int
    records: dict[int, dict[str, Any]]
    names: dict[int, list[str]]
    history: int  # rating-history points of the bot
    rated: int  # rows of the ladder's rankings with a rating
    entries: int  # rows of the ladder's rankings (those not rated yet too)
    env: dict[str, str] = field(default_factory=dict)  # the processes' environment


def build_world() -> World:
    """Real data through the services: every match is played by the engine."""
    from arena import services
    from arena.models import Ladder, LadderEntry, Match, RatingPoint
    from arena.services import people, tournaments
    from hearts_runner import live

    owner = services.user_create(username="ada", password=PASSWORD)
    bot = services.bot_create(owner=owner, name="ada-ducker", description="Ducks every trick.")
    good = services.version_upload(bot=bot, user=owner, filename="bot.py", data=GOOD_BOT)
    services.version_validate(version_id=good.pk)
    faulty = services.version_upload(bot=bot, user=owner, filename="bot.py", data=FAULTY_BOT)
    services.version_validate(version_id=faulty.pk)  # rejected: its log shows why

    ladder = Ladder.objects.get(name="standard")
    ladder.hands, ladder.concurrency = 1, 2
    ladder.save()
    LadderEntry.objects.get_or_create(ladder=ladder, bot=bot)
    rng = random.Random(7)
    for _ in range(4):  # four refits: four points of rating history
        for match in services.ladder_fill(ladder=ladder, rng=rng):
            services.match_run(match_id=match.pk)
        services.ratings_recompute(ladder=ladder)

    good.refresh_from_db()
    seats = [services.SeatSpec(version=good)] + [
        services.SeatSpec(builtin=name) for name in ("random", "low", "heuristic")
    ]
    replay_match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=seats, hands=3, seed=2026, requested_by=owner
    )
    services.match_run(match_id=replay_match.pk)
    # Its first seat analysed (as a runner would: the same job, played here), shown on its page.
    from bots_sdk.analysis import SAMPLES

    analysis = services.analysis_request(
        user=owner, match_id=replay_match.pk, seat=0, samples=SAMPLES
    )
    services.analysis_run(analysis_id=analysis.pk)
    faulty.refresh_from_db()
    fault_seats = [services.SeatSpec(version=faulty)] + seats[1:]
    fault_match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=fault_seats, hands=1, seed=5, requested_by=owner
    )
    services.match_run(match_id=fault_match.pk)
    shooter_bot = services.bot_create(owner=owner, name="ada-shooter")
    shooter = services.version_upload(
        bot=shooter_bot, user=owner, filename="bot.py", data=SHOOTER_BOT
    )
    services.version_validate(version_id=shooter.pk)
    shooter.refresh_from_db()
    moon_seats = [services.SeatSpec(version=shooter)] + [services.SeatSpec(builtin="low")] * 3
    moon_match = services.match_create(
        kind=Match.Kind.CHALLENGE, seats=moon_seats, hands=1, seed=MOON_SEED, requested_by=owner
    )
    services.match_run(match_id=moon_match.pk)
    # A person's game against the bot and two built-ins, as one played at /play/: the person
    # leaves before the first card (the page sends that) and the referee's fallback plays on.
    person_match, token = people.human_game_open(
        visitor=people.Visitor(address="203.0.113.5"),
        opponents=[seats[0], *(services.SeatSpec(builtin=name) for name in ("heuristic", "low"))],
        hands=2,
    )
    live.shared_mailbox().put(token, live.LEAVE_MESSAGE)
    services.match_run(match_id=person_match.pk)

    tournament = tournaments.tournament_create(
        name="Autumn cup",
        format="round_robin",
        bots=["random", "low", "heuristic", bot.pk],
        table_size=4,
        hands_per_table=1,
        duplicate=True,
    )
    tournaments.tournament_start(tournament_id=tournament.pk)
    for match in tournament.matches.all():
        services.match_run(match_id=match.pk)
    tournaments.tournament_advance(tournament_id=tournament.pk)

    records, names = {}, {}
    shown = [replay_match.pk, fault_match.pk, moon_match.pk, person_match.pk]
    for match in Match.objects.filter(pk__in=shown):
        records[match.pk] = match.record
        seated = match.seats.select_related("version__bot", "person").order_by("seat")
        names[match.pk] = [s.label for s in seated]
    return World(
        ladder=ladder.pk,
        owner=owner.username,
        bot=bot.pk,
        bot_name=bot.name,
        replay_match=replay_match.pk,
        fault_match=fault_match.pk,
        moon_match=moon_match.pk,
        person_match=person_match.pk,
        tournament=tournament.pk,
        records=records,
        names=names,
        history=RatingPoint.objects.filter(entry__bot=bot).count(),
        rated=LadderEntry.objects.filter(ladder=ladder, rating__isnull=False).count(),
        entries=LadderEntry.objects.filter(ladder=ladder).count(),
    )


def skip_without_browser() -> None:
    reason = browser_missing()
    if reason:
        pytest.skip(reason)
