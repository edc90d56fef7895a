"""docker-compose.yml on a real Docker engine: up and healthy with the sandbox green; a user
signs up and uploads a bot, a runner container validates it, ladder matches with it are
played there and ranked; the runner holds no secret; the red-team suite passes inside the
runner's image with the runner's privileges; `down` leaves no container.

Needs a Docker engine, Debian's docker-compose and the base images (`deploy/docker-engine.sh`
and `deploy/base-image.sh`, which `.ci/run` runs); skipped, saying which is missing, elsewhere.
Images are built with `--network host` first (builds on an engine without a bridge have no
network), then compose starts them without building.
"""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from tests.arena.test_runner_tier import LOOKER  # the bot that looks for the platform
from tests.support import PROJECT_DIR

# Building the images and starting seven containers takes minutes (on vfs, many), not seconds.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]


def _missing() -> str:
    if shutil.which("docker") is None or shutil.which("docker-compose") is None:
        return "docker and docker-compose are not installed (deploy/docker-engine.sh)"
    info = subprocess.run(
        ["docker", "info", "--format", "{{.ServerVersion}}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if info.returncode != 0:
        return f"no Docker engine answers (deploy/docker-engine.sh): {info.stderr.strip()[:120]}"
    for image in ("python:3.11-slim-bookworm", "postgres:15", "redis:7"):
        if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode:
            return f"the image {image} is missing (deploy/base-image.sh builds it offline)"
    return ""


def _run(*argv: str, timeout: float = 900, **options: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, cwd=PROJECT_DIR, **options
    )
    assert done.returncode == 0, f"{' '.join(argv)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)  # polling a server's state; the condition, not the time, ends the wait
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def deployment() -> Iterator[dict[str, Any]]:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    _run("docker", "build", "--network", "host", "-t", "bidel:latest", ".")
    project = f"bideltest{uuid.uuid4().hex[:8]}"
    port = _free_port()
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "POSTGRES_PASSWORD": secrets.token_urlsafe(24),
        "BIDEL_PORT": str(port),
        "ALLOWED_HOSTS": "localhost,127.0.0.1",
        # a lost match is played again within a minute here (20 minutes by default)
        "MATCH_LEASE_SECONDS": "45",
        "REAP_SECONDS": "5",
        # on vfs, removing a container of the 1.4 GB runner image outlasts compose's default
        # 60 s read timeout ("Read timed out" from `down`)
        "COMPOSE_HTTP_TIMEOUT": "600",
    }
    compose = ["docker-compose", "-p", project]
    try:
        _run(*compose, "up", "-d", "--no-build", env=env)
        yield {
            "project": project,
            "base": f"http://127.0.0.1:{port}",
            "compose": compose,
            "env": env,
        }
    finally:
        logs = subprocess.run(
            [*compose, "logs", "--tail=200"],
            capture_output=True,
            text=True,
            cwd=PROJECT_DIR,
            env=env,
        )
        (PROJECT_DIR / "var").mkdir(exist_ok=True)
        (PROJECT_DIR / "var" / "compose-test.log").write_text(logs.stdout + logs.stderr)
        subprocess.run(
            [*compose, "down", "-v", "--remove-orphans"],
            capture_output=True,
            cwd=PROJECT_DIR,
            env=env,
            timeout=600,
        )


def _health(base: str) -> dict[str, Any] | None:
    try:
        response = requests.get(f"{base}/api/health/", timeout=10)
    except requests.RequestException:
        return None
    return response.json() if response.status_code == 200 else None


def test_compose_up_is_healthy_with_the_sandbox_green(deployment: dict[str, Any]) -> None:
    health = _wait(lambda: _health(deployment["base"]), 300, "a healthy /api/health/")
    assert health["status"] == "ok"
    assert health["database"]["vendor"] == "postgresql" and health["runners"]["count"] >= 1
    assert health["sandbox"]["ok"] is True and health["sandbox"]["backend"] == "bubblewrap"
    assert health["sandbox"]["limits"].startswith("per bot:"), health["sandbox"]
    assert health["sandbox"]["packages"].startswith("numpy 2."), health["sandbox"]


def _signed_up(base: str, name: str) -> requests.Session:
    session = requests.Session()
    user = {"username": name, "password": f"a long passphrase for {name}"}
    assert session.post(f"{base}/api/users/", json=user, timeout=30).status_code == 201
    token = session.post(f"{base}/api/token/", json=user, timeout=30).json()["token"]
    session.headers["Authorization"] = f"Token {token}"
    return session


def _upload(
    session: requests.Session, base: str, name: str, code: bytes, filename: str = ""
) -> int:
    """A bot that enters no ladder by itself (so no ladder match of it runs beside the test's
    own), with ``code`` as its first version."""
    bot = session.post(
        f"{base}/api/bots/", json={"name": name, "join_ladders": []}, timeout=30
    ).json()["id"]
    upload = session.post(
        f"{base}/api/bots/{bot}/versions/",
        files={"file": (filename or f"{name}.py", code)},
        timeout=60,
    )
    assert upload.status_code == 201, upload.text
    return int(bot)


def _settled(session: requests.Session, base: str, bot: int) -> Callable[[], Any]:
    def settled() -> Any:
        version = session.get(f"{base}/api/bots/{bot}/versions/1/", timeout=30).json()
        return version if version["status"] in ("active", "rejected") else None

    return settled


def _runners(deployment: dict[str, Any]) -> list[str]:
    """The deployment's running runner containers (a killed one stays, stopped)."""
    done = _run(
        "docker",
        "ps",
        "-q",
        "--no-trunc",
        "--filter",
        f"label=com.docker.compose.project={deployment['project']}",
        "--filter",
        "label=com.docker.compose.service=runner",
    )
    return done.stdout.split()


def _django(deployment: dict[str, Any], code: str) -> str:
    """Run ``code`` in the platform's worker container (its Django, its database)."""
    return _run(
        *deployment["compose"],
        "exec",
        "-T",
        "worker",
        "python",
        "manage.py",
        "shell",
        "-c",
        code,
        env=deployment["env"],
    ).stdout


SLOW = b"""import time
from bots_sdk import Bot, lowest


class Slow(Bot):
    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        time.sleep(0.25)
        return lowest(view.legal)
"""


def test_a_runner_killed_mid_match_another_plays_it_and_it_is_stored_once(
    deployment: dict[str, Any],
) -> None:
    # (first of the tests with uploads: only this match's bot runs in a runner's sandbox)
    base, compose, env = deployment["base"], deployment["compose"], deployment["env"]
    _run(*compose, "up", "-d", "--no-build", "--scale", "runner=2", env=env)
    _wait(
        lambda: (_health(base) or {}).get("runners", {}).get("count", 0) >= 2,
        300,
        "two runners in the health report",
    )
    session = _signed_up(base, "grace")
    bot = _upload(session, base, "slow", SLOW)
    version = _wait(_settled(session, base, bot), 180, "the slow bot's validation")
    assert version["status"] == "active", version["validation_log"]
    created = session.post(
        f"{base}/api/matches/",
        json={"seats": [bot, "low", "random", "heuristic"], "hands": 4},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    match = created.json()["id"]

    def playing() -> str | None:  # the runner whose sandbox holds the slow bot now
        for container in _runners(deployment):
            top = subprocess.run(
                ["docker", "top", container, "-eo", "pid,args"], capture_output=True, text=True
            ).stdout
            # the bot's own process (a runner's sandbox probe runs bwrap too): the match's,
            # as the slow bot plays in no other (it enters no ladder)
            if "slow.py" in top:
                return container
        return None

    victim = _wait(playing, 120, "the match's bot in a runner's sandbox")
    survivor = next(c for c in _runners(deployment) if c != victim)
    _run("docker", "kill", victim)
    try:
        _finished_once(deployment, session, match, survivor)
    finally:  # the killed runner stays stopped: back to one runner for the next tests
        _run("docker", "rm", "-f", victim)
        _run(*compose, "up", "-d", "--no-build", "--scale", "runner=1", env=env)


def _finished_once(
    deployment: dict[str, Any], session: requests.Session, match: int, survivor: str
) -> None:
    base = deployment["base"]
    # a runner, compromised or confused, sends a result under a claim it does not hold
    forged = {
        "kind": "match",
        "ref": match,
        "claim": "forged",
        "ok": False,
        "cause": "sandbox",
        "error": "FORGED",
        "runner": "forger",
    }
    _run(
        "docker",
        "exec",
        survivor,
        "python",
        "-c",
        "import sys, json; from hearts_runner.celery import app; "
        "app.send_task('arena.job_finished', args=[json.loads(sys.argv[1])], queue='celery')",
        json.dumps(forged),
    )

    def done() -> Any:
        found = session.get(f"{base}/api/matches/{match}/", timeout=30).json()
        return found if found["status"] in ("finished", "failed") else None

    finished = _wait(done, 400, "the match played again by the other runner")
    assert finished["status"] == "finished", finished
    record = session.get(f"{base}/api/matches/{match}/record/", timeout=30).json()
    assert len([hand for hand in record["hands"] if not hand.get("void")]) == 4
    stored = json.loads(
        _django(
            deployment,
            (
                f"import json; from arena.models import Match; m = Match.objects.get(pk={match}); "
                "print(json.dumps({'attempts': m.attempts, 'seats': m.seats.count(), "
                "'ranked': m.seats.exclude(rank=None).count(), 'error': m.error}))"
            ),
        )
        .strip()
        .splitlines()[-1]
    )
    assert stored["attempts"] >= 2, stored  # the first runner's claim was lost, then reissued
    assert stored["seats"] == stored["ranked"] == 4 and "FORGED" not in stored["error"], stored


def test_an_upload_is_validated_and_played_on_the_ladder_by_a_runner(
    deployment: dict[str, Any],
) -> None:
    base = deployment["base"]
    _wait(lambda: _health(base), 300, "a healthy /api/health/")
    session = requests.Session()
    user = {"username": "ada", "password": "a long passphrase"}
    assert session.post(f"{base}/api/users/", json=user, timeout=30).status_code == 201
    token = session.post(f"{base}/api/token/", json=user, timeout=30).json()["token"]
    session.headers["Authorization"] = f"Token {token}"
    bot = session.post(f"{base}/api/bots/", json={"name": "looker"}, timeout=30).json()["id"]
    upload = session.post(
        f"{base}/api/bots/{bot}/versions/", files={"file": ("bot.py", LOOKER)}, timeout=60
    )
    assert upload.status_code == 201, upload.text

    def settled() -> Any:
        version = session.get(f"{base}/api/bots/{bot}/versions/1/", timeout=30).json()
        return version if version["status"] in ("active", "rejected") else None

    version = _wait(settled, 180, "the validation in a runner container")
    assert version["status"] == "active", version["validation_log"]
    assert "LOOKED []" in version["validation_log"]  # nothing of the platform's to be found
    assert "entered the ladder(s): standard" in version["validation_log"]  # by itself
    joined = session.post(f"{base}/api/ladders/1/entries/", json={"bot": bot}, timeout=30)
    assert joined.status_code == 200, joined.text  # (already in: entering again changes nothing)

    def played() -> Any:
        page = session.get(
            f"{base}/api/matches/", params={"bot": bot, "status": "finished"}, timeout=30
        ).json()
        return page["results"] if page["count"] >= 1 else None

    matches = _wait(played, 400, "a ladder match with the uploaded bot")
    record = session.get(f"{base}/api/matches/{matches[0]['id']}/record/", timeout=30).json()
    assert record["seed"] == matches[0]["seed"]
    rankings = _wait(
        lambda: [
            r
            for r in session.get(f"{base}/api/ladders/1/rankings/", timeout=30).json()
            if r["bot"]["name"] == "looker" and r["rating"] is not None
        ],
        120,
        "the bot rated in the rankings (listed unrated at once, rated at a refit)",
    )
    assert rankings[0]["matches"] >= 1


def test_the_starter_kits_build_and_validate_in_the_runner_container(
    deployment: dict[str, Any],
) -> None:
    """Each language's kit, as `bidel pack` zips it, is built by a runner container's
    toolchain (the image's) in its sandbox and validated."""
    from bots_sdk.build import pack

    base = deployment["base"]
    _wait(lambda: _health(base), 300, "a healthy /api/health/")
    session = _signed_up(base, "polyglot")
    bots = {
        language: _upload(
            session,
            base,
            f"kit-{language}",
            pack(PROJECT_DIR / "kits" / language),
            f"{language}.zip",
        )
        for language in ("cpp", "rust", "java", "javascript")
    }
    for language, bot in bots.items():
        version = _wait(_settled(session, base, bot), 400, f"the {language} kit's validation")
        log = version["validation_log"]
        assert version["status"] == "active", log
        assert f"built ({language}) in" in log, log


def test_the_runner_container_holds_no_secret(deployment: dict[str, Any]) -> None:
    ids = _runners(deployment)
    assert ids, "no runner container"
    inspected = json.loads(_run("docker", "inspect", *ids).stdout)
    for container in inspected:
        names = {item.split("=", 1)[0] for item in container["Config"]["Env"]}
        assert not names & {"DATABASE_URL", "SECRET_KEY", "POSTGRES_PASSWORD"}, names
        assert not container["Mounts"], container["Mounts"]  # no volume, no socket
        assert not container["HostConfig"]["Privileged"]
        networks = set(container["NetworkSettings"]["Networks"])
        assert networks == {f"{deployment['project']}_broker"}, networks
    probe = _run(
        "docker",
        "exec",
        ids[0],
        "sh",
        "-c",
        "cat /proc/1/environ | tr '\\0' '\\n'; ls /run/postgresql /var/run/postgresql "
        "2>&1; getent hosts postgres || echo NO-POSTGRES",
    )
    assert "DATABASE_URL" not in probe.stdout and "SECRET_KEY" not in probe.stdout
    assert "NO-POSTGRES" in probe.stdout  # the database's name does not even resolve


def test_the_red_team_suite_passes_inside_the_runners_image(deployment: dict[str, Any]) -> None:
    _run(
        "docker",
        "build",
        "--network",
        "host",
        "-f",
        "tests/docker/Dockerfile.hostile",
        "-t",
        "bidel-hostile:latest",
        ".",
    )
    done = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--user",
            "0",
            "--cap-add",
            "SYS_ADMIN",
            "--cap-add",
            "NET_ADMIN",
            "--security-opt",
            "seccomp=./deploy/runner-seccomp.json",
            "--network",
            "none",
            "bidel-hostile:latest",
        ],
        capture_output=True,
        text=True,
        timeout=1500,
        cwd=PROJECT_DIR,
    )
    tail = done.stdout[-4000:]
    assert done.returncode == 0, tail + done.stderr[-2000:]
    summary = tail.splitlines()[-1]
    assert " passed" in summary and " skipped" not in summary, tail


