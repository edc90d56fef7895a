"""``random`` and ``low``: the reference points of every ladder.

>>> from engine.rules import RuleSet
>>> from engine.state import GameState
>>> from bots_sdk.view import View
>>> view = View.from_observation(GameState(RuleSet.from_preset("standard"), seed=1).observation(0))
>>> len(RandomBot(seed=1).pass_cards(view)), LowBot().pass_cards(view)
(3, ['AS', 'AD', 'AC'])
"""

from __future__ import annotations

from bots_sdk.bot import Bot, highest, lowest, strength
from bots_sdk.view import View


class RandomBot(Bot):
    """Every decision uniformly at random among the legal ones."""

    def pass_cards(self, view: View) -> list[str]:
        return self.rng.sample(view.hand, view.rules.pass_count)

    def play(self, view: View) -> str:
        return self.rng.choice(view.legal)

    def declare_trump(self, view: View) -> str:
        return self.rng.choice(view.legal)

    def choose_moon(self, view: View) -> str:
        return self.rng.choice(view.legal)


class LowBot(Bot):
    """Plays its lowest legal card; passes its highest cards."""

    def pass_cards(self, view: View) -> list[str]:
        ranked = sorted(view.hand, key=lambda c: (strength(c), "CDHS".index(c[1])), reverse=True)
        return ranked[: view.rules.pass_count]

    def play(self, view: View) -> str:
        return lowest(view.legal)


__all__ = ["RandomBot", "LowBot", "highest"]
