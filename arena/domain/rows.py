"""The rows the reads hand out (:func:`arena.selectors.ladder_rankings`,
:func:`arena.selectors.tournament_standings`): frozen and typed for the pages and the code,
and the API's JSON object by :meth:`Row.to_dict`.

>>> row = Standing(rank=1, entry=7, bot=NamedBot(3, "ada"), version=2, points=12.0,
...                mean_points_per_hand=1.5, ci95=(0.5, 2.5), hands=8, matches=2, wins=1,
...                faults=0)
>>> row.bot.name, row.to_dict()["ci95"], row["bot"]
('ada', [0.5, 2.5], {'id': 3, 'name': 'ada'})
>>> row.rank = 2
Traceback (most recent call last):
...
dataclasses.FrozenInstanceError: cannot assign to field 'rank'
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class NamedBot:
    """A bot as a row names it: ``id`` is None for a built-in."""

    id: int | None
    name: str

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "name": self.name}


class Row:
    """A row reads by attribute and, as its JSON object, by key (``row["rating"]``)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The API's JSON object: a named bot as an object, an interval as a list."""
        names = (field.name for field in fields(self))  # type: ignore[arg-type]  # (dataclasses)
        return {name: self[name] for name in names}

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:  # type: ignore[attr-defined]
            raise KeyError(key)
        value = getattr(self, key)
        if isinstance(value, NamedBot):
            return value.to_dict()
        if isinstance(value, tuple):
            return list(value)
        return value


@dataclass(frozen=True, slots=True)
class Ranking(Row):
    """A ladder entry's row. ``rank``, ``rating`` and ``ci95`` are None until its first
    refit; ``rated_version`` is the version whose fit the rating is (the active one once
    fitted, an earlier one until then: the row is then ``provisional``)."""

    rank: int | None
    bot: NamedBot
    builtin: bool
    version: int | None
    rated_version: int | None
    rating: float | None
    ci95: tuple[float, float] | None
    live_elo: float
    matches: int
    provisional: bool


@dataclass(frozen=True, slots=True)
class Standing(Row):
    """A tournament entry's row: points, mean points per hand with its 95% interval (paired
    by deal in the duplicate format), hands, matches, wins and faults. ``rank`` is 0 until
    the format has ordered the rows."""

    rank: int
    entry: int
    bot: NamedBot
    version: int | None
    points: float
    mean_points_per_hand: float
    ci95: tuple[float, float]
    hands: int
    matches: int
    wins: int
    faults: int
    #: The luck of its deals: the points per hand its cards were worth under the reference
    #: policy (:func:`bots_sdk.analysis.deal_luck`), over the hands valued; None for none.
    #: Below it, ``mean_points_per_hand`` is skill.
    expected_per_hand: float | None = None
