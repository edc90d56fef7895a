"""`make test`'s two lanes, run for real: pytest with two xdist workers over a small tree that
has the project's conftest.py and tests/lanes.py — the Docker files' tests all in one worker,
every other test in the other; a docker-marked test elsewhere fails, saying where (two
tests of one id likewise: `tests.lanes.refusals`, doctested)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import PROJECT_DIR, child_env

pytest.importorskip("xdist", reason="pytest-xdist runs make test's two lanes")

RECORD = """
import os
from pathlib import Path


def _record(name):
    out = Path(os.environ["LANES_OUT"]) / name
    out.write_text(os.environ.get("PYTEST_XDIST_WORKER", "none"))
"""


def _tree(tmp_path: Path, other: str) -> Path:
    root = tmp_path / "tree"
    (root / "tests" / "bots_sdk").mkdir(parents=True)
    shutil.copy(PROJECT_DIR / "conftest.py", root / "conftest.py")
    shutil.copy(PROJECT_DIR / "tests" / "lanes.py", root / "tests" / "lanes.py")
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "bots_sdk" / "__init__.py").write_text("")
    (root / "tests" / "record.py").write_text(RECORD)
    docker = "from tests.record import _record\n" + "".join(
        f"def test_docker_{i}():\n    _record('docker_{i}')\n" for i in range(3)
    )
    (root / "tests" / "test_compose_engine.py").write_text(docker)
    (root / "tests" / "bots_sdk" / "test_docker.py").write_text(
        "from tests.record import _record\ndef test_docker_backend():\n"
        "    _record('docker_backend')\n"
    )
    (root / "tests" / "test_other.py").write_text("import pytest\n" + other)
    (root / "out").mkdir()
    return root


def _pytest(root: Path) -> subprocess.CompletedProcess[str]:
    env = child_env({"DJANGO_SETTINGS_MODULE": None, "LANES_OUT": str(root / "out")})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:django",
            "-q",
            "tests",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_docker_files_run_in_one_worker_and_the_rest_in_the_other(tmp_path: Path) -> None:
    others = "from tests.record import _record\n" + "".join(
        f"def test_main_{i}():\n    _record('main_{i}')\n" for i in range(6)
    )
    root = _tree(tmp_path, others)
    done = _pytest(root)
    assert done.returncode == 0, done.stdout + done.stderr
    workers = {path.name: path.read_text() for path in (root / "out").iterdir()}
    assert len(workers) == 10, workers
    docker = {w for name, w in workers.items() if name.startswith("docker")}
    main = {w for name, w in workers.items() if name.startswith("main")}
    assert len(docker) == 1 and len(main) == 1 and docker != main, workers


def test_a_docker_test_outside_the_docker_files_fails_by_name(tmp_path: Path) -> None:
    root = _tree(tmp_path, "@pytest.mark.docker\ndef test_stray():\n    pass\n")
    done = _pytest(root)
    said = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, said
    assert "tests/test_other.py::test_stray" in said
    assert "marked docker outside the Docker files" in said
    # the rest of the collection still ran, each in its lane
    assert len(list((root / "out").iterdir())) == 4, said
