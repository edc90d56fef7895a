"""Compiling the engine: its hot modules and the SDK's, by mypyc, into C extensions beside their
sources, with the manifest ``engine/_build.py`` checks (see there which build runs).

``pip install ./sdk`` installs the pure build at once; the compiled one (the same games, about
four times the simulations a second) is made afterwards, once, by ``bidel compile``, which runs
this file as a script in a child process (:func:`main`): it never imports ``engine``, whose
build it is replacing, and nor does ``sdk/setup.py``, which loads it by its path to compile at
install time (``BIDEL_ENGINE_BUILD=auto`` or ``compiled``; the Makefile and the Dockerfile do).
Only the standard library is imported at the top: the installer and the command load it
before mypyc is at hand.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

#: The folder holding ``engine/`` and ``bots_sdk/`` (site-packages, or a checkout).
ROOT = Path(__file__).resolve().parent.parent
#: The SDK's modules compiled after the engine's (the search helpers every built-in calls per
#: decision); the manifest lists them with the engine's, so the engine checks them alike.
SDK_HOT = ("bots_sdk.sampling", "bots_sdk.rollout", "bots_sdk.search")
#: The compiler: mypyc comes with mypy, pinned (its C must match the code it was checked on).
COMPILER_REQUIREMENT = "mypy==2.4.1"
#: What compiling needs besides mypyc: setuptools drives the C compiler.
TOOLS = (COMPILER_REQUIREMENT, "setuptools>=77")
#: The environment variable of the install-time choice (``sdk/setup.py``): ``pure`` (the
#: default), ``auto`` (compile where a compiler is, else pure) or ``compiled`` (or fail).
INSTALL_ENV = "BIDEL_ENGINE_BUILD"
INSTALL_CHOICES = ("pure", "auto", "compiled")


def build_module(root: Path = ROOT) -> ModuleType:
    """``engine/_build.py`` loaded by its path: importing ``engine`` would select a build.

    >>> build_module().SHARED_LIBRARY
    'engine._native__mypyc'
    """
    name = "_bidel_engine_build"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, root / "engine" / "_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (its dataclass looks itself up there)
    spec.loader.exec_module(module)
    return module


def install_choice(environ: Mapping[str, str] = os.environ) -> str:
    """The install-time build asked for by ``BIDEL_ENGINE_BUILD`` (``pure`` when unset).

    >>> install_choice({}), install_choice({"BIDEL_ENGINE_BUILD": " Auto "})
    ('pure', 'auto')
    >>> install_choice({"BIDEL_ENGINE_BUILD": "fast"})
    Traceback (most recent call last):
    ...
    ValueError: BIDEL_ENGINE_BUILD='fast': use pure, auto or compiled
    """
    choice = environ.get(INSTALL_ENV, "").strip().lower() or "pure"
    if choice not in INSTALL_CHOICES:
        raise ValueError(f"{INSTALL_ENV}={choice!r}: use pure, auto or compiled")
    return choice


def compiled_modules(build: ModuleType) -> tuple[str, ...]:
    """Every module compiled, in dependency order: the engine's, then the SDK's.

    >>> compiled_modules(build_module())[-3:]
    ('bots_sdk.sampling', 'bots_sdk.rollout', 'bots_sdk.search')
    """
    return (*build.HOT, *SDK_HOT)


def extensions(build: ModuleType, target_dir: str | None = None) -> tuple[list[Any], str]:
    """mypyc's extensions of every compiled module, for setuptools to build (paths relative
    to the working folder, which must hold ``engine/`` and ``bots_sdk/``), and the compiler's
    name for the manifest. Raises ``ImportError`` without mypyc, ``SystemExit`` where mypyc
    refuses the code (its messages are printed)."""
    from mypy.version import __version__ as mypy_version
    from mypyc.build import mypycify

    paths = [os.path.join(*module.split(".")) + ".py" for module in compiled_modules(build)]
    group = build.SHARED_LIBRARY.removesuffix("__mypyc")
    made = mypycify(paths, group_name=group, opt_level="3", target_dir=target_dir)
    return made, f"mypyc {mypy_version}"


def write_manifest(folder: Path, record: dict[str, object]) -> None:
    """Write ``_compiled.json`` into ``folder`` (an ``engine/``) whole or not at all."""
    build = build_module()
    folder.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".compiled-", suffix=".json")
    with os.fdopen(fd, "w") as out:
        json.dump(record, out, indent=1)
    os.replace(temporary, folder / build.MANIFEST)


def _replace(made: Path, target: Path) -> None:
    """Put ``made`` at ``target`` as a new file: a process that has the old extension loaded
    keeps its own mapping of it (writing over it in place could crash that process)."""
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=".compiling-")
    os.close(fd)
    try:
        with open(made, "rb") as source, open(temporary, "wb") as copy:
            while chunk := source.read(1 << 20):
                copy.write(chunk)
        os.chmod(temporary, 0o755)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def _recorded_files(root: Path, relative: list[str]) -> None:
    """Add the compiled files to the installed distribution's RECORD, so ``pip uninstall``
    removes them too (nothing to do in a checkout, or an editable install)."""
    from importlib import metadata

    try:
        distribution = metadata.distribution("bidel-sdk")
    except metadata.PackageNotFoundError:
        return
    if Path(str(distribution.locate_file(""))).resolve() != root:
        return
    record = next((f for f in distribution.files or () if f.name == "RECORD"), None)
    if record is None:
        return
    path = Path(str(record.locate()))
    listed = {line.split(",")[0] for line in path.read_text().splitlines()}
    new = [name for name in relative if name not in listed]
    if new:
        with open(path, "a") as out:
            out.writelines(f"{name},,\n" for name in new)


def compile_in_place(root: Path, progress: TextIO) -> str:
    """Compile the hot modules under ``root`` into a scratch folder, then put the extensions
    beside their sources and the manifest last (until then the pure build runs, as before).
    Returns the compiler's name. Raises what mypyc or the C compiler raised."""
    from setuptools import Distribution  # type: ignore[import-untyped]

    build = build_module(root)
    modules = compiled_modules(build)
    with tempfile.TemporaryDirectory(prefix="bidel-compile-") as scratch:
        os.environ["MYPY_CACHE_DIR"] = os.path.join(scratch, "mypy-cache")
        print(f"translating {len(modules)} modules to C (mypyc)", file=progress, flush=True)
        os.chdir(root)
        made, compiler = extensions(build, target_dir=os.path.join(scratch, "c"))
        print("compiling the C (the long step)", file=progress, flush=True)
        lib = Path(scratch) / "lib"
        distribution = Distribution({"name": "bidel-engine", "ext_modules": made})
        distribution.script_name = "bidel compile"
        distribution.script_args = [
            "build_ext",
            "--build-lib",
            str(lib),
            "--build-temp",
            os.path.join(scratch, "temp"),
        ]
        distribution.parse_command_line()
        distribution.run_commands()
        print("putting the compiled modules in place", file=progress, flush=True)
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        placed = []
        for module in (*modules, build.SHARED_LIBRARY):
            relative = os.path.join(*module.split(".")) + suffix
            _replace(lib / relative, root / relative)
            placed.append(relative)
        write_manifest(root / "engine", build.manifest(compiler, modules))
        placed.append(os.path.join("engine", build.MANIFEST))
        _recorded_files(root, placed)
    return compiler


