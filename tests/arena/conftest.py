from __future__ import annotations

from typing import Any

import pytest

from tests.arena.every_kind import every_kind  # noqa: F401 (a fixture: every kind of row)
from tests.arena.every_kind import standard_ladder as migrated_standard_ladder


@pytest.fixture(autouse=True)
def standard_ladder(request: pytest.FixtureRequest) -> None:
    """Transactional tests flush the tables, the migration's `standard` ladder included: put
    it back as `migrate` made it."""
    marker = request.node.get_closest_marker("django_db")
    if marker is None:
        return
    request.getfixturevalue("transactional_db" if marker.kwargs.get("transaction") else "db")
    migrated_standard_ladder()


@pytest.fixture(autouse=True)
def site_address(settings: Any) -> None:
    """The test client's site: where reset links point (``SITE_URL``; the tests run with DEBUG
    off, where a site without it refuses resets)."""
    if not settings.SITE_URL:
        settings.SITE_URL = "http://testserver"
