"""Every public class and function of the engine documents itself with a runnable example
(the examples run as doctests: `engine` is in pytest's testpaths with --doctest-modules).

Read from the sources, not the imported modules: the compiled build (engine/_build.py) keeps
no module docstrings and its functions are not Python functions, but its source is this one."""

from __future__ import annotations

import ast
from pathlib import Path

import engine

SOURCES = sorted(Path(engine.__file__).parent.glob("*.py"))


def test_public_names_have_docstrings_with_examples() -> None:
    missing = []
    assert len(SOURCES) >= 9
    for path in SOURCES:
        if path.name == "__main__.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        assert ast.get_docstring(tree), path.name
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_"):
                if ">>>" not in (ast.get_docstring(node) or ""):
                    missing.append(f"{path.stem}.{node.name}")
    assert missing == []
