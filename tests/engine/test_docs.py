"""Every public class and function of the engine documents itself with a runnable example
(the examples run as doctests: `engine` is in pytest's testpaths with --doctest-modules).

A build compiled with mypyc keeps no docstrings, so pytest finds no examples in it: the
docstrings are read from the source here, and their examples run against the compiled modules.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import engine

ENGINE = Path(engine.__path__[0])


def _modules() -> list[str]:
    # Not __main__, nor the shared library of a compiled build (engine._native__mypyc).
    return [
        info.name
        for info in pkgutil.walk_packages(engine.__path__, "engine.")
        if not info.name.rpartition(".")[2].startswith("_")
    ]


def _source(name: str) -> ast.Module:
    return ast.parse((ENGINE / f"{name.rpartition('.')[2]}.py").read_text())


def _compiled(module: ModuleType) -> bool:
    return not str(module.__file__).endswith(".py")


def test_public_names_have_docstrings_with_examples() -> None:
    missing = []
    for name in _modules():
        tree = _source(name)
        assert ast.get_docstring(tree), name
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and not node.name.startswith("_"):
                if ">>>" not in (ast.get_docstring(node) or ""):
                    missing.append(f"{name}.{node.name}")
    assert missing == []


def _docstrings(tree: ast.Module, prefix: str) -> list[tuple[str, str, int]]:
    """(qualified name, docstring, line) of the module, its classes, functions and methods."""
    found = []
    doc = ast.get_docstring(tree, clean=False)
    if doc:
        found.append((prefix, doc, 1))

    def visit(body: list[ast.stmt], qualifier: str) -> None:
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    found.append((f"{qualifier}.{node.name}", doc, node.lineno))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{qualifier}.{node.name}")

    visit(tree.body, prefix)
    return found


@pytest.mark.parametrize("name", _modules())
def test_examples_run_against_a_compiled_build(name: str) -> None:
    module = importlib.import_module(name)
    if not _compiled(module):
        pytest.skip("not compiled: pytest's --doctest-modules runs these examples")
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(verbose=False)
    path = str(ENGINE / f"{name.rpartition('.')[2]}.py")
    for qualified, doc, line in _docstrings(_source(name), name):
        test = parser.get_doctest(doc, dict(vars(module)), qualified, path, line)
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
