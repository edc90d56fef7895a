"""docker-compose.yml and the Dockerfile agree with the settings module.

No Docker engine runs here, so the files are parsed and their environment is fed to the real
settings module in a fresh interpreter.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import dj_database_url
import pytest
import yaml

from bots_sdk.sandbox.seccomp import runner_profile
from tests.support import PROJECT_DIR, SERVICE_VARIABLES, child_env, settings_in_subprocess

APP_SERVICES = ("web", "worker", "beat", "migrate")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((PROJECT_DIR / "docker-compose.yml").read_text())


def _interpolate(value: str) -> str:
    # ${NAME:-default} -> default; ${NAME:?message} -> a stand-in value, as compose would require.
    value = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)
    return re.sub(r"\$\{[A-Z_]+:\?[^}]*\}", "x" * 50, value)


def _environment(service: dict[str, Any]) -> dict[str, str]:
    return {key: _interpolate(str(value)) for key, value in service["environment"].items()}


def test_services_exist(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {
        "postgres",
        "redis",
        "web",
        "worker",
        "beat",
        "migrate",
        "runner",
        "runner-people",
    }


@pytest.mark.parametrize("name", ["runner", "runner-people"])
def test_runners_hold_no_secret_and_cannot_reach_the_database(
    compose: dict[str, Any], name: str
) -> None:
    runner = compose["services"][name]
    assert set(runner["environment"]) <= {"REDIS_URL", "BIDEL_SANDBOX"}
    assert "volumes" not in runner and "ports" not in runner and "container_name" not in runner
    assert runner["networks"] == ["broker"]
    assert "broker" not in compose["services"]["postgres"]["networks"]
    assert runner["command"][:3] == ["python", "-m", "hearts_runner"]
    assert sorted(runner["cap_add"]) == ["NET_ADMIN", "SYS_ADMIN"]
    assert "privileged" not in runner
    assert runner["security_opt"] == ["seccomp=./deploy/runner-seccomp.json"]


def test_peoples_games_have_runners_of_their_own(compose: dict[str, Any]) -> None:
    from hearts_runner.__main__ import worker_args
    from hearts_runner.config import PEOPLE_CONCURRENCY, PEOPLE_QUEUE

    command = compose["services"]["runner-people"]["command"]
    assert command == ["python", "-m", "hearts_runner", "--people"]
    args = worker_args(command[3:])
    assert f"--queues={PEOPLE_QUEUE}" in args and f"--concurrency={PEOPLE_CONCURRENCY}" in args
    assert "--people" not in compose["services"]["runner"]["command"]  # bots only there
    web = _environment(compose["services"]["web"])
    assert int(web["HUMAN_GAMES_MAX_OPEN"]) == PEOPLE_CONCURRENCY  # one runner-people's slots


def test_the_runner_seccomp_file_is_the_one_the_sdk_defines() -> None:
    written = json.loads((PROJECT_DIR / "deploy" / "runner-seccomp.json").read_text())
    assert written == runner_profile()
    denied = set(written["syscalls"][0]["names"])
    assert {"keyctl", "add_key", "bpf", "perf_event_open", "kexec_load"} <= denied
    assert "pivot_root" not in denied  # what Docker's default profile refuses and bwrap needs


def test_no_password_is_written_in_the_file() -> None:
    text = (PROJECT_DIR / "docker-compose.yml").read_text()
    assert "${POSTGRES_PASSWORD:?" in text and "${SECRET_KEY:?" in text
    assert "bidel:bidel@" not in text and "POSTGRES_PASSWORD: bidel" not in text


def test_commands(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["web"]["command"][:2] == ["uvicorn", "hearts_platform.asgi:application"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "hearts_platform", "worker"]
    assert "--queues=celery" in services["worker"]["command"]  # plays nothing itself
    beat = services["beat"]["command"]
    assert beat[:4] == ["celery", "-A", "hearts_platform", "beat"]
    assert "--scheduler=django_celery_beat.schedulers:DatabaseScheduler" in beat
    assert services["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert services["migrate"]["restart"] == "no"


def test_worker_can_be_scaled(compose: dict[str, Any]) -> None:
    worker = compose["services"]["worker"]
    assert "container_name" not in worker and "ports" not in worker


def test_app_services_wait_for_their_dependencies(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("web", "worker", "beat"):
        depends = services[name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
        assert depends["migrate"]["condition"] == "service_completed_successfully"
    assert {"postgres", "redis"} <= set(services["migrate"]["depends_on"])


def test_environment_points_at_the_compose_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    postgres = _environment(services["postgres"])
    for name in APP_SERVICES:
        env = _environment(services[name])
        assert env["DEBUG"] == "0" and env["SECRET_KEY"]
        database = dj_database_url.parse(env["DATABASE_URL"])
        assert database["ENGINE"] == "django.db.backends.postgresql"
        assert database["HOST"] == "postgres"
        assert (database["USER"], database["PASSWORD"], database["NAME"]) == (
            postgres["POSTGRES_USER"],
            postgres["POSTGRES_PASSWORD"],
            postgres["POSTGRES_DB"],
        )
        assert env["REDIS_URL"].startswith("redis://redis:6379/")


def test_settings_load_under_the_compose_environment(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    env = _environment(compose["services"]["worker"])
    env["BIDEL_VAR_DIR"] = str(tmp_path)  # the container's /var/lib/bidel
    overrides: dict[str, str | None] = {name: None for name in SERVICE_VARIABLES}
    overrides.update(env)
    values = settings_in_subprocess(
        child_env(overrides),
        "DEBUG",
        "DATABASES",
        "CELERY_BROKER_URL",
        "CACHES",
        "ENVIRONMENT_VARIABLES",
    )
    assert values["DEBUG"] is False
    assert values["DATABASES"]["default"]["HOST"] == "postgres"
    assert values["CELERY_BROKER_URL"] == env["REDIS_URL"]
    assert values["CACHES"]["default"]["LOCATION"] == env["REDIS_URL"]
    # Everything compose sets is something the settings read.
    assert set(env) <= set(values["ENVIRONMENT_VARIABLES"])


def test_dockerfile_builds_the_image_the_services_share(compose: dict[str, Any]) -> None:
    dockerfile = (PROJECT_DIR / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM python:3.11" in dockerfile
    assert "\nCOPY . .\n" in dockerfile  # the code, in one layer
    lines = (PROJECT_DIR / ".dockerignore").read_text().splitlines()
    ignored = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    for package in ("engine", "bots_sdk", "arena", "hearts_platform", "hearts_runner", "sdk"):
        assert not [p for p in ignored if p.strip("/*") == package], package
    assert "constraints.txt" in dockerfile
    images = {compose["services"][name]["image"] for name in APP_SERVICES}
    assert images == {"bidel:latest"}
    assert all(compose["services"][name]["build"] == "." for name in APP_SERVICES)
