"""How `make test` spreads the suite over pytest-xdist's workers (``-n``; the scheduler is in
conftest.py), and what keeps the workers apart.

- **Units.** Every file is a unit, handed whole to the next free worker and run by it in
  order. The tests on a real Docker engine (the ``docker`` mark) are kept to
  :data:`DOCKER_FILES`, whose two files share the engine and nothing on it: the compose tests'
  runners sandbox with bubblewrap inside their containers, the Docker backend's suite makes
  ``bidel.bot`` containers of its own from an image of its own; so the two run beside each
  other, each the longest unit of the run (they mostly wait on builds and containers).
- **Order.** The Docker files first, then the files known to be long (:data:`LONG_FIRST`), then
  the rest as collected: the long ones do not end up alone at the end of the run.
- **Apart.** Each worker has its own services (:func:`worker_services`, applied before the
  settings load by this module's hook, loaded with ``-p tests.lanes`` as ``make test`` does:
  a conftest comes too late, and conftest.py refuses ``-n`` without it): pytest-django
  gives it its own test database; here it gets its own Redis database (its own queues,
  results, cache and throttles: the broker's broadcasts are per database too) and its own
  ``BIDEL_VAR_DIR`` (the embedded broker, the file cache, the SQLite file
  where there is no Redis or PostgreSQL). So a test may purge its queues, start workers or
  empty its cache without reaching a test that runs beside it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

DOCKER_FILES = frozenset({"tests/test_compose_engine.py", "tests/bots_sdk/test_docker.py"})
#: The files that take longest (minutes each, measured with ``--durations``), longest first:
#: started first, so the run ends with short files on every worker. Only an order: a file
#: missing here, or no longer long, runs all the same.
LONG_FIRST = (
    "tests/arena/test_every_url.py",
    "tests/bots_sdk/test_sdk_package.py",
    "tests/arena/test_browser.py",
    "tests/arena/test_author_loop.py",
    "tests/test_demo.py",
    "tests/arena/test_tournament_end_to_end.py",
    "tests/arena/test_end_to_end.py",
    "tests/hostile/test_referee.py",
)
#: The Redis databases a server has unless configured otherwise (0 to 15).
REDIS_DATABASES = 16


def unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its file.

    >>> unit("tests/test_compose_engine.py::test_down_leaves_no_container")
    'tests/test_compose_engine.py'
    >>> unit("tests/arena/test_api.py::test_x"), unit("engine/state.py::engine.state")
    ('tests/arena/test_api.py', 'engine/state.py')
    """
    return nodeid.split("::", 1)[0]


def priority(unit_name: str, position: int) -> tuple[int, int]:
    """Where ``unit_name``, ``position``-th as collected, comes in the run (lower first).

    >>> docker = "tests/bots_sdk/test_docker.py"
    >>> sorted(["b.py", docker, LONG_FIRST[1], "a.py"], key=lambda u: priority(u, 0))[:2]
    ['tests/bots_sdk/test_docker.py', 'tests/bots_sdk/test_sdk_package.py']
    """
    if unit_name in DOCKER_FILES:
        return (0, position)
    if unit_name in LONG_FIRST:
        return (1, LONG_FIRST.index(unit_name))
    return (2, position)


def worker_services(environ: Mapping[str, str], worker: str, project: Path) -> dict[str, str]:
    """The variables that give xdist's ``worker`` (``gw0``, ``gw1``, …) services of its own:
    the Redis database of ``REDIS_URL`` plus its number, and a folder of its own under
    ``BIDEL_VAR_DIR`` (``var/`` by default).

    >>> env = worker_services({"REDIS_URL": "redis://127.0.0.1:6379/0"}, "gw2", Path("/p"))
    >>> env["REDIS_URL"], env["BIDEL_VAR_DIR"]
    ('redis://127.0.0.1:6379/2', '/p/var/workers/gw2')
    >>> worker_services({"BIDEL_VAR_DIR": "/tmp/v"}, "gw0", Path("/p"))
    {'BIDEL_VAR_DIR': '/tmp/v/workers/gw0'}
    >>> worker_services({"REDIS_URL": "redis://h/15"}, "gw1", Path("/p"))
    Traceback (most recent call last):
    ...
    ValueError: worker gw1 would use Redis database 16 of redis://h/15: a server has 16 (0-15)
    """
    number = int(worker.removeprefix("gw"))
    base = Path(environ.get("BIDEL_VAR_DIR") or project / "var")
    env = {"BIDEL_VAR_DIR": str(base / "workers" / worker)}
    if environ.get("REDIS_URL"):
        url = urlsplit(environ["REDIS_URL"])
        database = int(url.path.strip("/") or 0) + number
        if database >= REDIS_DATABASES:
            raise ValueError(
                f"worker {worker} would use Redis database {database} of "
                f"{environ['REDIS_URL']}: a server has {REDIS_DATABASES} (0-15)"
            )
        env["REDIS_URL"] = urlunsplit(url._replace(path=f"/{database}"))
    return env


@pytest.hookimpl(tryfirst=True)  # before pytest-django's hook imports the settings
def pytest_load_initial_conftests() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        os.environ.update(worker_services(os.environ, worker, Path(__file__).parent.parent))


def refusals(tests: Iterable[tuple[str, bool]]) -> dict[str, str]:
    """What keeps tests of a collection of ``(test id, marked docker)`` from running right,
    by test id: a docker test outside :data:`DOCKER_FILES` would run beside the Docker tests,
    uncounted among them; and of two tests with one id, xdist (which knows a test by its id) runs
    one and says nothing.

    >>> refusals([("tests/test_x.py::a", False), ("tests/test_compose_engine.py::b", True)])
    {}
    >>> twice = [("tests/test_x.py::a", True), ("tests/test_y.py::c", False)] * 2
    >>> for test, why in refusals(twice).items():
    ...     print(test, "-", why.split(" (")[0].split(":")[0])
    tests/test_x.py::a - marked docker outside the Docker files
    tests/test_y.py::c - another test has this id
    """
    problems: dict[str, str] = {}
    seen: set[str] = set()
    for nodeid, docker in tests:
        if nodeid in seen:
            problems.setdefault(nodeid, "another test has this id: give each its own")
        seen.add(nodeid)
        if docker and unit(nodeid) not in DOCKER_FILES:
            problems[nodeid] = (
                f"marked docker outside the Docker files ({', '.join(sorted(DOCKER_FILES))}, "
                "tests/lanes.py): it would run beside them, on an engine they count as theirs"
            )
    return problems
