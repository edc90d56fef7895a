"""Settings come from the environment, with safe defaults and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import PROJECT_DIR, SERVICE_VARIABLES, child_env, settings_in_subprocess


def _fresh_env(tmp_path: Path, **overrides: str | None) -> dict[str, str]:
    base: dict[str, str | None] = {name: None for name in SERVICE_VARIABLES}
    base["SECRET_KEY"] = None
    base["BIDEL_VAR_DIR"] = str(tmp_path)
    base.update(overrides)
    return child_env(base)


def _one_line_error(argv: list[str], env: dict[str, str]) -> str:
    completed = subprocess.run(
        argv, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode != 0
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1, completed.stderr
    return lines[0]


@pytest.mark.parametrize(
    "argv",
    [
        [sys.executable, "manage.py", "check"],
        [sys.executable, "manage.py", "runserver", "--noreload"],
        [sys.executable, "-m", "celery", "-A", "hearts_platform", "worker"],
        [sys.executable, "-c", "import hearts_platform.wsgi"],
    ],
    ids=["check", "runserver", "celery-worker", "wsgi"],
)
def test_debug_off_without_secret_key_refuses_to_start(tmp_path: Path, argv: list[str]) -> None:
    line = _one_line_error(argv, _fresh_env(tmp_path, DEBUG="0"))
    assert line.startswith("bidel: configuration error: SECRET_KEY is not set and DEBUG is off")


def test_debug_defaults_to_off(tmp_path: Path) -> None:
    line = _one_line_error([sys.executable, "manage.py", "check"], _fresh_env(tmp_path, DEBUG=None))
    assert "SECRET_KEY" in line


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("DEBUG", "maybe", "DEBUG='maybe' is not a boolean"),
        ("DATABASE_URL", "nosuchdb://x/y", "DATABASE_URL is not a usable database URL"),
        ("REDIS_URL", "http://127.0.0.1:6379", "REDIS_URL='http://127.0.0.1:6379' must start with"),
        ("CELERY_TASK_TIME_LIMIT", "10", "CELERY_TASK_TIME_LIMIT (10) must exceed"),
        ("HEALTH_CACHE_SECONDS", "soon", "HEALTH_CACHE_SECONDS='soon' is not an integer"),
    ],
)
def test_malformed_variables_fail_with_one_line(
    tmp_path: Path, variable: str, value: str, message: str
) -> None:
    env = _fresh_env(tmp_path, **{"DEBUG": "1", variable: value})
    line = _one_line_error([sys.executable, "manage.py", "check"], env)
    assert line.startswith("bidel: configuration error: ")
    assert message in line


def test_production_settings_with_secret_key(tmp_path: Path) -> None:
    values = settings_in_subprocess(
        _fresh_env(
            tmp_path,
            DEBUG="0",
            SECRET_KEY="s" * 50,
            ALLOWED_HOSTS="bidel.example, api.bidel.example",
        ),
        "DEBUG",
        "SECRET_KEY",
        "ALLOWED_HOSTS",
    )
    assert values == {
        "DEBUG": False,
        "SECRET_KEY": "s" * 50,
        "ALLOWED_HOSTS": ["bidel.example", "api.bidel.example"],
    }


def test_defaults_are_sqlite_and_the_embedded_broker_in_var(tmp_path: Path) -> None:
    values = settings_in_subprocess(
        _fresh_env(tmp_path, DEBUG="1"),
        "DATABASES",
        "CELERY_BROKER_URL",
        "CELERY_RESULT_BACKEND",
        "CACHES",
        "ALLOWED_HOSTS",
    )
    database = values["DATABASES"]["default"]
    assert database["ENGINE"] == "django.db.backends.sqlite3"
    assert database["NAME"] == str(tmp_path / "bidel.sqlite3")
    assert values["CELERY_BROKER_URL"].startswith("filesystem://")
    assert values["CELERY_RESULT_BACKEND"] == f"file://{tmp_path / 'results'}"
    assert values["CACHES"]["default"]["BACKEND"].endswith("FileBasedCache")
    assert values["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1", "[::1]"]
    assert (tmp_path / "broker" / "queue").is_dir()


def test_database_url_and_redis_url_are_used(tmp_path: Path) -> None:
    values = settings_in_subprocess(
        _fresh_env(
            tmp_path,
            DEBUG="1",
            DATABASE_URL="postgres://arena:pw@db.internal:5433/bidel",
            REDIS_URL="redis://cache.internal:6380/2",
            CELERY_TASK_SOFT_TIME_LIMIT="100",
            CELERY_TASK_TIME_LIMIT="120",
        ),
        "DATABASES",
        "CELERY_BROKER_URL",
        "CELERY_RESULT_BACKEND",
        "CACHES",
        "CELERY_BROKER_TRANSPORT_OPTIONS",
        "CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS",
    )
    database = values["DATABASES"]["default"]
    assert (database["ENGINE"], database["HOST"], database["PORT"], database["NAME"]) == (
        "django.db.backends.postgresql",
        "db.internal",
        5433,
        "bidel",
    )
    assert values["CELERY_BROKER_URL"] == "redis://cache.internal:6380/2"
    assert values["CELERY_RESULT_BACKEND"] == "redis://cache.internal:6380/2"
    assert values["CACHES"]["default"]["LOCATION"] == "redis://cache.internal:6380/2"
    # Longer than twice the hard limit, and the same for broker and result backend.
    assert values["CELERY_BROKER_TRANSPORT_OPTIONS"]["visibility_timeout"] > 2 * 120
    assert (
        values["CELERY_BROKER_TRANSPORT_OPTIONS"]
        == values["CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS"]
    )
