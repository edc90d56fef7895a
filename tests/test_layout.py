"""The shape of the code base: package names and the direction of dependencies."""

from __future__ import annotations

import sys
import tomllib

from tests.support import PROJECT_DIR, child_env, run_python


def _our_top_level_names() -> set[str]:
    names = set()
    for entry in PROJECT_DIR.iterdir():
        if entry.name.startswith("."):
            continue
        if entry.is_dir() and (entry / "__init__.py").exists():
            names.add(entry.name)
        elif entry.suffix == ".py":
            names.add(entry.stem)
    pyproject = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())
    for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]:
        names.add(pattern.rstrip("*"))
    return names


def test_no_top_level_package_shadows_the_standard_library() -> None:
    names = _our_top_level_names()
    assert {"engine", "bots_sdk", "arena", "hearts_platform", "hearts_runner", "manage",
            "tests"} <= names
    assert not names & sys.stdlib_module_names, "rename these: they hide standard modules"


def test_platform_is_the_standard_module() -> None:
    import platform

    assert platform.__file__ is not None
    assert not platform.__file__.startswith(str(PROJECT_DIR))


def test_engine_and_sdk_never_import_django() -> None:
    # Every module of both packages, in a fresh interpreter, so nothing else drags Django in.
    code = (
        "import importlib, pkgutil, sys\n"
        "for name in ('engine', 'bots_sdk'):\n"
        "    package = importlib.import_module(name)\n"
        "    for info in pkgutil.walk_packages(package.__path__, name + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "imported = sorted(m for m in sys.modules if m.split('.')[0] in ('engine', 'bots_sdk'))\n"
        "print(len(imported))\n"
        "assert not loaded, loaded\n"
    )
    completed = run_python(code, child_env({"DJANGO_SETTINGS_MODULE": None}))
    assert completed.returncode == 0, completed.stderr
    assert int(completed.stdout) >= 2


def test_arena_never_imports_the_project() -> None:
    # engine <- bots_sdk <- arena <- hearts_platform: the app sits below the project.
    import ast

    offenders = []
    for path in (PROJECT_DIR / "arena").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path}: {n}" for n in names if n.split(".")[0] == "hearts_platform"]
    assert offenders == []


def test_the_runner_tier_loads_neither_the_platform_nor_its_settings() -> None:
    # A runner holds no secrets: it must start with only the broker's address, so nothing of
    # the Django project, the arena app or Django's settings may load with it.
    code = (
        "import sys\n"
        "import hearts_runner.celery, hearts_runner.tasks, hearts_runner.__main__\n"
        "ours = sorted(m for m in sys.modules if m.split('.')[0] in ('arena', 'hearts_platform'))\n"
        "assert not ours, ours\n"
        "assert 'django.conf' not in sys.modules and 'django.db' not in sys.modules\n"
        "print('ok')\n"
    )
    env = child_env({"DJANGO_SETTINGS_MODULE": None, "SECRET_KEY": None, "DATABASE_URL": None})
    completed = run_python(code, env)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"
