"""The engine's two builds (engine/_build.py): compiled where a C compiler was at hand when it
was installed, pure Python otherwise; both play the same games move for move, and the
differential tests (OpenSpiel, rollout ≡ apply, the invariants, the doctests) pass on both."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import engine
from engine import _build
from tests.deadline import DEADLINE, LONG, LONG_TEST
from tests.support import PROJECT_DIR, child_env, run_python

#: Builds, and the engine's tests run again on the other build: work known to be long.
pytestmark = pytest.mark.timeout(LONG_TEST)


def _no_compiler() -> str | None:
    """Why this machine cannot compile the engine, or None when it can."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python headers (Python.h)"
    return None


def _other_build() -> str:
    """The build this process does not run, when it is there to run (else skip, saying why)."""
    if engine.BUILD.kind == "compiled":
        return "pure"
    problem, _ = _build._compiled_problem()
    if problem is not None:
        pytest.skip(f"only the pure build is here: {problem}")
    return "compiled"


def _engine(build: str, *argv: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "engine", *argv],
        cwd=PROJECT_DIR,
        env=child_env({"BIDEL_ENGINE": build}),
        capture_output=True,
        text=True,
        timeout=LONG,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_engine_is_compiled_wherever_a_c_compiler_is_at_hand() -> None:
    if child_env().get("BIDEL_ENGINE") == "pure":
        pytest.skip("BIDEL_ENGINE=pure: this run asked for the pure build")
    no_compiler = _no_compiler()
    if no_compiler is None:
        # `make` compiles it; a pure build here means the compile failed, or a hot module was
        # edited since (then `make test` compiles it again).
        assert engine.BUILD.kind == "compiled", str(engine.BUILD)
        assert engine.BUILD.detail.startswith("mypyc ")
    else:
        assert engine.BUILD.kind == "pure", no_compiler


def test_the_compiled_build_and_the_pure_build_play_the_same_5000_hands() -> None:
    other = _other_build()
    ours = _engine(engine.BUILD.kind, "digest", "--hands", "5000")
    theirs = _engine(other, "digest", "--hands", "5000")
    assert {ours["build"].split()[0], theirs["build"].split()[0]} == {"compiled", "pure"}
    assert ours["hands"] == theirs["hands"] == 5000
    assert ours["sha256"] == theirs["sha256"]


def test_the_differential_tests_and_doctests_pass_on_the_other_build_too() -> None:
    other = _other_build()
    targets = [
        "tests/engine",
        "engine",
        "bots_sdk/sampling.py",
        "bots_sdk/rollout.py",
        "tests/bots_sdk/test_sdk.py",
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-x",
            *targets,
            "--deselect",
            "tests/engine/test_builds.py",
        ],
        cwd=PROJECT_DIR,
        env=child_env({"BIDEL_ENGINE": other}),
        capture_output=True,
        text=True,
        timeout=LONG,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout


def test_asked_for_by_name_a_build_that_cannot_run_is_refused_not_replaced() -> None:
    done = run_python("import engine", child_env({"BIDEL_ENGINE": "fastest"}))
    assert done.returncode != 0
    assert "BIDEL_ENGINE='fastest': use one of auto, compiled, pure" in done.stderr
    if engine.BUILD.kind == "pure" and _build._compiled_problem()[0] is not None:
        done = run_python("import engine", child_env({"BIDEL_ENGINE": "compiled"}))
        assert (
            done.returncode != 0 and "EngineBuildError: BIDEL_ENGINE=compiled, but" in done.stderr
        )


def test_pure_loads_every_hot_module_from_its_source_even_beside_a_compiled_build() -> None:
    code = (
        "import importlib, json, engine\n"
        "from engine._build import compiled_modules\n"
        "print(json.dumps([engine.BUILD.kind] + "
        "[importlib.import_module(m).__file__ for m in compiled_modules()]))\n"
    )
    done = run_python(code, child_env({"BIDEL_ENGINE": "pure"}))
    assert done.returncode == 0, done.stderr
    kind, *files = json.loads(done.stdout)
    assert kind == "pure" and all(f.endswith(".py") for f in files), files


