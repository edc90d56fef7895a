"""The Bidel bot SDK: what a bot author installs to write, run and test a Hearts bot.

Built on ``engine``; it never imports Django, so bots and the match runner work anywhere.

>>> from bots_sdk import Bot, View
>>> issubclass(Bot, object) and View.__name__
'View'
"""

import engine  # noqa: F401  (first: it chooses the engine's build before the SDK's hot modules load)
from bots_sdk.bot import Bot, highest, lowest, strength
from bots_sdk.view import View

__version__ = "0.1.0"
__all__ = ["Bot", "View", "highest", "lowest", "strength"]
