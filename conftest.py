"""pytest's settings for the whole tree (tests/conftest.py holds the suite's fixtures).

With the compiled engine (engine/_build.py), `engine.state` is an extension module beside
engine/state.py, and pytest would refuse to collect that file's doctests from a module whose
``__file__`` is another path. The docstrings are the source's, so their examples run against
the compiled build here; tests/engine/test_builds.py runs them on the pure build too.
"""

import os

os.environ.setdefault("PY_IGNORE_IMPORTMISMATCH", "1")
