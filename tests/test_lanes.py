"""`make test`'s three lanes, run for real: pytest with three xdist workers over a small tree
that has the project's conftest.py and tests/lanes.py — the Docker files' tests all in one
worker, the standalone ones (engine, SDK) in another, the platform's in the third; a
docker-marked test elsewhere fails, saying where (two tests of one id likewise:
`tests.lanes.refusals`, doctested)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import PROJECT_DIR, child_env

pytest.importorskip("xdist", reason="pytest-xdist runs make test's lanes")

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
    (root / "tests" / "engine").mkdir()
    shutil.copy(PROJECT_DIR / "conftest.py", root / "conftest.py")
    for module in ("lanes.py", "deadline.py"):  # (what the conftest imports)
        shutil.copy(PROJECT_DIR / "tests" / module, root / "tests" / module)
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "bots_sdk" / "__init__.py").write_text("")
    (root / "tests" / "engine" / "__init__.py").write_text("")
    (root / "tests" / "record.py").write_text(RECORD)
    docker = "from tests.record import _record\n" + "".join(
        f"def test_docker_{i}():\n    _record('docker_{i}')\n" for i in range(3)
    )
    (root / "tests" / "test_compose_engine.py").write_text(docker)
    (root / "tests" / "bots_sdk" / "test_docker.py").write_text(
        "from tests.record import _record\ndef test_docker_backend():\n"
        "    _record('docker_backend')\n"
    )
    (root / "tests" / "engine" / "test_standalone.py").write_text(
        "from tests.record import _record\n"
        + "".join(f"def test_standalone_{i}():\n    _record('standalone_{i}')\n" for i in range(4))
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
            "3",
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


def test_each_lane_runs_in_a_worker_of_its_own(tmp_path: Path) -> None:
    others = "from tests.record import _record\n" + "".join(
        f"def test_main_{i}():\n    _record('main_{i}')\n" for i in range(6)
    )
    root = _tree(tmp_path, others)
    done = _pytest(root)
    assert done.returncode == 0, done.stdout + done.stderr
    workers = {path.name: path.read_text() for path in (root / "out").iterdir()}
    assert len(workers) == 14, workers
    by_lane = {
        lane: {w for name, w in workers.items() if name.startswith(lane)}
        for lane in ("docker", "standalone", "main")
    }
    assert all(len(used) == 1 for used in by_lane.values()), workers
    assert len(set.union(*by_lane.values())) == 3, workers  # three lanes, three workers


def test_a_docker_test_outside_the_docker_files_fails_by_name(tmp_path: Path) -> None:
    root = _tree(tmp_path, "@pytest.mark.docker\ndef test_stray():\n    pass\n")
    done = _pytest(root)
    said = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, said
    assert "tests/test_other.py::test_stray" in said
    assert "marked docker outside the Docker files" in said
    # the rest of the collection still ran, each in its lane
    assert len(list((root / "out").iterdir())) == 8, said
