"""``Bot``: the class a bot author subclasses.

A bot file defines exactly one subclass of :class:`Bot`. The referee calls ``pass_cards`` and
``play`` (and, in the variants that have them, ``declare_trump`` and ``choose_moon``) with the
bot's :class:`~bots_sdk.view.View`, and the hooks at the end of each hand and of the game.

>>> class Lowest(Bot):
...     def pass_cards(self, view):
...         return view.hand[:3]
...     def play(self, view):
...         return lowest(view.legal)
>>> from engine.rules import RuleSet
>>> from engine.state import GameState
>>> from bots_sdk.view import View
>>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=1)
>>> Lowest(seed=1).play(View.from_observation(state.observation(0)))
'2C'
"""

from __future__ import annotations

import random

from bots_sdk.sampling import Simulation
from bots_sdk.view import View
from engine.cards import RANKS


def strength(card: str) -> int:
    """A card's rank strength, 0 for a two .. 12 for an ace.

    >>> strength("AS"), strength("TD"), strength("2C")
    (12, 8, 0)
    """
    return RANKS.index(card[0])


def lowest(cards: list[str]) -> str:
    """The lowest card by rank (clubs, diamonds, hearts, spades breaking ties).

    >>> lowest(["AC", "3S", "3D"])
    '3D'
    """
    return min(cards, key=lambda c: (strength(c), "CDHS".index(c[1])))


def highest(cards: list[str]) -> str:
    """The highest card by rank (spades, hearts, diamonds, clubs breaking ties).

    >>> highest(["KC", "3S", "AD"])
    'AD'
    """
    return max(cards, key=lambda c: (strength(c), "CDHS".index(c[1])))


class Bot:
    """Subclass me. ``self.rng`` is a ``random.Random`` seeded by the referee: use it (never
    the global ``random``) and a re-run of the same match gives the same game.

    >>> Bot(seed=3).rng.random() == Bot(seed=3).rng.random()
    True
    """

    #: Shown in tables and logs; defaults to the class name.
    name: str = ""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def pass_cards(self, view: View) -> list[str]:
        """The cards to give away (``view.rules.pass_count`` of them, from ``view.hand``)."""
        raise NotImplementedError

    def play(self, view: View) -> str:
        """The card to play: one of ``view.legal``."""
        raise NotImplementedError

    def declare_trump(self, view: View) -> str:
        """Hokm, when this bot is the hakem: the trump suit, ``C D H S``. Default: the suit
        it holds most of."""
        return max("CDHS", key=lambda suit: (sum(c[1] == suit for c in view.hand), suit))

    def choose_moon(self, view: View) -> str:
        """After shooting the moon under ``moon="choice"``: ``add`` (the others get the
        points) or ``subtract`` (this bot loses them). Default: whichever leaves this bot
        furthest ahead of the best other total."""
        amount = view.rules.moon_amount
        mine = view.totals[view.seat]
        others = [t for s, t in enumerate(view.totals) if s != view.seat]
        add_margin = min(others) + amount - mine
        subtract_margin = min(others) - (mine - amount)
        return "add" if add_margin > subtract_margin else "subtract"

    def on_hand_end(self, view: View) -> None:
        """Called when a hand is over (``view.scores`` holds what it added)."""

    def on_game_end(self, view: View) -> None:
        """Called once at the end of the game."""

    def simulation(self, view: View) -> Simulation:
        """A handle to simulate from ``view``: sample the unseen cards consistently with
        what this bot knows, then play on with the engine (see :mod:`bots_sdk.sampling`)."""
        return Simulation(view, self.rng)
