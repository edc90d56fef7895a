"""The Hearts engine of Bidel: rules, deterministic seeded deals, game state and records.

Pure Python, standard library only; it never imports Django. It is the referee of every
match on the platform and the simulator bots use inside their own code.

Where a C compiler was at hand when it was installed, its hot modules also exist compiled
(by mypyc, from the same source): :data:`BUILD` says which build this process runs, and the
environment variable ``BIDEL_ENGINE`` (``pure``, ``compiled`` or ``auto``) chooses
(:mod:`engine._build`).

>>> BUILD.kind in ("compiled", "pure")
True
"""

from engine._build import Build, EngineBuildError, compiled_files, select

__version__ = "0.1.0"

#: The build in use (chosen before any hot module loads): ``BUILD.kind`` is ``"compiled"``
#: or ``"pure"``; ``str(BUILD)`` adds by what, or why pure.
BUILD: Build = select()

__all__ = ["BUILD", "Build", "EngineBuildError", "__version__", "compiled_files"]
