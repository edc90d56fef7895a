"""What a bot may import: the standard library, the SDK, and the bot runtime's packages.

The runtime's packages (:data:`PACKAGES`, pinned by the ``numpy`` extra of ``bidel-sdk`` and by
the platform) are the very files installed beside the referee: every backend shows them to
the bot read-only at ``/sdk/<package>`` (bubblewrap and namespaces bind them, the Docker
backend copies them into the bots' image), so a bot runs against the same numpy locally, on a
runner and in a container. A package the referee lacks is simply absent; ``play`` says which
are offered.

Numerical libraries start a thread per CPU by default; a bot's process budget is small and its
clock is one CPU's, so :data:`THREADS` pins them to one thread (set by the host before the bot
is imported).

>>> PACKAGES
('numpy',)
>>> describe().startswith(("numpy ", "none"))
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

#: The packages a bot may import besides the standard library and the SDK (docs/bots.md).
PACKAGES: tuple[str, ...] = ("numpy",)

#: Settings the bot's process starts with: one thread for BLAS and OpenMP.
THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Package:
    """One installed runtime package: its name, version and the folders it is made of (the
    package, and the ``<name>.libs`` folder of shared libraries its wheel bundles)."""

    name: str
    version: str
    folders: tuple[Path, ...]


@cache
def packages() -> tuple[Package, ...]:
    """The runtime packages installed here (the others are not offered)."""
    # (here: every bot's host imports this module for THREADS, and needs none of them)
    import importlib.util
    from importlib import metadata
    from pathlib import Path

    found = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        folder = Path(next(iter(spec.submodule_search_locations))).resolve()
        folders = [folder]
        libs = folder.parent / f"{name}.libs"
        if libs.is_dir():
            folders.append(libs.resolve())
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "unknown"
        found.append(Package(name, version, tuple(folders)))
    return tuple(found)


def describe() -> str:
    """The offered packages in one line, for ``play`` and the health page."""
    offered = ", ".join(f"{p.name} {p.version}" for p in packages())
    return offered or "none (pip install 'bidel-sdk[numpy]' to offer numpy)"


def binds() -> list[tuple[Path, str]]:
    """(folder here, its path in the bot's root) for every offered package's folders."""
    return [(folder, f"/sdk/{folder.name}") for p in packages() for folder in p.folders]
