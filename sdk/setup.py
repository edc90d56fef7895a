"""bidel-sdk's build: the engine and the SDK as Python, and, when asked, their hot modules
compiled too.

``BIDEL_ENGINE_BUILD`` chooses: ``pure`` (the default: nothing is compiled, the install takes
seconds, and ``bidel compile`` makes the compiled build later, once), ``auto`` (compile where
mypyc and a C compiler are, else say why and install pure) or ``compiled`` (a failure to
compile fails the install). Compiling makes the modules ``bots_sdk/compile_engine.py`` lists
into C extensions beside their sources, with ``engine/_compiled.json``, the manifest of what
was compiled from which source (``engine/_build.py`` reads it). A pure build writes a manifest
that says why it is pure, so extensions an earlier build left behind never pass for this one.
The metadata is in pyproject.toml; only the extensions are declared here, and
``_build_backend.py`` asks for mypyc only when compiling.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError, PlatformError

HERE = Path(__file__).resolve().parent


def _load_compiling():  # bots_sdk/compile_engine.py alone: importing the packages would not do
    path = HERE / "bots_sdk" / "compile_engine.py"
    spec = importlib.util.spec_from_file_location("_bidel_compile_engine", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


COMPILING = _load_compiling()
BUILD = COMPILING.build_module(HERE)
try:
    MODE = COMPILING.install_choice()
except ValueError as exc:
    sys.exit(str(exc))
#: Why this build is pure (None while it may be compiled); the manifest written says it.
WHY_PURE: dict[str, object] | None = None
#: Why a build asked to be compiled cannot be (no mypyc), said when it builds the extensions.
MISSING_COMPILER: str | None = None


def _say(message: str) -> None:
    # pip shows a build's output only with -v; `bidel --version` and `make` say it again.
    print(f"bidel-sdk: {message}", file=sys.stderr, flush=True)


def _not_compiled(reason: str, *, warn: bool) -> None:
    """Record why the engine is not compiled (``warn``: a fault to fix, mypyc refused the
    code, not a machine's lack); the build commands write it as the manifest."""
    global WHY_PURE
    _say(f"{reason}: the engine runs as pure Python")
    WHY_PURE = {"failed": reason, "warn": warn}


def _extensions() -> tuple[list, str]:
    if MODE == "pure":
        _not_compiled("the default install; `bidel compile` makes the compiled build", warn=False)
        return [], ""
    try:
        return COMPILING.extensions(BUILD)
    except ImportError as exc:
        if MODE == "compiled":
            # Not here: pip runs this file to ask what the build requires before it installs
            # mypy (_build_backend.py); the build itself, without mypyc, fails (BuildExtensions).
            global MISSING_COMPILER
            MISSING_COMPILER = f"BIDEL_ENGINE_BUILD=compiled, but mypyc is not available ({exc})"
            return [Extension(BUILD.SHARED_LIBRARY, sources=[])], ""
        _not_compiled(f"mypyc was not available at install ({exc})", warn=False)
    except SystemExit:  # mypyc refused the code (its messages are above)
        if MODE == "compiled":
            raise
        _not_compiled("mypyc refused the engine's code at install (see its messages)", warn=True)
    return [], ""


EXTENSIONS, COMPILER = _extensions()


def _engine_folder(command: build_py | build_ext, inplace: bool) -> Path:
    """Where this build's engine/ goes: the sources themselves when installed in place
    (editable), else the build's own folder (never the checkout a wheel is built from)."""
    if inplace:
        return Path(command.get_finalized_command("build_py").get_package_dir("engine"))
    return Path(command.build_lib) / "engine"


class BuildPython(build_py):
    """Copies the sources; where nothing will be compiled, writes the manifest saying why."""

    def run(self) -> None:
        super().run()
        if WHY_PURE is not None:
            folder = _engine_folder(self, getattr(self, "editable_mode", False))
            COMPILING.write_manifest(folder, WHY_PURE)


class BuildExtensions(build_ext):
    """Compiles the extensions, or says why not and leaves the pure build; then writes the
    manifest of what it compiled beside them."""

    def run(self) -> None:
        if not self.extensions:
            return
        if MISSING_COMPILER is not None:
            raise SystemExit(MISSING_COMPILER)
        target = _engine_folder(self, self.inplace)
        try:
            super().run()
        except (CCompilerError, CompileError, ExecError, LinkError, PlatformError, OSError) as exc:
            if MODE == "compiled":
                raise
            _not_compiled(f"compiling the engine failed at install ({exc})", warn=False)
            COMPILING.write_manifest(target, WHY_PURE)
            self.extensions = []
            return
        modules = COMPILING.compiled_modules(BUILD)
        COMPILING.write_manifest(target, BUILD.manifest(COMPILER, modules))
        _say(f"the engine is compiled ({COMPILER})")

    def get_outputs(self) -> list[str]:
        outputs = super().get_outputs()
        if self.extensions and not self.inplace:
            outputs.append(str(Path(self.build_lib) / "engine" / BUILD.MANIFEST))
        return outputs


setup(ext_modules=EXTENSIONS, cmdclass={"build_py": BuildPython, "build_ext": BuildExtensions})
