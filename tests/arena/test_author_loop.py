"""The author's loop from the terminal, as a bot author runs it: ``bidel`` (a real process)
against a real platform (uvicorn and a Celery worker on the test database) — log in, submit
and learn the verdict, follow the matches, read the seat's logs, fetch the record, verify it
and reproduce the match locally, identical with the code that played and stopped where a
changed bot departs."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from arena import services
from arena.models import Bot, Comparison, Ladder, Match, MatchSeat
from bots_sdk import highest
from bots_sdk.remote import Platform, RemoteError
from engine.rules import RuleSet
from engine.state import GameState
from tests.arena.browser import web_server
from tests.arena.live import worker_env
from tests.bots_sdk.test_sdk_package import shared_fresh_venv
from tests.deadline import LONG, LONG_TEST
from tests.support import DEADLINE, PROJECT_DIR, celery_worker, child_env, purge_queues, wait_until

pytestmark = pytest.mark.django_db(transaction=True)  # (the standard ladder made afresh)
PASSWORD = "a long passphrase"
#: Plays lowest, and writes to stderr in some decisions only (holding an odd number of cards).
BOT = """
import sys

from bots_sdk import Bot, highest, lowest


class Odd(Bot):
    def pass_cards(self, view):
        return list(view.hand[-3:])

    def play(self, view):
        if len(view.hand) % 2:
            print(f"holding {len(view.hand)} cards", file=sys.stderr)
        if CHANGED and len(view.hand) <= 10:
            return highest(list(view.legal))
        return lowest(list(view.legal))
"""
#: Passes cards it does not hold: validation rejects it.
REJECTED = """
from bots_sdk import Bot


class Wrong(Bot):
    def pass_cards(self, view):
        return ["XX", "YY", "ZZ"]

    def play(self, view):
        return view.legal[0]
"""


@pytest.fixture
def platform() -> Iterator[str]:
    """A running platform: its web server's URL, with a worker validating and playing."""
    purge_queues("celery", "runner")
    # (a version comparison of one round of three deals: its eight tables play in seconds)
    env = worker_env(COMPARISON_DEALS_PER_ROUND="3", COMPARISON_MAX_ROUNDS="1")
    with ExitStack() as stack:
        server = stack.enter_context(web_server(env))
        stack.enter_context(
            celery_worker(
                env=env, hostname=f"loop-{uuid.uuid4().hex[:6]}@test", queues=["celery", "runner"]
            )
        )
        yield server.url


