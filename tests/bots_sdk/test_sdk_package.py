"""bidel-sdk, the distribution bot authors install (sdk/pyproject.toml): built from this
repository into a wheel, installed into a fresh virtual environment with no package index at
all (so a third-party dependency could not be installed), it plays, checks and imports no
Django."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

import pytest

from bots_sdk.compile_engine import build_module, compiled_modules
from tests.deadline import LONG, LONG_TEST
from tests.sandboxes import sandbox_problem
from tests.support import PROJECT_DIR

#: Every test here builds the wheel or waits for the build another worker makes.
pytestmark = pytest.mark.timeout(LONG_TEST)
SDK = PROJECT_DIR / "sdk"


def _run(
    *argv: str | Path, cwd: Path, timeout: float = LONG, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), **(env or {})}
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def _fresh_venv(root: Path, compiler: str | None = None, build: str | None = "auto") -> Path:
    """A fresh venv under ``root`` holding only the SDK's wheel (and what ``venv`` itself
    brings), built as ``BIDEL_ENGINE_BUILD=build`` asks (None: unset, the default install),
    with the C compiler ``compiler`` (None: the system's)."""
    source = root / "source"  # a copy: building writes build/ and egg-info beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "_build_backend.py"):
        shutil.copy(SDK / name, source / name)
    for package in ("engine", "bots_sdk"):
        shutil.copytree(
            SDK / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(SDK / "setup.py", source / "setup.py")
    built = _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-v",
        "--no-deps",
        "--no-build-isolation",  # (this venv's setuptools and mypy: no index is reachable)
        "--no-index",
        "-w",
        root / "dist",
        source,
        cwd=root,
        env={
            **({} if compiler is None else {"CC": compiler}),
            **({} if build is None else {"BIDEL_ENGINE_BUILD": build}),
        },
    )
    assert built.returncode == 0, built.stderr
    (root / "build.log").write_text(built.stdout + built.stderr)
    (wheel,) = (root / "dist").glob("bidel_sdk-*.whl")
    made = _run(sys.executable, "-m", "venv", root / "venv", cwd=root)
    assert made.returncode == 0, made.stderr
    installed = _run(
        root / "venv/bin/python",
        "-m",
        "pip",
        "install",
        "--no-index",
        "--disable-pip-version-check",
        wheel,
        cwd=root,
    )
    assert installed.returncode == 0, installed.stderr
    return root


def shared_fresh_venv() -> Path:
    """:func:`_fresh_venv` compiled with the system's compiler (as ``BIDEL_ENGINE_BUILD=auto``
    builds it), built once per test run (by the first worker to ask; the others wait for it)
    and shared by the tests that only use it: building the compiled wheel is a minute of CPU.
    Nothing may change it."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
    root = Path(tempfile.gettempdir()) / f"bidel-sdk-venv-{run}"
    with open(root.with_name(root.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "built").exists():
            for old in root.parent.glob("bidel-sdk-venv-*"):  # earlier runs' (a day old)
                if old != root and time.time() - old.stat().st_mtime > 24 * 3600:
                    shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink()
            shutil.rmtree(root, ignore_errors=True)  # (a build that failed half-way)
            root.mkdir()
            _fresh_venv(root)
            (root / "built").touch()
    return root


@pytest.fixture(scope="module")
def fresh() -> Path:
    """A fresh venv with the SDK built compiled, where this machine has a C compiler."""
    return shared_fresh_venv()


def _compiler_here() -> bool:
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    include = Path(sysconfig.get_paths()["include"])
    return shutil.which(compiler) is not None and (include / "Python.h").exists()


def test_the_sdk_declares_no_third_party_dependency_and_the_platform_depends_on_it() -> None:
    sdk = tomllib.loads((SDK / "pyproject.toml").read_text())["project"]
    assert sdk["name"] == "bidel-sdk" and sdk["dependencies"] == []
    assert "numpy" in sdk["optional-dependencies"]
    assert sdk["scripts"]["bidel"] == "bots_sdk.cli:main"
    platform = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]
    assert f"bidel-sdk=={sdk['version']}" in platform["dependencies"]
    # one source: the SDK's packages are this repository's engine/ and bots_sdk/
    for package in ("engine", "bots_sdk"):
        assert (SDK / package).resolve() == PROJECT_DIR / package


def test_a_fresh_venv_holds_the_sdk_and_nothing_third_party(fresh: Path) -> None:
    listed = _run(
        fresh / "venv/bin/python",
        "-m",
        "pip",
        "list",
        "--format=freeze",
        "--disable-pip-version-check",
        cwd=fresh,
    )
    names = {line.split("==")[0].lower() for line in listed.stdout.split()}
    assert "bidel-sdk" in names
    assert not names - {"bidel-sdk", "pip", "setuptools", "wheel"}, names
    version = _run(fresh / "venv/bin/bidel", "--version", cwd=fresh)
    assert version.returncode == 0 and version.stdout.startswith("bidel SDK 0.1.0"), version
    if _compiler_here():  # the wheel carries the compiled engine, and it is the one in use
        assert "engine 0.1.0: compiled (mypyc " in version.stdout, version.stdout
        (wheel,) = (fresh / "dist").glob("bidel_sdk-*.whl")
        names = zipfile.ZipFile(wheel).namelist()
        assert "engine/_compiled.json" in names
        assert any(n.startswith("engine/state.") and n.endswith(".so") for n in names), names
    else:
        assert "engine 0.1.0: pure (" in version.stdout, version.stdout


def test_without_a_c_compiler_the_sdk_installs_pure_python_says_so_and_plays(
    tmp_path: Path,
) -> None:
    root = _fresh_venv(tmp_path, compiler="/nonexistent/cc")
    assert "compiling the engine failed" in (root / "build.log").read_text()
    (wheel,) = (root / "dist").glob("bidel_sdk-*.whl")
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".so")]
    version = _run(root / "venv/bin/bidel", "--version", cwd=root)
    assert "engine 0.1.0: pure (not compiled: compiling the engine failed" in version.stdout
    played = _run(
        root / "venv/bin/bidel",
        "play",
        "low",
        "random",
        "heuristic",
        "low",
        "--hands",
        "3",
        "--json",
        cwd=root,
    )
    assert played.returncode == 0, played.stderr
    assert "bots_sdk: engine pure (not compiled: compiling the engine failed" in played.stderr
    assert json.loads(played.stdout)["bots"]


def test_the_default_install_is_pure_and_bidel_compile_makes_the_compiled_build(
    tmp_path: Path,
) -> None:
    """The install takes no compile (its speed: ``bench/sdk_install.py``); ``bidel compile``
    is the documented step to the compiled build: it fails in one sentence, leaving the pure
    build playing, where no C compiler is; it compiles in place where one is; ``--version``
    says which build runs at each step; ``pip uninstall`` takes the compiled files too."""
    root = _fresh_venv(tmp_path, build=None)
    (wheel,) = (root / "dist").glob("bidel_sdk-*.whl")
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".so")]
    # The pure build's manifest went into the wheel, not into the sources it was built from
    # (there, a checkout's own compiled build, copied with them, would have been disowned).
    manifest = Path("engine", "_compiled.json")
    copied, checkout = root / "source" / manifest, SDK / manifest
    assert (copied.read_text() if copied.exists() else None) == (
        checkout.read_text() if checkout.exists() else None
    )
    assert "engine/_compiled.json" in zipfile.ZipFile(wheel).namelist()
    bidel = root / "venv/bin/bidel"
    version = _run(bidel, "--version", cwd=root)
    assert "engine 0.1.0: pure (not compiled: the default install; `bidel compile`" in (
        version.stdout
    ), version.stdout
    cache = {"XDG_CACHE_HOME": str(root / "cache")}  # (the compiler is fetched into it, once)
    broken = _run(bidel, "compile", cwd=root, env={**cache, "CC": "/nonexistent/cc"})
    if "could not fetch the compiler" in broken.stderr:
        pytest.skip(f"no package index reachable for the compiler: {broken.stderr.strip()}")
    assert broken.returncode == 2, broken
    assert "compiling failed (a C compiler and Python's headers are needed" in broken.stderr
    assert "Traceback" not in broken.stderr
    still = _run(bidel, "--version", cwd=root)
    assert "engine 0.1.0: pure (" in still.stdout, still.stdout
    played = _run(bidel, "play", "low", "random", "heuristic", "low", "--hands", "2", cwd=root)
    assert played.returncode == 0 and "bots_sdk: engine pure (" in played.stderr, played

    compiled = _run(bidel, "compile", cwd=root, env=cache)
    assert compiled.returncode == 0, compiled
    modules = len(compiled_modules(build_module()))  # (the engine's hot modules and the SDK's)
    assert f"translating {modules} modules to C" in compiled.stdout, compiled.stdout
    assert compiled.stdout.strip().endswith(
        "bidel: the engine is compiled (mypyc 2.4.1) from now on (bidel --version says so)"
    ), compiled.stdout
    version = _run(bidel, "--version", cwd=root)
    assert version.stdout.strip().endswith("(engine 0.1.0: compiled (mypyc 2.4.1))"), version
    again = _run(bidel, "compile", cwd=root, env=cache)
    assert again.returncode == 0, again
    assert again.stdout == "bidel: the engine is compiled already: compiled (mypyc 2.4.1)\n"
    played = _run(bidel, "play", "low", "random", "heuristic", "low", "--hands", "2", cwd=root)
    assert "bots_sdk: engine compiled (mypyc 2.4.1)" in played.stderr, played.stderr

    packages = Path(
        _run(
            root / "venv/bin/python",
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            cwd=root,
        ).stdout.strip()
    )
    assert list((packages / "engine").glob("*.so")), "compiled in place, beside the sources"
    removed = _run(
        root / "venv/bin/python", "-m", "pip", "uninstall", "-y", "-q", "bidel-sdk", cwd=root
    )
    assert removed.returncode == 0, removed.stderr
    assert not (packages / "engine").exists() and not (packages / "bots_sdk").exists()


def test_every_sdk_module_imports_without_django_and_the_extras_say_how_to_get_them(
    fresh: Path,
) -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        "failed = {}\n"
        "for name in ('engine', 'bots_sdk'):\n"
        "    package = importlib.import_module(name)\n"
        "    for info in pkgutil.walk_packages(package.__path__, name + '.'):\n"
        "        try:\n"
        "            importlib.import_module(info.name)\n"
        "        except ImportError as exc:\n"
        "            failed[info.name] = str(exc)\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('django', 'celery')]\n"
        "print(failed)\n"
    )
    done = _run(fresh / "venv/bin/python", "-c", code, cwd=fresh)
    assert done.returncode == 0, done.stderr
    failed = eval(done.stdout)  # noqa: S307 — our own printed dict
    # Only the learning environments and their numpy encoding need an extra; they say which.
    assert set(failed) <= {"bots_sdk.learning", "bots_sdk.observation"}, failed
    assert "bidel-sdk[numpy]" in failed.get("bots_sdk.observation", "bidel-sdk[numpy]")
    assert "bidel-sdk[learn]" in failed.get("bots_sdk.learning", "bidel-sdk[learn]")


@pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}")
def test_a_fresh_venv_plays_a_new_bot_in_the_sandbox_in_duplicate(
    fresh: Path, tmp_path: Path
) -> None:
    work = tmp_path
    bidel = fresh / "venv/bin/bidel"
    made = _run(bidel, "new", "my_bot", cwd=work)
    assert made.returncode == 0 and (work / "my_bot.py").is_file(), made.stderr
    played = _run(
        bidel,
        "play",
        "my_bot.py",
        "heuristic",
        "heuristic",
        "heuristic",
        "--duplicate",
        "--hands",
        "40",
        cwd=work,
    )
    assert played.returncode == 0, played.stderr
    assert "sandbox bubblewrap" in played.stderr
    assert "packages a bot may import: none" in played.stderr  # no numpy in this venv
    assert "my_bot.py - heuristic:" in played.stdout and "over 40 deals" in played.stdout
    summary = next(line for line in played.stdout.splitlines() if line.startswith("my_bot.py "))
    # name, games, hands, pts/hand, [ci low, ci high], win%, moons, faults, ms mean, ms p99
    columns = summary.split()
    assert columns[1:3] == ["4", "160"] and columns[8] == "-", summary  # no fault


@pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}")
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed here")
def test_the_wheel_carries_the_starter_kits(fresh: Path, tmp_path: Path) -> None:
    """A C++ bot from the wheel's kit builds and plays in the sandbox."""
    work = tmp_path
    bidel = fresh / "venv/bin/bidel"
    kit = _run(bidel, "new", "--lang", "cpp", "cpp_bot", cwd=work)
    assert kit.returncode == 0 and (work / "cpp_bot" / "bidel.toml").is_file(), kit.stderr
    played = _run(bidel, "play", "cpp_bot", "low", "low", "low", "--hands", "2", cwd=work)
    assert played.returncode == 0, played.stderr
    assert "cpp_bot - low:" in played.stdout


@pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}")
def test_a_sandboxed_bot_simulates_with_the_same_build_as_the_referee(
    fresh: Path, tmp_path: Path
) -> None:
    work = tmp_path
    (work / "which.py").write_text(
        "import sys\n"
        "import engine\n"
        "from bots_sdk import Bot, lowest\n"
        "print('bot engine:', engine.BUILD, file=sys.stderr)\n"
        "class Which(Bot):\n"
        "    def pass_cards(self, view):\n"
        "        return view.hand[: view.rules.pass_count]\n"
        "    def play(self, view):\n"
        "        return lowest(view.legal)\n"
    )
    played = _run(
        fresh / "venv/bin/bidel",
        "play",
        "which.py",
        "low",
        "low",
        "low",
        "--hands",
        "1",
        "--record",
        "match.json",
        cwd=work,
    )
    assert played.returncode == 0, played.stderr
    referee = next(line for line in played.stderr.splitlines() if "bots_sdk: engine " in line)
    build = referee.split("bots_sdk: engine ", 1)[1]
    assert build.startswith("compiled (mypyc" if _compiler_here() else "pure (")
    seat = json.loads((work / "match.json").read_text())["games"][0]["seats"][0]
    assert f"bot engine: {build}" in seat["stderr"], seat["stderr"]
