"""The shape of the code base: package names and the direction of dependencies."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

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
    assert {
        "engine",
        "bots_sdk",
        "arena",
        "hearts_platform",
        "hearts_runner",
        "manage",
        "tests",
    } <= names
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


# --- the engine's private names stay inside the engine ----------------------------------------

#: What lies outside the engine and may not reach into it (tests may: they pin its internals;
#: sdk/ only links to engine/ and bots_sdk/).
OUTSIDE_ENGINE = (
    "bots_sdk",
    "arena",
    "hearts_platform",
    "hearts_runner",
    "bench",
    "examples",
    "manage.py",
)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _engine_private_names() -> set[str]:
    """Every single-underscore name the engine defines: its functions, classes, methods,
    module and class attributes, and the attributes it sets on its objects."""
    names: set[str] = set()
    for path in (PROJECT_DIR / "engine").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)  # object.__setattr__(self, "_derived", …), __slots__
    return {name for name in names if _private(name) and name.isidentifier()}


def _modules_outside_engine() -> list[Path]:
    paths = []
    for name in OUTSIDE_ENGINE:
        entry = PROJECT_DIR / name
        paths += [entry] if entry.is_file() else sorted(entry.rglob("*.py"))
    return paths


def _engine_private_uses(path: Path, private: set[str]) -> list[str]:
    tree = ast.parse(path.read_text())
    where = path.relative_to(PROJECT_DIR)
    found = []
    engine_bound: set[str] = set()  # names this module bound to the engine or its contents
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "engine":
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(f"{where}:{node.lineno}: import {alias.name}")
                    engine_bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "engine":
            module = node.module or ""
            for alias in node.names:
                if _private(alias.name) or any(_private(p) for p in module.split(".")):
                    found.append(f"{where}:{node.lineno}: from {module} import {alias.name}")
                engine_bound.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            receiver = node.value
            if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
                continue  # a class's own attribute, whatever it is called
            bound = isinstance(receiver, ast.Name) and receiver.id in engine_bound
            if bound or node.attr in private:
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in private
        ):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_engine_private_names_are_known() -> None:
    # The rule below leans on this list: it must hold the names it is meant to protect.
    assert {"_derived", "_Derived"} <= _engine_private_names()


def test_nothing_outside_the_engine_reads_its_private_names() -> None:
    # What the SDK, the platform and the tools need of the engine is public and documented
    # (RuleSet.deck_mask, …): its internals can change without breaking them.
    private = _engine_private_names()
    found = [
        use for path in _modules_outside_engine() for use in _engine_private_uses(path, private)
    ]
    assert found == [], "\n".join(found)


# --- pages and API views read through selectors and write through services -------------------

#: Queryset and manager methods: a view calling one is querying or writing itself.
ORM_METHODS = frozenset(
    {
        "all",
        "filter",
        "exclude",
        "create",
        "update",
        "delete",
        "save",
        "annotate",
        "aggregate",
        "select_related",
        "prefetch_related",
        "order_by",
        "values",
        "values_list",
        "get_or_create",
        "update_or_create",
        "bulk_create",
        "bulk_update",
        "count",
        "exists",
        "first",
        "last",
        "defer",
        "only",
        "distinct",
        "in_bulk",
        "iterator",
        "raw",
        "select_for_update",
        "refresh_from_db",
        "full_clean",
    }
)
#: Called without arguments these are dict methods too (``dict.values()``): only flagged with.
ORM_WITH_ARGUMENTS = frozenset({"values", "update"})
ORM_SHORTCUTS = frozenset({"get_object_or_404", "get_list_or_404"})


def _view_modules() -> list[Path]:
    """The pages (``arena/web.py``), the project's views and every module of ``arena/api``
    that defines a view: a class based on a view or a viewset, or a function taking the
    request first."""
    modules = [PROJECT_DIR / "arena" / "web.py", PROJECT_DIR / "hearts_platform" / "views.py"]
    for path in sorted((PROJECT_DIR / "arena" / "api").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            bases = [ast.unparse(b) for b in getattr(node, "bases", [])]
            if any("View" in base for base in bases) or (
                isinstance(node, ast.FunctionDef)
                and node.args.args[:1]
                and node.args.args[0].arg == "request"
            ):
                modules.append(path)
                break
    return modules


def _orm_call(node: ast.Call) -> str | None:
    """The queryset method or shortcut ``node`` calls, if it is one."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id if func.id in ORM_SHORTCUTS else None
    if not isinstance(func, ast.Attribute):
        return None
    name, with_arguments = func.attr, bool(node.args or node.keywords)
    if name in ORM_SHORTCUTS or name == "get" and node.keywords:  # `.get(pk=…)`, not dict.get
        return name
    if name in ORM_METHODS and (with_arguments or name not in ORM_WITH_ARGUMENTS):
        return name
    return None


