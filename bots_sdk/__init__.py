"""The Bidel bot SDK: what a bot author installs to write, run and test a Hearts bot.

Built on ``engine``; it never imports Django, so bots and the match runner work anywhere.

>>> from bots_sdk import Bot, View
>>> issubclass(Bot, object) and View.__name__
'View'
"""

import engine  # noqa: F401  (first: it chooses the engine's build before the SDK's hot modules load)
from bots_sdk import moved
from bots_sdk.bot import Bot, highest, lowest, strength
from bots_sdk.view import View

__version__ = "0.1.0"
__all__ = ["Bot", "View", "highest", "lowest", "strength"]

#: Modules that moved into the referee's, the builds' and the sandbox's folders, by their old
#: names: importing an old name gives the module at its new place (the same object), so scripts
#: written against the flat layout keep working. New code imports the new names.
MOVED = {
    "bots_sdk.runner": "bots_sdk.referee.runner",
    "bots_sdk.players": "bots_sdk.referee.players",
    "bots_sdk.participants": "bots_sdk.referee.participants",
    "bots_sdk.jobs": "bots_sdk.referee.jobs",
    "bots_sdk.stats": "bots_sdk.referee.stats",
    "bots_sdk.frames": "bots_sdk.referee.frames",
    "bots_sdk.build": "bots_sdk.builds.build",
    "bots_sdk.languages": "bots_sdk.builds.languages",
    "bots_sdk.packer": "bots_sdk.builds.packer",
    "bots_sdk.containers": "bots_sdk.sandbox.containers",
    "bots_sdk.cgroups": "bots_sdk.sandbox.cgroups",
    "bots_sdk.seccomp": "bots_sdk.sandbox.seccomp",
    "bots_sdk.sandbox_init": "bots_sdk.sandbox.init",
}

moved.install(MOVED)
