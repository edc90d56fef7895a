"""pytest's settings for the whole tree (tests/conftest.py holds the suite's fixtures).

With the compiled engine (engine/_build.py), `engine.state` is an extension module beside
engine/state.py, and pytest would refuse to collect that file's doctests from a module whose
``__file__`` is another path. The docstrings are the source's, so their examples run against
the compiled build here; tests/engine/test_builds.py runs them on the pure build too.
"""

import os

import pytest

from tests.lanes import DOCKER_FILES, lane

os.environ.setdefault("PY_IGNORE_IMPORTMISMATCH", "1")


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: none where it is not installed
def pytest_xdist_make_scheduler(config, log):  # type: ignore[no-untyped-def]
    """`make test` runs two workers (pytest-xdist, ``-n 2``): the files of the tests on a real
    Docker engine in one, everything else in the other, each in collection order as a plain
    run would take them. The Docker tests mostly wait (image builds, containers coming up, a
    lease running out) while the rest mostly compute, so side by side they take about the
    time of the longer; and the rest stay in one worker because they share services one at a
    time (a test restarts Redis; throttles live in the cache). (xdist's own ``loadgroup``
    cannot do this under pytest 9: it renames test ids through an attribute pytest no longer
    reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class TwoLanes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return lane(nodeid)

    return TwoLanes(config, log)


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """A test marked ``docker`` outside ``tests.lanes.DOCKER_FILES`` would run in the main
    worker, beside the Docker tests instead of apart, and of two tests with one id the
    workers would run one: refuse to run so, saying which."""
    strays = [
        item.nodeid
        for item in items
        if item.get_closest_marker("docker") and lane(item.nodeid) != "docker"
    ]
    if strays:
        raise pytest.UsageError(
            f"tests marked docker outside {sorted(DOCKER_FILES)} (conftest.py): {strays}"
        )
    # xdist knows a test by its id: of two tests with one id, it would run one and say nothing
    seen: set[str] = set()
    twice = sorted({item.nodeid for item in items if item.nodeid in seen or seen.add(item.nodeid)})
    if twice:
        raise pytest.UsageError(f"tests sharing an id (give each its own): {twice}")
