"""The two lanes of `make test` (pytest-xdist, ``-n 2``; the scheduler is in conftest.py):
these files, the tests on a real Docker engine (the ``docker`` mark), in one worker; every
other test in the other."""

DOCKER_FILES = frozenset({"tests/test_compose_engine.py", "tests/bots_sdk/test_docker.py"})


def lane(nodeid: str) -> str:
    """``docker`` or ``main``: the worker a test runs in, by its file.

    >>> lane("tests/test_compose_engine.py::test_down_leaves_no_container"), lane("engine/state.py")
    ('docker', 'main')
    """
    return "docker" if nodeid.split("::", 1)[0] in DOCKER_FILES else "main"
