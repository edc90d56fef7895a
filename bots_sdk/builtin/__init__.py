"""The built-in bots, usable by name wherever a bot is expected.

>>> sorted(BUILTIN)
['heuristic', 'low', 'montecarlo', 'random', 'strong', 'strong-1', 'strong-2', 'strong-3']
>>> make_builtin("low", seed=1).name
'low'
"""

from __future__ import annotations

from bots_sdk.bot import Bot
from bots_sdk.builtin.heuristic import HeuristicBot
from bots_sdk.builtin.montecarlo import MonteCarloBot
from bots_sdk.builtin.simple import LowBot, RandomBot
from bots_sdk.builtin.strong import StrongBot, StrongLevel1, StrongLevel2, StrongLevel3

BUILTIN: dict[str, type[Bot]] = {
    "random": RandomBot,
    "low": LowBot,
    "heuristic": HeuristicBot,
    "montecarlo": MonteCarloBot,
    # the strength levels, weakest first, and the top reference
    "strong-1": StrongLevel1,
    "strong-2": StrongLevel2,
    "strong-3": StrongLevel3,
    "strong": StrongBot,
}


def make_builtin(name: str, seed: int = 0) -> Bot:
    """A fresh built-in bot by name; ``KeyError`` names the choices."""
    try:
        cls = BUILTIN[name]
    except KeyError:
        raise KeyError(
            f"no built-in bot {name!r}; built-ins: {', '.join(sorted(BUILTIN))}"
        ) from None
    bot = cls(seed=seed)
    bot.name = name
    return bot
