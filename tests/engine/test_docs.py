"""Every public class and function of the engine documents itself with a runnable example
(the examples run as doctests: `engine` is in pytest's testpaths with --doctest-modules)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import engine


def test_public_names_have_docstrings_with_examples() -> None:
    missing = []
    for info in pkgutil.walk_packages(engine.__path__, "engine."):
        if info.name == "engine.__main__":
            continue
        module = importlib.import_module(info.name)
        assert module.__doc__, info.name
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            if inspect.isclass(value) or inspect.isfunction(value):
                if ">>>" not in (inspect.getdoc(value) or ""):
                    missing.append(f"{info.name}.{name}")
    assert missing == []
