"""The two lanes of `make test` (pytest-xdist, ``-n 2``; the scheduler is in conftest.py):
these files, the tests on a real Docker engine (the ``docker`` mark), in one worker; every
other test in the other."""

from collections.abc import Iterable

DOCKER_FILES = frozenset({"tests/test_compose_engine.py", "tests/bots_sdk/test_docker.py"})


def lane(nodeid: str) -> str:
    """``docker`` or ``main``: the worker a test runs in, by its file.

    >>> lane("tests/test_compose_engine.py::test_down_leaves_no_container"), lane("engine/state.py")
    ('docker', 'main')
    """
    return "docker" if nodeid.split("::", 1)[0] in DOCKER_FILES else "main"


def refusals(tests: Iterable[tuple[str, bool]]) -> dict[str, str]:
    """What keeps tests of a collection of ``(test id, marked docker)`` from running right in
    the two lanes, by test id: a docker test outside :data:`DOCKER_FILES` would run beside the
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
