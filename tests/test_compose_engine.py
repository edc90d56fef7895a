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

from tests.support import PROJECT_DIR

# Building the images and starting seven containers on vfs takes minutes, not seconds.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]

LOOKER = (PROJECT_DIR / "tests" / "arena" / "test_runner_tier.py").read_text().split(
    "LOOKER = b'''"
)[1].split("'''")[0]


def _missing() -> str:
    if shutil.which("docker") is None or shutil.which("docker-compose") is None:
        return "docker and docker-compose are not installed (deploy/docker-engine.sh)"
    info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    if info.returncode != 0:
        return f"no Docker engine answers (deploy/docker-engine.sh): {info.stderr.strip()[:120]}"
    for image in ("python:3.11-slim-bookworm", "postgres:15", "redis:7"):
        if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode:
            return f"the image {image} is missing (deploy/base-image.sh builds it offline)"
    return ""


def _run(*argv: str, timeout: float = 900, **options: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                          cwd=PROJECT_DIR, **options)  # fmt: skip
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
    }
    compose = ["docker-compose", "-p", project]
    try:
        _run(*compose, "up", "-d", "--no-build", env=env)
        yield {"project": project, "base": f"http://127.0.0.1:{port}", "compose": compose,
               "env": env}  # fmt: skip
    finally:
        logs = subprocess.run([*compose, "logs", "--tail=200"], capture_output=True, text=True,
                              cwd=PROJECT_DIR, env=env)  # fmt: skip
        (PROJECT_DIR / "var").mkdir(exist_ok=True)
        (PROJECT_DIR / "var" / "compose-test.log").write_text(logs.stdout + logs.stderr)
        subprocess.run([*compose, "down", "-v", "--remove-orphans"], capture_output=True,
                       cwd=PROJECT_DIR, env=env, timeout=600)  # fmt: skip


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
    upload = session.post(f"{base}/api/bots/{bot}/versions/",
                          files={"file": ("bot.py", LOOKER.encode())}, timeout=60)  # fmt: skip
    assert upload.status_code == 201, upload.text

    def settled() -> Any:
        version = session.get(f"{base}/api/bots/{bot}/versions/1/", timeout=30).json()
        return version if version["status"] in ("active", "rejected") else None

    version = _wait(settled, 180, "the validation in a runner container")
    assert version["status"] == "active", version["validation_log"]
    assert "LOOKED []" in version["validation_log"]  # nothing of the platform's to be found
    joined = session.post(f"{base}/api/ladders/1/entries/", json={"bot": bot}, timeout=30)
    assert joined.status_code == 201, joined.text

    def played() -> Any:
        page = session.get(f"{base}/api/matches/", params={"bot": bot, "status": "finished"},
                           timeout=30).json()  # fmt: skip
        return page["results"] if page["count"] >= 1 else None

    matches = _wait(played, 400, "a ladder match with the uploaded bot")
    record = session.get(f"{base}/api/matches/{matches[0]['id']}/record/", timeout=30).json()
    assert record["seed"] == matches[0]["seed"]
    rankings = _wait(
        lambda: [r for r in session.get(f"{base}/api/ladders/1/rankings/", timeout=30).json()
                 if r["bot"]["name"] == "looker"],
        120, "the bot in the rankings",
    )  # fmt: skip
    assert rankings[0]["matches"] >= 1


def test_the_runner_container_holds_no_secret(deployment: dict[str, Any]) -> None:
    ids = _run(*deployment["compose"], "ps", "-q", "runner", env=deployment["env"]).stdout.split()
    assert ids, "no runner container"
    inspected = json.loads(_run("docker", "inspect", *ids).stdout)
    for container in inspected:
        names = {item.split("=", 1)[0] for item in container["Config"]["Env"]}
        assert not names & {"DATABASE_URL", "SECRET_KEY", "POSTGRES_PASSWORD"}, names
        assert not container["Mounts"], container["Mounts"]  # no volume, no socket
        assert not container["HostConfig"]["Privileged"]
        networks = set(container["NetworkSettings"]["Networks"])
        assert networks == {f"{deployment['project']}_broker"}, networks
    probe = _run("docker", "exec", ids[0], "sh", "-c",
                 "cat /proc/1/environ | tr '\\0' '\\n'; ls /run/postgresql /var/run/postgresql "
                 "2>&1; getent hosts postgres || echo NO-POSTGRES")  # fmt: skip
    assert "DATABASE_URL" not in probe.stdout and "SECRET_KEY" not in probe.stdout
    assert "NO-POSTGRES" in probe.stdout  # the database's name does not even resolve


def test_the_red_team_suite_passes_inside_the_runners_image(deployment: dict[str, Any]) -> None:
    _run("docker", "build", "--network", "host", "-f", "tests/docker/Dockerfile.hostile",
         "-t", "bidel-hostile:latest", ".")  # fmt: skip
    done = subprocess.run(
        ["docker", "run", "--rm", "--user", "0", "--cap-add", "SYS_ADMIN", "--cap-add",
         "NET_ADMIN", "--security-opt", "seccomp=./deploy/runner-seccomp.json",
         "--network", "none", "bidel-hostile:latest"],
        capture_output=True, text=True, timeout=1500, cwd=PROJECT_DIR,
    )  # fmt: skip
    tail = done.stdout[-4000:]
    assert done.returncode == 0, tail + done.stderr[-2000:]
    assert " passed" in tail and " skipped" not in tail.splitlines()[-1], tail


def test_down_leaves_no_container(deployment: dict[str, Any]) -> None:
    _run(*deployment["compose"], "down", "-v", "--remove-orphans", env=deployment["env"])
    left = _run("docker", "ps", "-aq", "--filter",
                f"label=com.docker.compose.project={deployment['project']}").stdout  # fmt: skip
    assert left.split() == []
