"""`make test`'s spread over workers, run for real: pytest with three xdist workers over a
small tree that has the project's conftest.py and tests/lanes.py. Each Docker file runs first
in a worker of its own, in order; every other file whole in one worker; the long files
next; each worker with a Redis database and a var folder of its own. A docker-marked test
elsewhere fails, saying where (two tests of one id likewise: `tests.lanes.refusals`,
doctested)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.lanes import LONG_FIRST
from tests.support import DEADLINE, PROJECT_DIR, child_env, requires_postgres

pytest.importorskip("xdist", reason="pytest-xdist runs make test's workers")

RECORD = """
import os
from pathlib import Path


def _record(name):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "none")
    services = os.environ.get("REDIS_URL", "") + " " + os.environ.get("BIDEL_VAR_DIR", "")
    with open(Path(os.environ["LANES_OUT"]) / worker, "a") as log:  # (this worker's alone)
        log.write(f"{name} {services}\\n")
"""
LONG = LONG_FIRST[0]


def _file(root: Path, path: str, body: str) -> None:
    for parent in reversed(Path(path).parents[:-1]):
        (root / parent).mkdir(exist_ok=True)
        (root / parent / "__init__.py").touch()
    (root / path).write_text("import pytest\nfrom tests.record import _record\n" + body)


def _tests(prefix: str, count: int) -> str:
    return "".join(f"def test_{prefix}_{i}():\n    _record('{prefix}_{i}')\n" for i in range(count))


def _tree(tmp_path: Path, other: str) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    shutil.copy(PROJECT_DIR / "conftest.py", root / "conftest.py")
    _file(root, "tests/record.py", "")
    (root / "tests" / "record.py").write_text(RECORD)
    for module in ("lanes.py", "deadline.py"):  # (what the conftest imports)
        shutil.copy(PROJECT_DIR / "tests" / module, root / "tests" / module)
    _file(root, "tests/test_compose_engine.py", _tests("docker", 3))
    _file(root, "tests/bots_sdk/test_docker.py", _tests("docker_backend", 1))
    for n in range(5):
        _file(root, f"tests/engine/test_file{n}.py", _tests(f"file{n}", 4))
    _file(root, LONG, _tests("long", 3))
    _file(root, "tests/test_other.py", other)
    (root / "out").mkdir()
    return root


def _pytest(root: Path) -> subprocess.CompletedProcess[str]:
    env = child_env(
        {
            "DJANGO_SETTINGS_MODULE": None,
            "LANES_OUT": str(root / "out"),
            "REDIS_URL": "redis://127.0.0.1:6379/3",  # (named, never reached)
            "BIDEL_VAR_DIR": str(root / "var"),
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "3", "-p", "tests.lanes"]
        + ["-p", "no:cacheprovider", "-p", "no:django", "-q", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _logs(root: Path) -> dict[str, list[list[str]]]:
    """What each worker ran, in order: [test, its REDIS_URL, its BIDEL_VAR_DIR] per line."""
    return {
        log.name: [line.split(" ") for line in log.read_text().splitlines()]
        for log in (root / "out").iterdir()
    }


def test_each_docker_file_runs_first_in_a_worker_of_its_own_and_each_file_whole_in_one(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path, _tests("other", 2))
    done = _pytest(root)
    assert done.returncode == 0, done.stdout + done.stderr
    logs = _logs(root)
    ran = {line[0]: worker for worker, lines in logs.items() for line in lines}
    assert len(ran) == 4 + 5 * 4 + 3 + 2, logs
    compose = {ran[t] for t in ran if t.startswith("docker_") and "backend" not in t}
    backend = {ran[t] for t in ran if t.startswith("docker_backend")}
    assert len(compose) == len(backend) == 1 and compose != backend, logs  # beside each other
    # each the first its worker ran, its tests in the order collected
    assert [line[0] for line in logs[compose.pop()][:3]] == ["docker_0", "docker_1", "docker_2"]
    assert logs[backend.pop()][0][0] == "docker_backend_0", logs
    for prefix in [f"file{n}_" for n in range(5)] + ["long_", "other_"]:
        assert len({ran[t] for t in ran if t.startswith(prefix)}) == 1, (prefix, logs)
    # the long file is the first thing its worker ran
    assert any(lines[0][0] == "long_0" for lines in logs.values()), logs


def test_each_worker_has_a_redis_database_and_a_var_folder_of_its_own(tmp_path: Path) -> None:
    root = _tree(tmp_path, _tests("other", 2))
    done = _pytest(root)
    assert done.returncode == 0, done.stdout + done.stderr
    services = {
        worker: {(line[1], line[2]) for line in lines} for worker, lines in _logs(root).items()
    }
    assert sorted(services) == ["gw0", "gw1", "gw2"], services
    assert services == {
        f"gw{n}": {(f"redis://127.0.0.1:6379/{3 + n}", str(root / "var" / "workers" / f"gw{n}"))}
        for n in range(3)
    }


def test_a_docker_test_outside_the_docker_files_fails_by_name(tmp_path: Path) -> None:
    root = _tree(tmp_path, "@pytest.mark.docker\ndef test_stray():\n    pass\n")
    done = _pytest(root)
    said = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, said
    assert "tests/test_other.py::test_stray" in said
    assert "marked docker outside the Docker files" in said
    # the rest of the collection still ran
    assert sum(len(lines) for lines in _logs(root).values()) == 4 + 5 * 4 + 3, said


@requires_postgres
def test_a_session_left_on_a_test_database_by_an_earlier_run_does_not_stop_this_one(
    tmp_path: Path,
) -> None:
    """A worker of an earlier run that hung keeps its connection to its test database; the
    next run on the machine ends that session before it drops and makes the database again
    (else every test of that worker errs at its set-up: "database ... already exists")."""
    import psycopg
    from django.db import connection

    config = connection.settings_dict
    where = f"postgres://{config['USER']}@{config['HOST']}:{config['PORT'] or 5432}"
    name = f"leftover{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{where}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "test_{name}"')
    leftover = psycopg.connect(f"{where}/test_{name}", autocommit=True)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
            + ["tests/arena/test_selectors.py", "-k", "not every"],
            cwd=PROJECT_DIR,
            env=child_env({"DATABASE_URL": f"{where}/{name}", "REDIS_URL": None}),
            capture_output=True,
            text=True,
            timeout=10 * DEADLINE,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert leftover.closed or leftover.broken or _ended(leftover)
    finally:
        leftover.close()
        with psycopg.connect(f"{where}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "test_{name}" WITH (FORCE)')


def _ended(session: Any) -> bool:
    try:
        session.execute("SELECT 1")
    except Exception:  # noqa: BLE001 — any error of a terminated session
        return True
    return False


def test_a_plain_pytest_runs_and_workers_without_their_services_are_refused() -> None:
    """``pytest`` as installed (its console script, which does not put the project on the
    path the way ``python -m pytest`` does) runs the suite in one process; asked for several
    workers without ``-p tests.lanes`` it says how, instead of letting them share services."""
    pytest_script = Path(sys.executable).parent / "pytest"
    env = child_env({"DJANGO_SETTINGS_MODULE": None})
    plain = subprocess.run(
        [str(pytest_script), "-q", "-p", "no:cacheprovider", "tests/lanes.py"],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=10 * DEADLINE,
    )
    assert plain.returncode == 0, plain.stdout[-3000:] + plain.stderr[-3000:]
    shared = subprocess.run(
        [str(pytest_script), "-q", "-p", "no:cacheprovider", "-n", "2", "tests/lanes.py"],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=10 * DEADLINE,
    )
    assert shared.returncode == pytest.ExitCode.USAGE_ERROR, shared.stdout + shared.stderr
    assert "add -p tests.lanes" in shared.stderr