def _cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bidel"


def _mypyc_here() -> bool:
    """Whether this Python already has the pinned mypyc (a checkout's dev venv does)."""
    from importlib import metadata

    try:
        version = metadata.version("mypy")
    except metadata.PackageNotFoundError:
        return False
    wanted = COMPILER_REQUIREMENT.split("==")[1]
    return version == wanted and importlib.util.find_spec("setuptools") is not None


def compiler_tools(say: Callable[[str], None]) -> Path | None:
    """A folder holding the pinned mypyc and setuptools, fetched by pip into the user's cache
    the first time (whole or not at all); None where this Python has them already. Raises
    :class:`CompileFailed` when pip cannot fetch them."""
    if _mypyc_here():
        return None
    tag = f"{COMPILER_REQUIREMENT.replace('==', '-')}-py{sys.version_info[0]}{sys.version_info[1]}"
    folder = _cache_folder() / "compiler" / tag
    if (folder / ".complete").exists():
        return folder
    say(f"fetching the compiler ({', '.join(TOOLS)}) into {folder}, once")
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".fetching-"))
    fetched = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-warn-script-location",
            "--target",
            str(partial),
            *TOOLS,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if fetched.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        last = (fetched.stdout.strip().splitlines() or ["(pip said nothing)"])[-1]
        raise CompileFailed(f"pip could not fetch the compiler: {last}")
    (partial / ".complete").touch()
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(partial, folder)
    return folder


