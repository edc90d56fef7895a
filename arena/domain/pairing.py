"""Which entries of a ladder sit together next: pure (no models), the randomness passed in.

Each table starts from the least-played entry (ties at random), then takes the closest
ratings among the rest, with a nudge toward the less played; its seats are shuffled. Each
table counts as played by its entries before the next is chosen.

>>> field = [Candidate(1, 0, 1500.0), Candidate(2, 3, 1510.0), Candidate(3, 0, 1900.0),
...          Candidate(4, 1, 1495.0), Candidate(5, 9, 1500.0)]
>>> tables = pair(field, table_size=4, count=2, rng=random.Random(7))
>>> [sorted(table) for table in tables]  # 3 plays next, its rating far from the rest
[[1, 2, 4, 5], [1, 2, 3, 4]]
>>> tables == pair(field, table_size=4, count=2, rng=random.Random(7))
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    """An entry that may sit: its key, the matches what sits for it has played, its rating."""

    key: int
    played: int
    rating: float


def pair(
    candidates: Sequence[Candidate], *, table_size: int, count: int, rng: random.Random
) -> list[list[int]]:
    """Up to ``count`` tables of ``table_size`` keys (none when too few candidates)."""
    if count <= 0 or len(candidates) < table_size:
        return []
    played = {c.key: c.played for c in candidates}
    rating = {c.key: c.rating for c in candidates}
    keys = [c.key for c in candidates]
    tables = []
    for _ in range(count):
        first = min(keys, key=lambda k: (played[k], rng.random()))
        most = 1 + max(played.values())
        others = sorted(
            (k for k in keys if k != first),
            key=lambda k: (abs(rating[k] - rating[first]) + 50 * played[k] / most, rng.random()),
        )
        table = [first, *others[: table_size - 1]]
        rng.shuffle(table)
        tables.append(table)
        for key in table:
            played[key] += 1
    return tables
