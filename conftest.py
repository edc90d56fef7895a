"""pytest's settings for the whole tree (tests/conftest.py holds the suite's fixtures).

With the compiled engine (engine/_build.py), `engine.state` is an extension module beside
engine/state.py, and pytest would refuse to collect that file's doctests from a module whose
``__file__`` is another path. The docstrings are the source's, so their examples run against
the compiled build here; tests/engine/test_builds.py runs them on the pure build too.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

from tests.deadline import DEADLINE, DEFAULT_DEADLINE
from tests.lanes import priority, refusals, unit

os.environ.setdefault("PY_IGNORE_IMPORTMISMATCH", "1")

# Hypothesis judges no example by its speed here: its deadline per example (200 ms) and its
# "too slow" health check would fail on a busy machine what passes on an idle one. (A test's
# own @settings keeps these unless it names them.)
settings.register_profile("bidel", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("bidel")


@pytest.hookimpl(tryfirst=True)  # before pytest-timeout reads its settings
def pytest_configure(config: pytest.Config) -> None:
    """Workers of pytest-xdist share no service unless ``-p tests.lanes`` gave each its own
    (``make test`` does; a plain ``pytest`` cannot load it from the command line's options,
    since ``tests`` is importable only once the conftests load): refused without it, saying
    so, rather than failing by chance.

    pytest-timeout's ceiling on a test (pyproject's ``timeout``, for a test that hangs) grows
    with ``BIDEL_TEST_DEADLINE`` as every wait does: a slower machine given a longer deadline
    is not cut short by the ceiling instead. A ``--timeout`` or ``PYTEST_TIMEOUT`` stands."""
    several = config.getoption("numprocesses", None) and not hasattr(config, "workerinput")
    if several and not config.pluginmanager.has_plugin("tests.lanes"):
        raise pytest.UsageError(
            "several workers (-n) share the database, Redis and var/ unless each has its own: "
            "add -p tests.lanes (python -m pytest -p tests.lanes -n 4), as make test does"
        )
    ceiling = config.getini("timeout")
    if config.getoption("timeout", None) is None and "PYTEST_TIMEOUT" not in os.environ:
        if ceiling and DEADLINE > DEFAULT_DEADLINE:
            os.environ["PYTEST_TIMEOUT"] = f"{float(ceiling) * DEADLINE / DEFAULT_DEADLINE:g}"


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: none where it is not installed
def pytest_xdist_make_scheduler(config, log):  # type: ignore[no-untyped-def]
    """`make test` runs pytest-xdist's workers (``-n``) over the units of :mod:`tests.lanes`:
    every file handed whole to the next free worker, the Docker engine's two files first, then
    the long ones. Each worker has services of its own
    (``tests.lanes.worker_services``). (xdist's own ``loadgroup`` cannot do this under pytest
    9: it renames test ids through an attribute pytest no longer reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class Lanes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit(nodeid)

        def _assign_work_unit(self, node):  # type: ignore[no-untyped-def]
            # xdist hands out the front of its queue (collection order): put the next unit
            # by tests.lanes.priority there first.
            position = {name: at for at, name in enumerate(self.workqueue)}
            first = min(self.workqueue, key=lambda name: priority(name, position[name]))
            self.workqueue.move_to_end(first, last=False)
            super()._assign_work_unit(node)

    return Lanes(config, log)


REFUSED = pytest.StashKey[str]()


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Mark the tests the workers would run wrong (``tests.lanes.refusals``): each fails,
    saying why, when its turn comes (a worker that refused its whole collection would only
    crash xdist's controller)."""
    problems = refusals((item.nodeid, bool(item.get_closest_marker("docker"))) for item in items)
    for item in items:
        if item.nodeid in problems:
            item.stash[REFUSED] = problems[item.nodeid]


def pytest_runtest_setup(item):  # type: ignore[no-untyped-def]
    if REFUSED in item.stash:
        pytest.fail(item.stash[REFUSED], pytrace=False)