def _bidel(
    home: Path, url: str, *args: str, stdin: str = "", command: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``bidel ARGS`` (``command``: another install's, e.g. a fresh venv's ``bidel``)."""
    env = child_env({"XDG_CONFIG_HOME": str(home), "BIDEL_URL": url, "BIDEL_TOKEN": None})
    return subprocess.run(
        [*(command or [sys.executable, "-m", "bots_sdk"]), *args],
        cwd=home,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=LONG,
    )


def _one_line_failure(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bidel: "), done.stderr
    for word in words:
        assert word in lines[0], lines[0]


def _departure(game: dict[str, Any]) -> tuple[int, str, str]:
    """(trick, recorded, highest legal) of seat 0's first play holding 10 cards or fewer
    where the record's card is not the highest legal one: where the changed bot departs."""
    state = GameState(RuleSet.from_spec(game["rules"]), game["seed"])
    hand = game["hands"][0]
    for seat, cards in enumerate(hand["passes"]):
        for card in cards:
            state.apply(card, seat=seat)
    for index, card in enumerate(hand["plays"]):
        if state.current == 0 and len(state.observation(0).hand) <= 10:
            top = highest(state.legal_actions())
            if card != top:
                return index // 4, card, top
        state.apply(card)
    raise AssertionError("the changed bot never departs in this match")


#: ``bidel`` as a terminal starts it: Ctrl-C raises KeyboardInterrupt even where this test
#: runs with SIGINT ignored (a shell without job control ignores it in what it starts in the
#: background, and children inherit that: a CI started with ``&`` would hang on the Ctrl-C).
BIDEL_AT_A_TERMINAL = [
    sys.executable,
    "-c",
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'bidel'; runpy.run_module('bots_sdk', run_name='__main__', alter_sys=True)",
]


def _token(home: Path, url: str) -> str:
    return json.loads((home / "bidel" / "credentials.json").read_text())["platforms"][url]["token"]


def test_an_author_submits_follows_and_reproduces_from_the_terminal(
    platform: str, tmp_path: Path
) -> None:
    get_user_model().objects.create_user("ada", password=PASSWORD)
    get_user_model().objects.create_user("grace", password=PASSWORD)
    ada, grace = tmp_path / "ada", tmp_path / "grace"
    ada.mkdir()
    grace.mkdir()
    (ada / "bot.py").write_text("CHANGED = False\n" + BOT)
    (ada / "changed.py").write_text("CHANGED = True\n" + BOT)
    (ada / "wrong.py").write_text(REJECTED)

    # log in: a wrong password is one line; the token is kept 0600 and never printed
    refused = _bidel(ada, platform, "login", "--username", "ada", "--password-stdin", stdin="no")
    _one_line_failure(refused, "Unable to log in")
    logged = _bidel(ada, platform, "login", "--username", "ada", "--password-stdin", stdin=PASSWORD)
    assert logged.returncode == 0 and "logged in to" in logged.stdout, logged.stderr
    credentials = ada / "bidel" / "credentials.json"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert stat.S_IMODE(credentials.parent.stat().st_mode) == 0o700
    token = _token(ada, platform)
    assert token and token not in logged.stdout + logged.stderr

    # submit: active (exit 0); a version that fails validation (exit 1, with the reason)
    first = _bidel(ada, platform, "submit", "bot.py", "--bot", "x", "--new")
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.strip().splitlines()[-1] == "x v1 is active"
    wrong = _bidel(ada, platform, "submit", "wrong.py", "--bot", "x")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "x v2 was rejected: " in wrong.stdout and "XX" in wrong.stdout
    _one_line_failure(_bidel(ada, platform, "submit", "bot.py", "--bot", "nope"), "no bot named")
    status = _bidel(ada, platform, "status", "x", "--json")
    assert status.returncode == 0, status.stderr
    versions = {v["number"]: v["status"] for v in json.loads(status.stdout)["versions"]}
    assert versions == {1: "active", 2: "rejected"}
    for output in (first, wrong, status):
        assert token not in output.stdout + output.stderr

    # a match it played
    bot = Bot.objects.get(name="x")
    match = Platform(platform, token).post(
        "/api/matches/", {"seats": [bot.pk, "low", "random", "heuristic"], "hands": 1}
    )
    wait_until(
        lambda: Match.objects.filter(pk=match["id"], status="finished").exists(),
        "the match",
        deadline=5 * DEADLINE,
    )
    match = Match.objects.get(pk=match["id"])
    listed = _bidel(ada, platform, "matches", "x", "--json")
    assert [m["id"] for m in json.loads(listed.stdout)["matches"]] == [match.pk], listed.stderr
    logs = _bidel(ada, platform, "logs", str(match.pk))
    assert logs.returncode == 0 and "seat 1 (x v1):" in logs.stdout, logs.stderr
    shown = logs.stdout.splitlines()
    first = shown.index("      | holding 13 cards")
    assert (
        shown[first - 1].startswith("  hand 1 trick 1  play ") and " ms  bank " in shown[first - 1]
    )
    assert "holding 12 cards" not in logs.stdout
    timeline = json.loads(_bidel(ada, platform, "logs", str(match.pk), "--json").stdout)
    plays = [s for s in timeline["seats"][0]["decisions"] if s["decision"] == "play"]
    assert [s["trick"] for s in plays] == list(range(13))
    for step in plays:  # the lines at the very decisions that wrote them, with the clock
        held = 13 - step["trick"]
        assert ("log" in step) == (held % 2 == 1), step
        assert step.get("log", f"holding {held} cards\n").startswith(f"holding {held} cards")
        assert step["ms"] >= 0 and step["bank_ms"] >= 0
    public = Platform(platform).get(f"/api/matches/{match.pk}/record/")
    assert len(public["seats"][0]["decisions"]) == 14 and "holding" not in json.dumps(public)

    # fetch: a record verify accepts, the seat's logs kept; reproduce: identical, then not
    fetched = _bidel(ada, platform, "fetch", str(match.pk), "-o", "m.json")
    assert fetched.returncode == 0, fetched.stderr
    record = json.loads((ada / "m.json").read_text())
    assert record["bots"] == ["x v1", "low", "random", "heuristic"]
    assert "holding 11 cards" in record["games"][0]["seats"][0]["stderr"]
    verified = _bidel(ada, platform, "verify", "m.json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    same = _bidel(ada, platform, "reproduce", str(match.pk))
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.strip() == "identical: 14 decisions"
    assert same.stderr.strip() == (
        f"match {match.pk}, seat 1: x v1, as it played (bot.py), in the sandbox"
    )
    _one_line_failure(_bidel(ada, platform, "fetch", "999999"), "no match 999999 on http://")
    departs = _bidel(ada, platform, "reproduce", str(match.pk), "--bot", "changed.py")
    assert departs.returncode == 1, departs.stdout + departs.stderr
    trick, recorded, now = _departure(record["games"][0])
    assert departs.stdout.strip().endswith(
        f"hand 1, trick {trick + 1}, seat 1 (play): the record holds {recorded}; "
        f"the bot now plays {now}"
    ), departs.stdout

    # another author sees none of it
    _bidel(grace, platform, "login", "--username", "grace", "--password-stdin", stdin=PASSWORD)
    theirs = _bidel(grace, platform, "logs", str(match.pk))
    _one_line_failure(theirs, f"none of match {match.pk}'s seats is one of your bots")
    assert "holding" not in theirs.stdout
    _one_line_failure(_bidel(grace, platform, "reproduce", str(match.pk)), "one of your bots")
    code = f"/api/bots/{bot.pk}/versions/1/code/"
    assert Platform(platform, token).request("GET", code).body.startswith(b"CHANGED = False")
    with pytest.raises(RemoteError) as refused_code:
        Platform(platform, _token(grace, platform)).request("GET", code)
    assert refused_code.value.status == 404

    # log out: forgotten here and revoked there
    assert _bidel(ada, platform, "logout").returncode == 0
    assert platform not in json.loads(credentials.read_text())["platforms"]
    _one_line_failure(_bidel(ada, platform, "status", "x"), "bidel login")
    with pytest.raises(RemoteError) as revoked:
        Platform(platform, token).get("/api/users/me/")
    assert revoked.value.status == 401


def test_without_a_platform_each_command_fails_in_one_line(tmp_path: Path) -> None:
    stopped = "http://127.0.0.1:9"  # (discard: nothing listens there)
    (tmp_path / "bot.py").write_text("CHANGED = False\n" + BOT)
    env_token = {"BIDEL_TOKEN": "a-token-of-nobody"}
    for args in (
        ["status"],
        ["login", "--username", "ada", "--password-stdin"],
        ["submit", "bot.py", "--bot", "x", "--new"],
        ["fetch", "1"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "bots_sdk", *args, "--url", stopped],
            cwd=tmp_path,
            env=child_env({"XDG_CONFIG_HOME": str(tmp_path), **env_token}),
            input="secret\n",
            capture_output=True,
            text=True,
            timeout=120,
        )
        _one_line_failure(done, "cannot reach the platform at http://127.0.0.1:9")
    usage = _bidel(tmp_path, stopped, "submit", "missing.py", "--bot", "x")
    _one_line_failure(usage, "no bot file or folder")
    assert not (tmp_path / "bidel" / "credentials.json").exists()


GUIDE = (PROJECT_DIR / "docs" / "bots.md").read_text()


def _guide_section() -> tuple[str, list[str]]:
    """docs/bots.md's "From your terminal to the platform": the guide's bot and the
    section's ``bidel`` lines, comments dropped."""
    bot = re.findall(r"```python\n(.*?)```", GUIDE, flags=re.S)[0]
    section = GUIDE.split("From your terminal to the platform", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```sh\n(.*?)```", section, flags=re.S)[0]
    lines = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    return bot, [line for line in lines if line.startswith("bidel ")]


def test_the_guides_terminal_section_runs_as_written(platform: str, tmp_path: Path) -> None:
    get_user_model().objects.create_user("ada", password=PASSWORD)
    bot, lines = _guide_section()
    assert [shlex.split(line)[1] for line in lines] == [
        "login",
        "submit",
        "submit",
        "activate",
        "status",
        "matches",
        "logs",
        "fetch",
        "verify",
        "replay",
        "reproduce",
        "reproduce",
        "reproduce",
        "analyse",
        "analyse",
        "analyse",
        "logout",
    ]
    (tmp_path / "my_bot.py").write_text(bot)
    match_id = None
    for line in lines:
        argv = shlex.split(line)[1:]
        stdin = ""
        if argv[0] == "login":
            argv.append("--password-stdin")
            stdin = PASSWORD
        if "42" in line and match_id is None:  # the guide's match: one the bot has played
            token = _token(tmp_path, platform)
            bot_id = Bot.objects.get(name="my-bot").pk
            match_id = Platform(platform, token).post(
                "/api/matches/", {"seats": [bot_id, "low", "random", "heuristic"], "hands": 1}
            )["id"]
            played = Match.objects.filter(pk=match_id, status="finished")
            wait_until(played.exists, "the match", deadline=5 * DEADLINE)
        argv = [arg.replace("42", str(match_id)) for arg in argv]
        done = _bidel(tmp_path, platform, *argv, stdin=stdin)
        assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr, line
        if argv[0] == "reproduce":
            assert done.stdout.strip().splitlines()[-1].startswith("identical: "), done.stdout
        if argv[0] == "analyse":  # your seat (the first), or the one named
            seat = 3 if "--seat" in argv else 1
            assert f", seat {seat}: " in done.stdout.splitlines()[0], done.stdout
            assert done.stdout.strip().splitlines()[-1].startswith("game: "), done.stdout


def _ladder_round(ladder: Ladder) -> None:
    """Fill the ladder and wait until its matches are played."""
    services.ladder_fill(ladder=ladder)
    open_matches = Match.objects.filter(ladder=ladder, status__in=["queued", "running"])
    wait_until(lambda: not open_matches.exists(), "the ladder's matches", deadline=5 * DEADLINE)


def test_two_versions_are_rated_apart_and_compared_in_words(platform: str, tmp_path: Path) -> None:
    get_user_model().objects.create_user("ada", password=PASSWORD)
    ladder = Ladder.objects.get(name="standard")
    ladder.hands, ladder.concurrency = 1, 4
    ladder.save()
    (tmp_path / "bot.py").write_text("CHANGED = False\n" + BOT)
    (tmp_path / "changed.py").write_text("CHANGED = True\n" + BOT)
    login = ["login", "--username", "ada", "--password-stdin"]
    assert _bidel(tmp_path, platform, *login, stdin=PASSWORD).returncode == 0
    first = _bidel(tmp_path, platform, "submit", "bot.py", "--bot", "x", "--new")
    assert first.returncode == 0, first.stdout + first.stderr
    for _ in range(2):
        _ladder_round(ladder)
    second = _bidel(tmp_path, platform, "submit", "changed.py", "--bot", "x")
    assert second.returncode == 0, second.stdout + second.stderr
    for _ in range(2):
        _ladder_round(ladder)
    services.ratings_recompute(ladder=ladder)
    bot = Bot.objects.get(name="x")
    compared = Comparison.objects.filter(bot=bot)
    wait_until(
        lambda: compared.filter(status="finished").exists(), "the comparison", deadline=5 * DEADLINE
    )

    status = _bidel(tmp_path, platform, "status", "x", "--json")
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    for version in shown["versions"]:  # each fitted on the matches it played, alone
        played = MatchSeat.objects.filter(
            match__ladder=ladder,
            match__status="finished",
            version__bot=bot,
            version__number=version["number"],
        ).count()
        assert played > 0
        assert [(r["ladder"], r["matches"]) for r in version["ratings"]] == [("standard", played)]
    (verdict,) = [c["verdict"] for c in shown["comparisons"]]
    assert verdict.startswith(("v2 is ", "no difference found between v2 and v1")), verdict
    assert " points a hand [" in verdict and "over 3 duplicate deals" in verdict
    text = _bidel(tmp_path, platform, "status", "x").stdout
    assert verdict in text and "        standard: " in text
    listed = Platform(platform).get(f"/api/bots/{bot.pk}/versions/")["results"]
    assert [v["compared"] and v["compared"]["verdict"] for v in listed] == [None, verdict]
    assert listed[1]["compared"]["ci95"][0] <= listed[1]["compared"]["mean"]


@pytest.mark.timeout(LONG_TEST)  # (the SDK's wheel, built here or by another worker)
def test_a_fresh_venv_holding_only_the_sdk_logs_in_and_submits(
    platform: str, tmp_path: Path
) -> None:
    """What a new author has: ``pip install bidel-sdk`` and nothing else (no Django, no
    requests): ``bidel login`` and ``bidel submit`` reach the platform."""
    fresh = shared_fresh_venv()
    bidel = [str(fresh / "venv" / "bin" / "bidel")]
    get_user_model().objects.create_user("ada", password=PASSWORD)
    home = tmp_path / "home"
    home.mkdir()
    (home / "bot.py").write_text("CHANGED = False\n" + BOT)
    login = ["login", "--username", "ada", "--password-stdin"]
    wrong = _bidel(home, platform, *login, stdin="wrong", command=bidel)
    _one_line_failure(wrong, "Unable to log in")
    done = _bidel(home, platform, *login, stdin=PASSWORD, command=bidel)
    assert done.returncode == 0, done.stderr
    submitted = _bidel(home, platform, "submit", "bot.py", "--bot", "x", "--new", command=bidel)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    assert submitted.stdout.strip().splitlines()[-1] == "x v1 is active"
    token = _token(home, platform)
    assert token not in done.stdout + done.stderr + submitted.stdout + submitted.stderr


#: BOT until its third hand, then it raises: the validation's two hands never see it.
CRASHER = "CHANGED = False\n" + BOT.replace(
    "    def play(self, view):\n",
    "    def play(self, view):\n"
    "        if view.hand_number >= 2:\n"
    '            raise ValueError("from the third hand on")\n',
)
#: The line of CRASHER that raises, from 1 as a traceback counts.
CRASHER_RAISES_AT = (
    CRASHER.splitlines().index('            raise ValueError("from the third hand on")') + 1
)


@pytest.mark.timeout(LONG_TEST)  # (the SDK's wheel, built here or by another worker)
def test_an_author_chooses_the_version_that_plays_from_the_terminal(
    platform: str, tmp_path: Path, settings: Any
) -> None:
    """Through the ``bidel`` of a venv that holds the SDK alone: a version that crashes from
    its third hand on never replaces the active one on trial, is benched when made active at
    once, and is found from its match: its exception in the logs, raised again by reproduce
    from its own file and line."""
    bidel = [str(shared_fresh_venv() / "venv" / "bin" / "bidel")]

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return _bidel(tmp_path, platform, *args, stdin=stdin, command=bidel)

    get_user_model().objects.create_user("ada", password=PASSWORD)
    (tmp_path / "bot.py").write_text("CHANGED = False\n" + BOT)
    (tmp_path / "crasher.py").write_text(CRASHER)
    assert run("login", "--username", "ada", "--password-stdin", stdin=PASSWORD).returncode == 0
    first = run("submit", "bot.py", "--bot", "x", "--new")
    assert first.returncode == 0, first.stdout + first.stderr

    # on trial: it faults from its third hand, so v1 plays on and the owner is told why
    tried = run("submit", "crasher.py", "--bot", "x", "--activate", "if-not-weaker")
    assert tried.returncode == 1, tried.stdout + tried.stderr
    assert "x v2 was not made active: " in tried.stdout and "faulted" in tried.stdout
    status = run("status", "x")
    assert "notice: v2 was not made active: it faulted" in status.stdout, status.stdout
    shown = json.loads(run("status", "x", "--json").stdout)
    assert {v["number"]: v["status"] for v in shown["versions"]} == {1: "active", 2: "retired"}
    bot = Bot.objects.get(name="x")
    assert (
        not Match.objects.filter(seats__version__bot=bot, seats__version__number=2)
        .exclude(kind="comparison")
        .exists()
    )

    # the author switches, back and forth; a version held back waits for them
    for number in (2, 1):
        switched = run("activate", "x", str(number))
        assert switched.returncode == 0, switched.stderr
        assert switched.stdout.strip() == f"x v{number} is active"
        assert Platform(platform).get(f"/api/bots/{bot.pk}/")["active_version"] == number
    held = run("submit", "bot.py", "--bot", "x", "--activate", "never")
    assert held.returncode == 0, held.stdout + held.stderr
    assert "x v3 passed its validation; bidel activate x 3 makes it play" in held.stdout
    assert Platform(platform).get(f"/api/bots/{bot.pk}/")["active_version"] == 1
    _one_line_failure(run("activate", "x", "9"), "no version 9")

    # made active at once, it faults in its ladder matches and is benched: v1 plays again
    ladder = Ladder.objects.get(name="standard")
    ladder.hands, ladder.concurrency = 3, 4  # (the third hand: where it raises)
    ladder.save()
    now = run("submit", "crasher.py", "--bot", "x", "--activate", "now", "--ladder", "standard")
    assert now.returncode == 0, now.stdout + now.stderr
    assert now.stdout.strip().splitlines()[-1] == "x v4 is active"
    versions = bot.versions.all()
    for _ in range(settings.BENCH_MIN_FAULTED):
        if versions.get(number=4).status == "active":
            _ladder_round(ladder)
    wait_until(
        lambda: versions.get(number=4).status == "benched", "v4 benched", deadline=5 * DEADLINE
    )
    status = run("status", "x")
    assert "notice: v4 was benched: its seats faulted in " in status.stdout, status.stdout
    assert Platform(platform).get(f"/api/bots/{bot.pk}/")["active_version"] == 1

    # one of those matches: the exception in its logs, raised again by reproduce
    listed = json.loads(run("matches", "x", "--version", "4", "--faults", "--json").stdout)
    match = next(m["id"] for m in listed["matches"] if m["kind"] == "ladder")
    logs = run("logs", str(match))
    assert logs.returncode == 0, logs.stderr
    assert "FAULT crash in hand 3 (play): ValueError: from the third hand on" in logs.stdout
    assert f'crasher.py", line {CRASHER_RAISES_AT}, in play' in logs.stdout, logs.stdout
    again = run("reproduce", str(match))
    assert again.returncode == 1, again.stdout + again.stderr
    assert "the bot faults again as in the match: hand 3" in again.stdout
    assert "crash: ValueError: from the third hand on" in again.stdout
    assert f'  |   File "crasher.py", line {CRASHER_RAISES_AT}, in play' in again.stderr
    here = run("reproduce", str(match), "--here")
    assert here.returncode == 1, here.stdout + here.stderr
    assert here.stdout.strip().endswith(
        f"the bot raises ValueError: from the third hand on at crasher.py, line "
        f"{CRASHER_RAISES_AT} (in the match: crash: ValueError: from the third hand on)"
    ), here.stdout
    debugged = run("reproduce", str(match), "--pdb", stdin="p view.hand_number\nq\n")
    assert debugged.returncode == 1, debugged.stdout + debugged.stderr
    assert "(Pdb) 2" in debugged.stdout, debugged.stdout


@pytest.fixture
def platform_without_worker() -> Iterator[str]:
    """A web server alone: an upload is taken and waits for a worker that never comes."""
    purge_queues("celery", "runner")
    with web_server(worker_env()) as server:
        yield server.url
    purge_queues("celery", "runner")  # (the uploads' validations, for no later worker)


def test_every_failure_is_one_line_and_its_exit_code_says_whose(
    platform_without_worker: str, tmp_path: Path
) -> None:
    """1 when the bot is at fault, 2 when bidel or the platform could not do it; a reader
    gone away is quiet; Ctrl-C after the upload was taken says so and how to follow it."""
    url = platform_without_worker
    get_user_model().objects.create_user("ada", password=PASSWORD)
    grace = get_user_model().objects.create_user("grace", password=PASSWORD)
    Bot.objects.create(owner=grace, name="ducker")
    (tmp_path / "bot.py").write_text("CHANGED = False\n" + BOT)
    (tmp_path / "broken.py").write_text("from bots_sdk import Bot\n\nclass B(Bot)\n")

    # an account from the terminal, its login one for the server however it is written
    newbie = tmp_path / "newbie"
    newbie.mkdir()
    signup = ["signup", "--username", "newbie", "--password-stdin", "--email", "n@example.org"]
    made = _bidel(newbie, url, *signup, stdin=PASSWORD)
    assert made.returncode == 0, made.stdout + made.stderr
    assert made.stdout.splitlines()[:2] == [
        f"signed up at {url} as newbie",
        made.stdout.splitlines()[1],
    ] and made.stdout.splitlines()[1].startswith(f"logged in to {url} as newbie")
    assert get_user_model().objects.get(username="newbie").email == "n@example.org"
    aliased = url.replace("127.0.0.1", "localhost")
    mine = _bidel(newbie, aliased, "status")
    assert mine.returncode == 0, mine.stderr
    assert mine.stdout.strip() == "you have no bots yet: bidel submit"
    taken = _bidel(newbie, url, *signup, stdin=PASSWORD)
    _one_line_failure(taken, "username")
    wrong = _bidel(newbie, url, "login", "--username", "newbie", "--password-stdin", stdin="no")
    _one_line_failure(wrong, "no account yet? bidel signup", "/password-reset/")

    no_terminal = _bidel(tmp_path, url, "login", "--username", "ada")  # (stdin: not a tty)
    _one_line_failure(no_terminal, "no terminal to ask for the password on", "--password-stdin")
    login = ["login", "--username", "ada", "--password-stdin"]
    assert _bidel(tmp_path, url, *login, stdin=PASSWORD).returncode == 0

    anothers = _bidel(tmp_path, url, "submit", "bot.py", "--bot", "ducker", "--new")
    _one_line_failure(anothers, "the bot 'ducker' is grace's, not yours")
    broken = _bidel(tmp_path, url, "submit", "broken.py", "--bot", "x", "--new")
    assert broken.returncode == 1, broken.stdout + broken.stderr  # (the bot's to fix)
    assert "Traceback" not in broken.stderr
    assert broken.stderr.strip() == (
        "bidel: broken.py: syntax error on line 3: expected ':' (nothing was uploaded)"
    )
    (tmp_path / "empty.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # (a zip of nothing)
    empty = _bidel(tmp_path, url, "submit", "empty.zip", "--bot", "x", "--new")
    assert empty.returncode == 1 and "holds neither bot.py" in empty.stderr, empty.stderr
    assert not Bot.objects.filter(name="x").exists()  # (refused before anything was made)

    # Ctrl-C while waiting for a validation (no worker here: it never comes)
    waiting = subprocess.Popen(
        [*BIDEL_AT_A_TERMINAL, "submit", "bot.py", "--bot", "x", "--new"],
        cwd=tmp_path,
        env=child_env({"XDG_CONFIG_HOME": str(tmp_path), "BIDEL_URL": url, "BIDEL_TOKEN": None}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert waiting.stdout is not None
    assert waiting.stdout.readline().startswith("created the bot x (id ")
    line = waiting.stdout.readline()  # (blocks until bidel says the upload was taken)
    assert line.startswith("uploaded x v1 ("), line
    waiting.send_signal(signal.SIGINT)
    out, err = waiting.communicate(timeout=LONG)
    assert waiting.returncode == 2, out + err
    assert err.strip() == (
        "bidel: stopped waiting: x v1 was uploaded and goes on without bidel; "
        "bidel status x follows it"
    )

    # a reader that went away: quiet, with the status of a command SIGPIPE ended
    reader, writer = os.pipe()
    os.close(reader)
    gone = subprocess.run(
        [sys.executable, "-m", "bots_sdk", "status", "x"],
        cwd=tmp_path,
        env=child_env({"XDG_CONFIG_HOME": str(tmp_path), "BIDEL_URL": url, "BIDEL_TOKEN": None}),
        stdout=writer,
        stderr=subprocess.PIPE,
        text=True,
        timeout=LONG,
    )
    os.close(writer)
    assert gone.stderr == "" and gone.returncode == 128 + signal.SIGPIPE
