"""How a bot process is launched: isolated by layers, or not at all in the author's debug
mode. Backends (``BIDEL_SANDBOX``): ``bubblewrap`` (the default, :mod:`.bubblewrap`),
``namespaces`` (the same layers made with ``unshare`` and :mod:`.init`, :mod:`.namespaces`) and
``docker`` for production hosts (:mod:`.containers`); :mod:`.unsandboxed` is the author's debug
mode. The one chosen is used or refused with the missing layer named, never silently replaced
by another. Every backend is a :class:`~bots_sdk.sandbox.base.Launcher`; docs/security.md says
what each layer stops.

The sandbox imports neither the builds nor the referee: a build hands a launcher a
:class:`BuiltBot` or a :class:`BuildJob`, and each launch says where its processes are.

>>> Unsandboxed().layers
[]
"""

from __future__ import annotations

import os

from bots_sdk.sandbox.base import (
    SDK_ROOT,
    BuildJob,
    BuiltBot,
    Launch,
    Launcher,
    Limits,
    SandboxUnavailable,
    per_bot_limits,
)
from bots_sdk.sandbox.bubblewrap import Bubblewrap
from bots_sdk.sandbox.containers import Docker
from bots_sdk.sandbox.layers import runtime_binds
from bots_sdk.sandbox.namespaces import Namespaces
from bots_sdk.sandbox.unsandboxed import Unsandboxed

__all__ = [
    "BACKENDS",
    "SDK_ROOT",
    "Bubblewrap",
    "BuildJob",
    "BuiltBot",
    "Docker",
    "Launch",
    "Launcher",
    "Limits",
    "Namespaces",
    "SandboxUnavailable",
    "Unsandboxed",
    "default_launcher",
    "per_bot_limits",
    "runtime_binds",
]

#: The backends by name (the ``BIDEL_SANDBOX`` setting, or the ``sandbox`` argument).
BACKENDS: dict[str, type[Bubblewrap] | type[Namespaces] | type[Docker]] = {
    "bubblewrap": Bubblewrap,
    "namespaces": Namespaces,
    "docker": Docker,
}


def default_launcher(
    unsafe: bool = False, limits: Limits | None = None, backend: str | None = None
) -> Launcher:
    """The launcher for untrusted bots: the chosen backend (``BIDEL_SANDBOX``, default
    bubblewrap), or refuse with the missing layer named, unless ``unsafe``."""
    if unsafe:
        return Unsandboxed()
    name = backend or os.environ.get("BIDEL_SANDBOX", "bubblewrap")
    try:
        cls = BACKENDS[name]
    except KeyError:
        raise SandboxUnavailable(
            f"unknown sandbox backend {name!r}; use {' or '.join(BACKENDS)}"
        ) from None
    cls.check()
    return cls(limits=limits or Limits())
