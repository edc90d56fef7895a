"""The three lanes of `make test` (pytest-xdist, ``-n 3``; the scheduler is in conftest.py),
each a worker of its own: the tests on a real Docker engine (the ``docker`` mark), which
mostly wait on builds and containers; the tests that need no service of the platform (the
engine, the SDK, hostile bots against the referee, the static checks), which compute; and
the platform's, which share its database, broker and cache one test at a time (a test
restarts Redis; throttles live in the cache)."""

from collections.abc import Iterable

DOCKER_FILES = frozenset({"tests/test_compose_engine.py", "tests/bots_sdk/test_docker.py"})
#: Where the tests that need neither the platform's database nor its broker nor its cache
#: live (the modules' doctests included): the engine and the SDK never import Django.
STANDALONE = (
    "engine/",
    "bots_sdk/",
    "tests/engine/",
    "tests/bots_sdk/",
    "tests/hostile/",
    "tests/test_static.py",
    "tests/test_layout.py",
)


def lane(nodeid: str) -> str:
    """``docker``, ``standalone`` or ``platform``: the worker a test runs in, by its file.

    >>> lane("tests/test_compose_engine.py::test_down_leaves_no_container")
    'docker'
    >>> lane("engine/state.py::engine.state"), lane("tests/hostile/test_referee.py::test_x")
    ('standalone', 'standalone')
    >>> lane("tests/arena/test_api.py::test_x"), lane("arena/docs.py::arena.docs")
    ('platform', 'platform')
    """
    path = nodeid.split("::", 1)[0]
    if path in DOCKER_FILES:
        return "docker"
    return "standalone" if path.startswith(STANDALONE) else "platform"


def refusals(tests: Iterable[tuple[str, bool]]) -> dict[str, str]:
    """What keeps tests of a collection of ``(test id, marked docker)`` from running right in
    the lanes, by test id: a docker test outside :data:`DOCKER_FILES` would run beside the
    Docker tests, not apart; and of two tests with one id, xdist (which knows a test by its
    id) runs one and says nothing.

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
        if docker and lane(nodeid) != "docker":
            problems[nodeid] = (
                f"marked docker outside the Docker files ({', '.join(sorted(DOCKER_FILES))}, "
                "tests/lanes.py): it would run beside them, not apart"
            )
    return problems