def test_with_no_runner_able_to_sandbox_uploads_are_rejected_saying_why_and_health_is_red(
    deployment: dict[str, Any],
) -> None:
    base, compose, env = deployment["base"], deployment["compose"], deployment["env"]
    _run(*compose, "up", "-d", "--no-build", "--scale", "runner=0", env=env)
    # a runner started as an operator might by mistake: the image's user, Docker's defaults
    name = f"{deployment['project']}-unprivileged-runner"
    _run(
        "docker",
        "run",
        "-d",
        "--name",
        name,
        "--network",
        f"{deployment['project']}_broker",
        "-e",
        "REDIS_URL=redis://redis:6379/0",
        "bidel:latest",
        "python",
        "-m",
        "hearts_runner",
        "--concurrency=1",
    )
    try:

        def red() -> Any:
            response = requests.get(f"{base}/api/health/", timeout=10)
            body = response.json()
            return body if response.status_code == 503 and body["runners"]["count"] == 1 else None

        health = _wait(red, 120, "a red health report with the one runner")
        assert health["sandbox"]["ok"] is False and health["sandbox"]["detail"], health
        session = _signed_up(base, "hedy")
        bot = _upload(session, base, "hopeful", SLOW)
        started = time.monotonic()
        version = _wait(_settled(session, base, bot), 90, "the upload's verdict")
        assert time.monotonic() - started < 60
        assert version["status"] == "rejected", version
        assert "no runner could sandbox it" in version["validation_log"], version
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)
        _run(*compose, "up", "-d", "--no-build", "--scale", "runner=1", env=env)


def test_down_leaves_no_container(deployment: dict[str, Any]) -> None:
    _run(*deployment["compose"], "down", "-v", "--remove-orphans", env=deployment["env"])
    left = _run(
        "docker",
        "ps",
        "-aq",
        "--filter",
        f"label=com.docker.compose.project={deployment['project']}",
    ).stdout
    assert left.split() == []
