"""The Bidel bot SDK: what a bot author installs to write, run and test a Hearts bot.

Built on ``engine``; it never imports Django, so bots and the match runner work anywhere.

>>> from bots_sdk import Bot, View
>>> issubclass(Bot, object) and View.__name__
'View'
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence

import engine  # noqa: F401  (first: it chooses the engine's build before the SDK's hot modules load)
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


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a :data:`MOVED` name and loads it as the module at its new place."""

    def __init__(self) -> None:
        self.specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(MOVED[spec.name])
        self.specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # Loaded already, at its new place; the import machinery gave it the old name's spec:
        # it keeps its own.
        module.__spec__ = self.specs[module.__name__]


if not any(isinstance(finder, _Moved) for finder in sys.meta_path):
    sys.meta_path.append(_Moved())
