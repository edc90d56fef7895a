"""Which build of the engine runs: compiled (C extensions made by mypyc) or pure Python.

One source, two builds. Compiled at install (``BIDEL_ENGINE_BUILD``: ``make`` and the Docker
image ask for it) or afterwards by ``bidel compile``, the hot modules (the engine's own,
:data:`HOT`, and those the installer adds from the packages built on it: the SDK's sampling and
rollout helpers) are also made by mypyc into extension modules beside their sources, and
``engine/_compiled.json`` records the SHA-256 of every source it compiled
(``bots_sdk/compile_engine.py`` writes it): the manifest, not this module, is the list of what
is compiled. Otherwise (``pip install ./sdk``'s default, or no compiler) the same sources run
as they are, and the manifest, where there is one, says why. When ``engine`` is
first imported, :func:`select` picks:

- ``BIDEL_ENGINE=pure``: the sources, whatever is built (a finder placed first on
  ``sys.meta_path`` loads the hot modules from their ``.py`` files);
- ``BIDEL_ENGINE=compiled``: the compiled build, or :class:`EngineBuildError` where there is
  none or it no longer matches its sources: asked for by name, it is never silently replaced;
- unset (or ``auto``): the compiled build when it is there and matches every source, else pure
  Python, with a :class:`RuntimeWarning` when a build is there but stale or broken (a source was
  edited since it was compiled: ``make`` or ``bidel compile`` compiles it again).

Both builds play the same game move for move (``tests/engine/test_builds.py``). This module is
never compiled itself: it decides what is.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

#: The engine's modules compiled by mypyc, in dependency order (``sdk/setup.py`` compiles
#: these and its own packages' hot modules after them; the manifest lists them all).
HOT: tuple[str, ...] = (
    "engine.cards",
    "engine.rules",
    "engine.deal",
    "engine.state",
    "engine.rollout",
    "engine.record",
    "engine.simulate",
)
#: The compiled modules' shared library (mypyc's group; the per-module extensions load it).
SHARED_LIBRARY = "engine._native__mypyc"
MANIFEST = "_compiled.json"
#: The environment variable that chooses the build: ``pure``, ``compiled`` or ``auto``.
ENV = "BIDEL_ENGINE"
CHOICES = ("auto", "compiled", "pure")

# The folder holding engine/ and bots_sdk/. (Only os.path and importlib.machinery here: every
# bot process imports this first, and pathlib or importlib.util would add to its start-up.)
_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


class EngineBuildError(RuntimeError):
    """The build asked for (``BIDEL_ENGINE``) cannot run here; the message says why.

    >>> select("fast")
    Traceback (most recent call last):
    ...
    engine._build.EngineBuildError: BIDEL_ENGINE='fast': use one of auto, compiled, pure
    """


@dataclass(frozen=True)
class Build:
    """The build in use: ``kind`` is ``"compiled"`` or ``"pure"``; ``detail`` says by what
    (the compiler) or why pure.

    >>> str(Build("compiled", "mypyc 2.4.1"))
    'compiled (mypyc 2.4.1)'
    """

    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind} ({self.detail})"


def source_path(module: str) -> str:
    """The ``.py`` file of a hot module.

    >>> source_path("engine.state").split(os.sep)[-2:]
    ['engine', 'state.py']
    """
    return os.path.join(_ROOT, *module.split(".")) + ".py"


def source_digest(module: str) -> str:
    """SHA-256 of a hot module's source, as the manifest records it.

    >>> len(source_digest("engine.cards"))
    64
    """
    import hashlib  # (here: a bot's start-up, which finds the stats unchanged, never loads it)

    with open(source_path(module), "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()


def source_stat(module: str) -> list[int]:
    """A hot module's source's size and modification time (ns): when both are as the
    manifest recorded them, the source is taken as unchanged without reading it.

    >>> len(source_stat("engine.cards"))
    2
    """
    stat = os.stat(source_path(module))
    return [stat.st_size, stat.st_mtime_ns]


def manifest(compiler: str, modules: Sequence[str] = HOT) -> dict[str, object]:
    """What ``sdk/setup.py`` writes beside a compiled build: the compiler, the extension
    suffix it built for, each source's digest and (to check it cheaply) its size and time.

    >>> written = manifest("mypyc 2.4.1")
    >>> written["compiler"], sorted(written["sources"]) == sorted(HOT)
    ('mypyc 2.4.1', True)
    """
    return {
        "compiler": compiler,
        "suffix": importlib.machinery.EXTENSION_SUFFIXES[0],
        "sources": {module: source_digest(module) for module in modules},
        "stats": {module: source_stat(module) for module in modules},
    }


def _recorded() -> dict[str, Any] | None:
    """The manifest as written, or None where there is none (``OSError``, ``ValueError``
    where it cannot be read)."""
    path = os.path.join(_ROOT, "engine", MANIFEST)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as written:
        recorded = json.load(written)
    if not isinstance(recorded, dict):
        raise ValueError("not an object")
    return recorded


def compiled_modules() -> tuple[str, ...]:
    """Every module the installer compiled, as its manifest lists them (the engine's
    :data:`HOT` where there is no readable list).

    >>> set(HOT) <= set(compiled_modules())
    True
    """
    try:
        recorded = _recorded()
        sources = recorded.get("sources") if recorded else None
    except (OSError, ValueError):
        sources = None
    if not isinstance(sources, dict):
        return HOT
    return (*HOT, *(str(module) for module in sources if module not in HOT))


def _compiled_problem() -> tuple[str | None, str]:
    """(why the compiled build cannot run, or None; the compiler named by its manifest)."""
    try:
        recorded = _recorded()
        if recorded is None:
            return "no compiled build: `bidel compile` makes it", ""
        if "failed" in recorded:  # the install could not compile it, and said why
            return f"not compiled: {recorded['failed']}", "failed" if recorded["warn"] else ""
        compiler = str(recorded["compiler"])
        sources = dict(recorded["sources"])
        suffix = str(recorded["suffix"])
        stats = dict(recorded.get("stats", {}))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"engine/{MANIFEST} is unreadable ({exc})", ""
    if suffix not in importlib.machinery.EXTENSION_SUFFIXES:
        return f"the compiled build is for another Python ({suffix})", compiler
    missing = [module for module in HOT if module not in sources]
    if missing:
        return f"engine/{MANIFEST} does not list {missing[0]}", compiler
    for module in sources:
        if not os.path.exists(source_path(module)):
            return f"engine/{MANIFEST} lists {module}, which is not here", compiler
        touched = stats.get(module) != source_stat(module)
        if touched and sources.get(module) != source_digest(module):
            where = "/".join(module.split(".")) + ".py"
            return (
                f"{where} changed since it was compiled (`bidel compile` compiles it again)",
                compiler,
            )
        extension = os.path.join(_ROOT, *module.split(".")) + suffix
        if not os.path.exists(extension):
            return f"{os.path.basename(extension)} is missing from the compiled build", compiler
    try:
        importlib.import_module(SHARED_LIBRARY)
    except ImportError as exc:
        return f"the compiled build does not load ({exc})", compiler
    return None, compiler


def compiled_files() -> list[str]:
    """The files of the compiled build (its extensions and manifest) where it is here and
    matches its sources, else none: what a copy of the engine takes along to run compiled
    (the Docker backend's bots' image).

    >>> all(name.endswith((".so", ".pyd", MANIFEST)) for name in compiled_files())
    True
    """
    if _compiled_problem()[0] is not None:
        return []
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    files = [os.path.join(_ROOT, "engine", MANIFEST)]
    for module in (*compiled_modules(), SHARED_LIBRARY):
        files.append(os.path.join(_ROOT, *module.split(".")) + suffix)
    return files


class _SourcesFirst:
    """Loads the compiled modules from their ``.py`` files even where extensions sit beside
    them (an extension would otherwise win: the import system tries extension suffixes first).
    A meta path finder by its ``find_spec`` alone (``importlib.abc`` costs a bot's start-up)."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = frozenset(modules)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules:
            return None
        path = source_path(fullname)
        loader = importlib.machinery.SourceFileLoader(fullname, path)
        spec = importlib.machinery.ModuleSpec(fullname, loader, origin=path)
        spec.has_location = True  # (so the module gets __file__ and its cached bytecode)
        return spec


def select(choice: str | None = None) -> Build:
    """Choose the build for this process (see the module's docstring); call it before any
    hot module is imported (``engine/__init__.py`` does): modules already imported stay as
    they are, so asking again only repeats the answer.

    >>> import engine
    >>> select() == engine.BUILD
    True
    """
    choice = (choice if choice is not None else os.environ.get(ENV, "")).strip().lower() or "auto"
    if choice not in CHOICES:
        raise EngineBuildError(f"{ENV}={choice!r}: use one of {', '.join(CHOICES)}")
    if choice == "pure":
        _use_sources()
        return Build("pure", f"{ENV}=pure")
    problem, compiler = _compiled_problem()
    if problem is None:
        return Build("compiled", compiler)
    if choice == "compiled":
        raise EngineBuildError(f"{ENV}=compiled, but {problem}")
    if compiler:  # a build is there but cannot be used: say so, loudly
        warnings.warn(f"the engine runs as pure Python: {problem}", RuntimeWarning, stacklevel=3)
    _use_sources()
    return Build("pure", problem)


def _use_sources() -> None:
    if not any(isinstance(finder, _SourcesFirst) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SourcesFirst(compiled_modules()))
