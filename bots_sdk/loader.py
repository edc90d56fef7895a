"""Loading a bot: a built-in name, a ``.py`` file, or a ``.zip`` with ``bot.py`` at its root,
which must define exactly one subclass of :class:`bots_sdk.Bot`.

>>> load_bot("low", seed=1).name
'low'
>>> load_bot("no-such-bot.py")
Traceback (most recent call last):
...
bots_sdk.loader.BotLoadError: no-such-bot.py: no such file
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from types import ModuleType

from bots_sdk.bot import Bot
from bots_sdk.builtin import BUILTIN, make_builtin


class BotLoadError(ValueError):
    """The bot cannot be loaded: the message says why."""


def bot_class_of(module: ModuleType, where: str) -> type[Bot]:
    """The one Bot subclass defined in ``module``."""
    found = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Bot)
        and value.__module__ == module.__name__
    ]
    if len(found) != 1:
        names = ", ".join(c.__name__ for c in found) or "none"
        raise BotLoadError(
            f"{where}: must define exactly one subclass of bots_sdk.Bot (found {names})"
        )
    if found[0].play is Bot.play:
        raise BotLoadError(f"{where}: {found[0].__name__} does not define play(self, view)")
    return found[0]


def _import_file(path: str, search: str) -> ModuleType:
    # (importlib.machinery, not importlib.util: the latter costs every bot's start-up 2 ms)
    if not path.endswith(".py"):
        raise BotLoadError(f"{path}: not a Python file")
    loader = importlib.machinery.SourceFileLoader("bidel_bot", path)
    module = ModuleType("bidel_bot")
    module.__file__ = path
    module.__loader__ = loader
    module.__spec__ = importlib.machinery.ModuleSpec("bidel_bot", loader, origin=path)
    module.__spec__.has_location = True
    sys.modules["bidel_bot"] = module
    sys.path.insert(0, search)  # a zip's other modules import beside bot.py
    loader.exec_module(module)
    return module


def load_bot_class(
    source: str | os.PathLike[str], extract_to: str | os.PathLike[str] | None = None
) -> type[Bot]:
    """The Bot subclass of a bot file or zip (zips are extracted to ``extract_to``).
    (os.path, not pathlib: every bot's start-up runs this, and pathlib adds to it.)"""
    path = os.fspath(source)
    if not os.path.exists(path):
        raise BotLoadError(f"{source}: no such file")
    if path.endswith(".zip"):
        if extract_to is None:
            raise BotLoadError(f"{source}: a zip bot needs a directory to unpack into")
        import zipfile  # (here: a bot's start-up pays for it only when it is a zip)

        with zipfile.ZipFile(path) as archive:
            archive.extractall(extract_to)
        path = os.path.join(os.fspath(extract_to), "bot.py")
        if not os.path.exists(path):
            raise BotLoadError(f"{source}: no bot.py at the root of the zip")
    module = _import_file(path, os.path.dirname(path))
    return bot_class_of(module, str(source))


def load_bot(source: str, seed: int = 0, extract_to: str | os.PathLike[str] | None = None) -> Bot:
    """A bot instance: a built-in by name, or the class in a file."""
    if source in BUILTIN:
        return make_builtin(source, seed)
    cls = load_bot_class(source, extract_to)
    bot = cls(seed=seed)
    if not bot.name:
        bot.name = os.path.splitext(os.path.basename(source))[0]
    return bot