def test_a_hot_module_edited_since_it_was_compiled_runs_as_pure_python_with_a_warning(
    tmp_path: Path,
) -> None:
    if _build._compiled_problem()[0] is not None:
        pytest.skip("no compiled build here to go stale")
    for package in ("engine", "bots_sdk"):
        shutil.copytree(PROJECT_DIR / package, tmp_path / package)
    with (tmp_path / "engine" / "simulate.py").open("a") as source:
        source.write("# edited after the build\n")
    code = "import engine, engine.simulate as s; print(engine.BUILD.kind, s.__file__)"
    for choice, outcome in (("auto", 0), ("compiled", 1)):
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=child_env({"BIDEL_ENGINE": choice, "PYTHONPATH": str(tmp_path)}),
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert done.returncode == outcome, done.stderr
        assert "engine/simulate.py changed since it was compiled" in done.stderr
    kind, file = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=child_env({"BIDEL_ENGINE": "auto", "PYTHONPATH": str(tmp_path)}),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    ).stdout.split()
    assert kind == "pure" and file == str(tmp_path / "engine" / "simulate.py")


@pytest.mark.parametrize("warned", [True, False])
def test_an_install_that_could_not_compile_says_why_and_runs_pure(
    tmp_path: Path, warned: bool
) -> None:
    """sdk/setup.py leaves the reason in the manifest: extensions of an earlier build, still
    there, are not used, and the engine names the reason, not a stale source."""
    for package in ("engine", "bots_sdk"):
        shutil.copytree(PROJECT_DIR / package, tmp_path / package)
    reason = "mypyc refused the engine's code at install" if warned else "no C compiler"
    (tmp_path / "engine" / _build.MANIFEST).write_text(
        json.dumps({"failed": reason, "warn": warned})
    )
    done = subprocess.run(
        [sys.executable, "-c", "import engine, engine.state as s; print(engine.BUILD, s.__file__)"],
        cwd=tmp_path,
        env=child_env({"BIDEL_ENGINE": None, "PYTHONPATH": str(tmp_path)}),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"pure (not compiled: {reason})")
    assert done.stdout.rstrip().endswith("state.py")
    assert ("RuntimeWarning" in done.stderr) is warned, done.stderr


def test_a_hot_module_touched_but_unchanged_still_runs_compiled(tmp_path: Path) -> None:
    """The manifest's sizes and times spare the hashing; a source whose time moved (a
    checkout, a copy) is hashed, and the same bytes keep the compiled build."""
    if _build._compiled_problem()[0] is not None:
        pytest.skip("no compiled build here")
    for package in ("engine", "bots_sdk"):
        shutil.copytree(PROJECT_DIR / package, tmp_path / package)
    touched = tmp_path / "engine" / "state.py"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    done = subprocess.run(
        [sys.executable, "-c", "import engine, engine.state as s; print(engine.BUILD.kind)"],
        cwd=tmp_path,
        env=child_env({"BIDEL_ENGINE": "compiled", "PYTHONPATH": str(tmp_path)}),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "compiled" and "Warning" not in done.stderr, done.stderr


def test_an_unreadable_manifest_is_named_and_the_engine_runs_pure(tmp_path: Path) -> None:
    for package in ("engine", "bots_sdk"):
        shutil.copytree(PROJECT_DIR / package, tmp_path / package)
    (tmp_path / "engine" / _build.MANIFEST).write_text('{"compiler": ')
    code = "import engine, engine.state as s; print(engine.BUILD); print(s.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,  # (the copy first on the path, not the project)
        env=child_env({"BIDEL_ENGINE": None, "PYTHONPATH": str(tmp_path)}),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    build, file = done.stdout.splitlines()
    assert build.startswith("pure (engine/_compiled.json is unreadable") and file.endswith(".py")
