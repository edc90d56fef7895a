from __future__ import annotations

import pytest

from arena.models import Ladder, LadderEntry
from tests.arena.every_kind import every_kind  # noqa: F401 (a fixture: every kind of row)


@pytest.fixture(autouse=True)
def standard_ladder(request: pytest.FixtureRequest) -> None:
    """Transactional tests flush the tables, the migration's `standard` ladder included: put
    it back as `migrate` made it."""
    marker = request.node.get_closest_marker("django_db")
    if marker is None:
        return
    request.getfixturevalue("transactional_db" if marker.kwargs.get("transaction") else "db")
    ladder, _ = Ladder.objects.get_or_create(
        name="standard", defaults={"rules": "standard", "table_size": 4}
    )
    for name in ("random", "low", "heuristic", "montecarlo"):
        LadderEntry.objects.get_or_create(ladder=ladder, builtin=name)
