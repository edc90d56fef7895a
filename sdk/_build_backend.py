"""setuptools' build backend, asking for mypyc only when the engine is to be compiled.

``pip install ./sdk`` builds the pure engine (``BIDEL_ENGINE_BUILD`` unset or ``pure``) and
needs only setuptools: the install takes seconds. With ``BIDEL_ENGINE_BUILD=auto`` or
``compiled`` (the Makefile's and the Dockerfile's) the build also asks for the pinned mypy,
whose mypyc compiles the hot modules (``setup.py``). The pin is in
``bots_sdk/compile_engine.py``, the one home of how the engine is compiled.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403 (the PEP 517 hooks, as setuptools has them)


def _compiling_needs() -> list[str]:
    path = Path(__file__).resolve().parent / "bots_sdk" / "compile_engine.py"
    spec = importlib.util.spec_from_file_location("_bidel_compile_needs", path)
    assert spec is not None and spec.loader is not None
    compiling = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compiling)
    if compiling.install_choice() == "pure":
        return []
    return [compiling.COMPILER_REQUIREMENT]


def get_requires_for_build_wheel(config_settings=None):  # noqa: ANN001, ANN201 (PEP 517's)
    return [*build_meta.get_requires_for_build_wheel(config_settings), *_compiling_needs()]


def get_requires_for_build_editable(config_settings=None):  # noqa: ANN001, ANN201
    return [*build_meta.get_requires_for_build_editable(config_settings), *_compiling_needs()]