def _orm_uses(path: Path) -> list[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr == "objects":
            found.add((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Call) and (name := _orm_call(node)):
            found.add((node.lineno, f"{name}()"))
    return [f"{path.relative_to(PROJECT_DIR)}:{line}: {what}" for line, what in sorted(found)]


def test_view_modules_are_found() -> None:
    names = {path.relative_to(PROJECT_DIR).as_posix() for path in _view_modules()}
    assert {"arena/web.py", "arena/api/views.py"} <= names
    assert not names & {"arena/api/serializers.py", "arena/api/filters.py"}


def test_pages_and_api_views_never_touch_the_orm() -> None:
    # Reads go through arena.selectors, writes through arena.services: one place to look for
    # a query (and its count), one place where a write is checked.
    found = [use for path in _view_modules() for use in _orm_uses(path)]
    assert found == [], "\n".join(found)


# --- the SDK's rooms: what an author touches, the referee, the builds, the sandbox ----------

#: What a bot and its author's own code import (a bot's process, training, the built-ins):
#: none of it may reach the referee, the builds or the sandbox.
AUTHOR_MODULES = (
    "bots_sdk",
    "bots_sdk.bot",
    "bots_sdk.view",
    "bots_sdk.protocol",
    "bots_sdk.runtime",
    "bots_sdk.errors",
    "bots_sdk.moved",
    "bots_sdk.sampling",
    "bots_sdk.rollout",
    "bots_sdk.search",
    "bots_sdk.learning",
    "bots_sdk.observation",
    "bots_sdk.host",
    "bots_sdk.loader",
    "bots_sdk.builtin",
)
#: The author's commands at the root (``bidel``, ``check``, the platform client, ``reproduce``):
#: they drive the referee, so they may import anything of the SDK.
TOOL_MODULES = (
    "bots_sdk.__main__",
    "bots_sdk.cli",
    "bots_sdk.check",
    "bots_sdk.remote",
    "bots_sdk.ids",  # (what an id is: the client's and the platform's)
    "bots_sdk.analysis",
    "bots_sdk.remote_cli",
    "bots_sdk.reproduce",
    "bots_sdk.tracebacks",  # (a bot's traceback as its author reads it: check, play, reproduce)
    "bots_sdk.compile_engine",  # (the engine's compiled build: the installer's and bidel's)
)
ROOMS = ("bots_sdk.referee", "bots_sdk.builds", "bots_sdk.sandbox")


def _module_files(package: str) -> dict[str, Path]:
    """Every module of ``package`` (migrations aside) by its dotted name."""
    found: dict[str, Path] = {}
    for path in (PROJECT_DIR / package).rglob("*.py"):
        relative = path.relative_to(PROJECT_DIR)
        if {"migrations", "kits", "examples"} & set(relative.parts):
            continue
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(path: Path, known: dict[str, Path], *, runtime_only: bool = False) -> set[str]:
    """The modules of ``known`` that ``path`` imports: at its top, inside functions, and
    (unless ``runtime_only``) under ``TYPE_CHECKING``. ``from package import name`` counts as
    the module ``package.name`` where there is one, else as the package."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped |= {id(inner) for inner in ast.walk(node)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [
                f"{node.module}.{alias.name}"
                if f"{node.module}.{alias.name}" in known
                else node.module
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                out.add(name)
    return out


def _import_graph(*packages: str, runtime_only: bool = False) -> dict[str, set[str]]:
    known: dict[str, Path] = {}
    for package in packages:
        known.update(_module_files(package))
    return {
        name: _imports(path, known, runtime_only=runtime_only) - {name}
        for name, path in known.items()
    }


def _in(name: str, room: str) -> bool:
    return name == room or name.startswith(room + ".")


def _reaching(graph: dict[str, set[str]], sources: list[str], rooms: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{source} imports {target}"
        for source in sources
        for target in graph[source]
        if any(_in(target, room) for room in rooms)
    )


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_and_only_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set(), "c": {"b"}}) == []


def test_every_sdk_module_is_in_one_room() -> None:
    graph = _import_graph("bots_sdk")
    placed = set(AUTHOR_MODULES) | set(TOOL_MODULES)
    loose = [
        name
        for name in graph
        if name not in placed
        and not any(_in(name, room) for room in ROOMS)
        and not _in(name, "bots_sdk.builtin")
    ]
    assert loose == [], "say whether these are an author's, a tool, or of a room"


def test_the_sandbox_imports_neither_the_builds_nor_the_referee() -> None:
    graph = _import_graph("bots_sdk")
    sandbox = [name for name in graph if _in(name, "bots_sdk.sandbox")]
    assert len(sandbox) >= 8
    assert _reaching(graph, sandbox, ("bots_sdk.builds", "bots_sdk.referee")) == []


def test_the_builds_never_import_the_referee() -> None:
    graph = _import_graph("bots_sdk")
    builds = [name for name in graph if _in(name, "bots_sdk.builds")]
    assert _reaching(graph, builds, ("bots_sdk.referee",)) == []


def test_what_an_author_imports_reaches_no_room_of_the_platforms() -> None:
    graph = _import_graph("bots_sdk")
    authors = [name for name in graph if name in AUTHOR_MODULES or _in(name, "bots_sdk.builtin")]
    assert _reaching(graph, authors, ROOMS) == []


def test_no_import_cycle_in_the_sdk() -> None:
    # (The engine keeps one on purpose: engine.state imports its rollout fast path last, which
    # works on the state's internals, so that the compiled build inlines across the two.)
    assert _cycles(_import_graph("bots_sdk")) == []


def test_the_layout_checks_see_a_breach() -> None:
    # The same checks on a graph with the breaches they exist for.
    graph = {
        "bots_sdk.sandbox.base": {"bots_sdk.builds.build"},
        "bots_sdk.builds.build": {"bots_sdk.sandbox.base"},
        "bots_sdk.view": {"bots_sdk.referee.runner"},
        "bots_sdk.referee.runner": set(),
    }
    sandbox = ["bots_sdk.sandbox.base"]
    assert _reaching(graph, sandbox, ("bots_sdk.builds", "bots_sdk.referee")) != []
    assert _reaching(graph, ["bots_sdk.view"], ROOMS) != []
    assert _cycles(graph) == [["bots_sdk.builds.build", "bots_sdk.sandbox.base"]]


def test_the_old_module_paths_are_the_moved_modules() -> None:
    # Scripts written against the flat layout keep working: an old name is the same module.
    import importlib

    import arena
    import bots_sdk

    for old, new in {**bots_sdk.MOVED, **arena.MOVED}.items():
        module = importlib.import_module(old)
        assert module is importlib.import_module(new), old
        assert module.__name__ == new and module.__spec__ is not None
        assert module.__spec__.name == new
    from arena import ratings  # (the other spelling of an old name)

    assert ratings is importlib.import_module("arena.domain.ratings")


def _names_any(node: ast.AST | None) -> bool:
    return node is not None and any(
        (isinstance(inner, ast.Name) and inner.id == "Any")
        or (isinstance(inner, ast.Attribute) and inner.attr == "Any")
        for inner in ast.walk(node)
    )


def _public_any(path: Path) -> list[str]:
    """The public functions, methods and fields (of the module or a class) of ``path`` whose
    signature or annotation names ``Any``."""
    tree = ast.parse(path.read_text())
    scopes: list[ast.AST] = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]
    found = []
    for scope in scopes:
        for node in ast.iter_child_nodes(scope):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name.startswith("_") and node.name != "__init__":
                    continue
                arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                arguments += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
                if _names_any(node.returns) or any(_names_any(a.annotation) for a in arguments):
                    found.append(f"{path.name}: {node.name}")
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if not node.target.id.startswith("_") and _names_any(node.annotation):
                    found.append(f"{path.name}: {node.target.id}")
    return found


def test_the_sandbox_and_build_boundary_is_typed_without_any() -> None:
    rooms = [*(PROJECT_DIR / "bots_sdk" / "sandbox").glob("*.py")]
    rooms += [*(PROJECT_DIR / "bots_sdk" / "builds").glob("*.py")]
    assert len(rooms) >= 10
    assert [hit for path in rooms for hit in _public_any(path)] == []


def test_the_any_check_sees_it_in_a_signature_or_a_field(tmp_path: Path) -> None:
    module = tmp_path / "boundary.py"
    module.write_text(
        "from typing import Any\n"
        "def launch(tools: Any, limits: 'Limits') -> None: ...\n"
        "def _private(x: Any) -> Any: ...\n"
        "class Job:\n    launcher: Any\n    def limits(self) -> dict[str, Any]: ...\n"
    )
    assert _public_any(module) == [
        "boundary.py: launch",
        "boundary.py: launcher",
        "boundary.py: limits",
    ]


# --- the arena: services by domain, dispatch above them, pure code below ---------------------

#: The arena's pure code, all in one folder: ratings, schedules and pairings, tournament
#: formats, cron, the rows the reads hand out. It reads and writes no row (a model appears in
#: its annotations only), so it is tested without a database and used by services and
#: selectors alike.
PURE = "arena.domain"
PURE_MODULES = tuple(
    f"{PURE}.{name}" for name in ("ratings", "scheduling", "formats", "cron", "pairing", "rows")
)


def _impure(graph: dict[str, set[str]], pure: str) -> list[str]:
    """The pure folder's imports, followed through the arena, that leave it."""
    problems = []
    for source in sorted(n for n in graph if _in(n, pure)):
        seen, todo = {source}, [source]
        while todo:
            for target in graph.get(todo.pop(), ()):
                if target in graph and target not in seen:
                    seen.add(target)
                    todo.append(target)
        problems += [f"{source} reaches {t}" for t in sorted(seen) if not _in(t, pure)]
    return problems


def test_no_import_cycle_in_the_arena() -> None:
    # (Imports under TYPE_CHECKING are annotations, not dependencies: formats names models
    # in its signatures while models lists the formats.)
    assert _cycles(_import_graph("arena", runtime_only=True)) == []


def test_dispatch_is_imported_by_no_other_service() -> None:
    graph = _import_graph("arena")
    services = [n for n in graph if _in(n, "arena.services") and n != "arena.services"]
    assert "arena.services.dispatch" in services and len(services) >= 9
    users = [n for n in services if "arena.services.dispatch" in graph[n]]
    assert users == [], "dispatch calls the other services, never the reverse"


def test_pure_code_imports_no_model_at_run_time() -> None:
    graph = _import_graph("arena", runtime_only=True)
    assert all(name in graph for name in PURE_MODULES)
    # At run time the pure folder imports nothing of the arena outside itself (so no model,
    # service or selector, however indirectly) ...
    assert _impure(graph, PURE) == []
    # ... and nothing of the database.
    for name in (n for n in graph if _in(n, PURE)):
        path = PROJECT_DIR / name.replace(".", "/")
        code = (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).read_text()
        assert "django.db" not in code, f"{name} touches the database"


def test_the_arena_checks_see_a_breach() -> None:
    graph = {
        "arena.services.matches": {"arena.services.dispatch"},
        "arena.services.dispatch": {"arena.services.matches"},
    }
    assert _cycles(graph) == [["arena.services.dispatch", "arena.services.matches"]]
    assert [n for n in graph if "arena.services.dispatch" in graph[n]] == ["arena.services.matches"]
    # pure code reaching a model through a module that looks harmless
    graph = {
        "arena.domain.formats": {"arena.domain.scheduling", "arena.text"},
        "arena.domain.scheduling": set(),
        "arena.text": {"arena.models"},
        "arena.models": set(),
    }
    assert _impure(graph, PURE) == [
        "arena.domain.formats reaches arena.models",
        "arena.domain.formats reaches arena.text",
    ]
