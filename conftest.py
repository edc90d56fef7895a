"""pytest's settings for the whole tree (tests/conftest.py holds the suite's fixtures).

With the compiled engine (engine/_build.py), `engine.state` is an extension module beside
engine/state.py, and pytest would refuse to collect that file's doctests from a module whose
``__file__`` is another path. The docstrings are the source's, so their examples run against
the compiled build here; tests/engine/test_builds.py runs them on the pure build too.
"""

import os

os.environ.setdefault("PY_IGNORE_IMPORTMISMATCH", "1")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """`make test` runs two workers (pytest-xdist, ``-n 2 --dist loadgroup``): the tests on a
    real Docker engine in one, everything else in the other, each in collection order as a
    plain run would take them. The Docker tests mostly wait (image builds, containers coming
    up, a lease running out) while the rest mostly compute, so side by side they take about
    the time of the longer; and the rest stay in one worker because they share services one
    at a time (a test restarts Redis; throttles live in the cache)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    import pytest

    for item in items:
        group = "docker" if item.get_closest_marker("docker") else "main"
        item.add_marker(pytest.mark.xdist_group(group))
