"""bidel-sdk's build: the engine and the SDK as Python, and their hot modules compiled too.

Where mypyc (it comes with mypy, a build requirement) and a C compiler are at hand, the modules
listed in ``engine/_build.py`` (HOT) and the SDK's own (:data:`SDK_HOT`) are compiled into C
extensions beside their sources and ``engine/_compiled.json`` records which sources were
compiled. Where compiling fails (no
compiler, no Python headers), the build says so and goes on: the same sources run as pure
Python, identically, only slower. ``BIDEL_ENGINE_BUILD`` steers it: ``auto`` (the default),
``pure`` (compile nothing) or ``compiled`` (a failure to compile fails the install).
The metadata is in pyproject.toml; only the extensions are declared here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError, PlatformError

HERE = Path(__file__).resolve().parent
MODE = os.environ.get("BIDEL_ENGINE_BUILD", "auto").strip().lower() or "auto"
if MODE not in ("auto", "pure", "compiled"):
    sys.exit(f"BIDEL_ENGINE_BUILD={MODE!r}: use auto, pure or compiled")


def _load_build_module():  # engine/_build.py alone: importing `engine` would select a build
    spec = importlib.util.spec_from_file_location("_bidel_build", HERE / "engine" / "_build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclass looks itself up there)
    spec.loader.exec_module(module)
    return module


BUILD = _load_build_module()
#: The SDK's modules compiled after the engine's (the search helpers every built-in calls per
#: decision); the manifest lists them with the engine's, so the engine checks them alike.
SDK_HOT = ("bots_sdk.sampling", "bots_sdk.rollout")
COMPILED = (*BUILD.HOT, *SDK_HOT)


def _say(message: str) -> None:
    # pip shows a build's output only with -v; `bidel --version` and `make` say it again.
    print(f"bidel-sdk: {message}", file=sys.stderr, flush=True)


def _not_compiled(reason: str, *, warn: bool) -> None:
    """Say why the engine is not compiled, and leave it in the manifest beside the sources
    (``engine/_build.py`` reports it): extensions an earlier build left there must not pass
    for a stale build, nor a failed compile for a machine without a compiler. ``warn``: a
    fault to fix (mypyc refused the code), not a machine's lack."""
    _say(f"{reason}: the engine runs as pure Python")
    record = {"failed": reason, "warn": warn}
    (HERE / "engine" / BUILD.MANIFEST).write_text(json.dumps(record, indent=1))


def _extensions() -> tuple[list, str]:
    if MODE == "pure":
        _not_compiled("BIDEL_ENGINE_BUILD=pure at install", warn=False)
        return [], ""
    try:
        from mypy.version import __version__ as mypy_version
        from mypyc.build import mypycify
    except ImportError as exc:
        if MODE == "compiled":
            raise
        _not_compiled(f"mypyc was not available at install ({exc})", warn=False)
        return [], ""
    paths = [os.path.join(*module.split(".")) + ".py" for module in COMPILED]  # (from sdk/)
    group = BUILD.SHARED_LIBRARY.removesuffix("__mypyc")
    try:
        extensions = mypycify(paths, group_name=group, opt_level="3")
    except SystemExit:  # mypyc refused the code (its messages are above)
        if MODE == "compiled":
            raise
        _not_compiled("mypyc refused the engine's code at install (see its messages)", warn=True)
        return [], ""
    return extensions, f"mypyc {mypy_version}"


EXTENSIONS, COMPILER = _extensions()


class BuildExtensions(build_ext):
    """Compiles the extensions, or says why not and leaves the pure build; then writes the
    manifest of what it compiled beside them."""

    def run(self) -> None:
        if not self.extensions:
            return
        try:
            super().run()
        except (CCompilerError, CompileError, ExecError, LinkError, PlatformError, OSError) as exc:
            if MODE == "compiled":
                raise
            _not_compiled(f"compiling the engine failed at install ({exc})", warn=False)
            self.extensions = []
            return
        package = Path(self.get_finalized_command("build_py").get_package_dir("engine"))
        target = package if self.inplace else Path(self.build_lib) / "engine"
        target.mkdir(parents=True, exist_ok=True)
        (target / BUILD.MANIFEST).write_text(
            json.dumps(BUILD.manifest(COMPILER, COMPILED), indent=1)
        )
        _say(f"the engine is compiled ({COMPILER})")

    def get_outputs(self) -> list[str]:
        outputs = super().get_outputs()
        if self.extensions and not self.inplace:
            outputs.append(str(Path(self.build_lib) / "engine" / BUILD.MANIFEST))
        return outputs


setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": BuildExtensions})
