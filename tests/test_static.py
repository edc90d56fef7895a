"""Static checks that keep the code base honest: types of the engine, lint everywhere."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.support import PROJECT_DIR


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=PROJECT_DIR, capture_output=True, text=True, timeout=600)


def test_engine_and_sdk_pass_mypy_strict() -> None:
    pytest.importorskip("mypy", reason="mypy is a dev dependency (pip install -e '.[dev]')")
    completed = _run(sys.executable, "-m", "mypy", "--strict", "engine", "bots_sdk")
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(PROJECT_DIR / ".venv" / "bin")) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is a dev dependency (pip install -e '.[dev]')")
    completed = _run(ruff, "check", ".")
    assert completed.returncode == 0, completed.stdout


def test_ruff_format_leaves_every_file_as_it_is() -> None:
    ruff = shutil.which("ruff", path=str(PROJECT_DIR / ".venv" / "bin")) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is a dev dependency (pip install -e '.[dev]')")
    completed = _run(ruff, "format", "--check", ".")
    assert completed.returncode == 0, completed.stdout