class CompileFailed(Exception):
    """The engine could not be compiled here; the message says why and what to do."""


def compile_here(say: Callable[[str], None]) -> str:
    """``bidel compile``: compile the installed engine in place, in a child process that
    shows its phases through ``say`` (with the time since the start, and a line every
    20 s of the long step), then check in a fresh process that the compiled build is the one
    that runs. Returns what ``engine.BUILD`` says there; raises :class:`CompileFailed`."""
    if not os.access(ROOT / "engine", os.W_OK):
        raise CompileFailed(
            f"{ROOT / 'engine'} is not writable by this user: run bidel compile as the "
            "owner of this Python's packages"
        )
    started = time.monotonic()

    def timed(line: str) -> None:
        say(f"[{time.monotonic() - started:4.0f} s] {line}")

    tools = compiler_tools(timed)
    env = {**os.environ, "BIDEL_ENGINE": "pure"}  # (the child never loads what it replaces)
    if tools is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tools), env.get("PYTHONPATH")]))
    log = _cache_folder() / "compile.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    child = subprocess.Popen(
        [sys.executable, __file__, str(log)],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert child.stdout is not None
    last = time.monotonic()
    while True:
        ready, _, _ = select.select([child.stdout], [], [], 20)
        if ready:
            line = child.stdout.readline()
            if not line:
                break
            timed(line.rstrip())
            last = time.monotonic()
        elif time.monotonic() - last >= 20:
            timed("… still at it")
            last = time.monotonic()
    if child.wait() != 0:
        tail = log.read_text().strip().splitlines()[-3:]
        raise CompileFailed(
            "compiling failed (a C compiler and Python's headers are needed, e.g. Debian's "
            f"gcc and python3-dev); the last lines of {log}:\n  " + "\n  ".join(tail)
        )
    checked = subprocess.run(
        [sys.executable, "-c", "import engine; print(engine.BUILD)"],
        capture_output=True,
        text=True,
        env={**os.environ, "BIDEL_ENGINE": "compiled"},
    )
    if checked.returncode != 0:
        last_line = (checked.stderr.strip().splitlines() or ["(nothing said)"])[-1]
        raise CompileFailed(f"compiled, but the build does not load: {last_line}")
    return checked.stdout.strip()


def main() -> int:
    """The child of ``bidel compile``: phase lines on standard output (the command shows
    them), everything mypyc, setuptools and the C compiler say into the file named by the
    first argument; exit 1 when compiling failed (the log says why)."""
    progress = os.fdopen(os.dup(1), "w")
    with open(sys.argv[1], "a") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            compiler = compile_in_place(ROOT, progress)
        except (Exception, SystemExit):  # (mypyc ends with SystemExit when it refuses)
            traceback.print_exc()
            sys.stderr.flush()
            return 1
    print(f"compiled by {compiler}", file=progress, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
