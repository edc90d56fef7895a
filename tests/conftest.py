from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from kombu.utils.url import maybe_sanitize_url


def pytest_report_header(config: pytest.Config) -> list[str]:
    database = settings.DATABASES["default"]
    where = database.get("HOST") or database["NAME"]
    return [
        f"bidel: database {database['ENGINE'].rsplit('.', 1)[-1]} ({where}); "
        f"broker {maybe_sanitize_url(settings.CELERY_BROKER_URL)}"
    ]


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None, django_db_blocker: Any
) -> None:
    """Before this run makes its test databases (``test_<name>_gw<n>``): end every session
    still connected to them. Such a session is a leftover of an earlier run on this machine
    (a worker that hung, killed by its run's deadline, its connection still open), and it
    would keep pytest-django from dropping the old database: every test of this worker
    would fail at its set-up."""
    from django.db import connections

    for alias in connections:
        connection = connections[alias]
        if connection.vendor != "postgresql":
            continue
        name = connection.creation._get_test_db_name()
        with django_db_blocker.unblock(), connection._nodb_cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                [name],
            )


@pytest.fixture(autouse=True)
def fresh_throttles() -> None:
    """Request throttles count per user id or per address (every test client is 127.0.0.1),
    and ids restart in every test database: forget the counts of earlier tests, the failed
    log-ins of arena.logins included (only the throttle keys on Redis — the cache may share it
    with the broker; the file cache's keys are hashed names, so it is emptied: it holds only
    throttles and debounce marks). Each worker of `make test` has a cache of its own
    (tests/lanes.py): this one empties no other's."""
    from django.core.cache import cache

    backend = type(cache).__name__
    if backend == "RedisCache":
        client = cache._cache.get_client(None, write=True)  # type: ignore[attr-defined]
        for key in client.scan_iter(match="*throttle_*"):
            client.delete(key)
    else:
        cache.clear()


@pytest.fixture(autouse=True)
def english_by_default() -> Iterator[None]:
    """Each test starts in the site's language: a request in Persian leaves its language
    active in the thread (Django's LocaleMiddleware never deactivates it), and a later test
    reading a service's message would get it translated."""
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)
