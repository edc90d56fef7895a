"""Modules that moved keep their old names: importing an old name gives the module at its new
place, the same object (so ``old is new``, and patching one patches the other). Used by the SDK
for its flat layout's names and by the arena for its services'.

>>> install({"bots_sdk.the_old_bot_name": "bots_sdk.bot"})
>>> import bots_sdk.the_old_bot_name as old, bots_sdk.bot as new
>>> old is new and old.__name__ == old.__spec__.name == "bots_sdk.bot"
True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Mapping, Sequence


class Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name and loads it as the module at its new place."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.names[spec.name])
        self.specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # Loaded already, at its new place; the import machinery gave it the old name's spec:
        # it keeps its own.
        module.__spec__ = self.specs[module.__name__]


def install(names: Mapping[str, str]) -> None:
    """Let each old name in ``names`` import as the module at its new name."""
    finder = next((f for f in sys.meta_path if isinstance(f, Moved)), None)
    if finder is None:
        finder = Moved()
        sys.meta_path.append(finder)
    finder.names.update(names)
