"""The packages depend one way: tasks use the knowledge, never the reverse.

Every ``.py`` file of every package is parsed, and every import of a project module is checked
against :data:`ALLOWED`: module-level imports, imports inside functions, ``TYPE_CHECKING`` blocks
and module names passed as strings (``importlib.import_module("x")`` or a table of module names,
as :mod:`tasks.copa.scorers` keeps) all count. The order is the one ``docs/architecture.md``
draws:

    dpc_errors  ->  causal_mining  ->  cause_effect_graph, train  ->  guided_generation  ->  tasks
                    dpc_decode (knows none of the knowledge packages)  ->  guided_generation

with ``dpc_device`` (``--device``/``--dtype``) beside ``dpc_errors``: it imports only the error
root, and every layer but the engine (which follows ``model.device``) may import it; and
``dpc_files`` (the checks made before any output is written) and ``dpc_inputs`` (the one reader
of input files) likewise, and ``dpc_spark`` (the
Spark runner of committed partitions, above ``dpc_files``).

Within a package the modules import one another one way too: :func:`find_cycles` walks the graph
of module -> the package's modules it imports (counted as above, wherever the import stands) and
names any circle, so an import moved into a function cannot hide one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: package -> the project packages it may import (besides itself).
ALLOWED: dict[str, frozenset[str]] = {
    "dpc_errors": frozenset(),
    # --device/--dtype (torch imported lazily): beside the error root, for every layer above
    "dpc_device": frozenset({"dpc_errors"}),
    # the output-path checks of every command (issue 20): beside the error root too
    "dpc_files": frozenset({"dpc_errors"}),
    # the one reader of input files (issue 60): beside the output checks
    "dpc_inputs": frozenset({"dpc_errors"}),
    # the Spark runner of committed, resumable partitions (issue 43): beside the output checks
    "dpc_spark": frozenset({"dpc_errors", "dpc_files"}),
    "causal_mining": frozenset({"dpc_errors", "dpc_device", "dpc_files", "dpc_inputs", "dpc_spark"}),
    "cause_effect_graph": frozenset({"dpc_errors", "dpc_device", "dpc_files", "dpc_inputs", "dpc_spark", "causal_mining"}),
    "train": frozenset({"dpc_errors", "dpc_device", "dpc_files", "dpc_inputs", "dpc_spark", "causal_mining"}),
    "dpc_decode": frozenset({"dpc_errors"}),
    "guided_generation": frozenset({"dpc_errors", "dpc_device", "dpc_files", "dpc_inputs", "dpc_spark", "causal_mining",
                                    "cause_effect_graph", "train", "dpc_decode"}),
    "tasks": frozenset({"dpc_errors", "dpc_device", "dpc_files", "dpc_inputs", "dpc_spark", "causal_mining",
                        "cause_effect_graph", "train", "dpc_decode", "guided_generation"}),
    # the web page (issue 22): above every package it serves, below the command
    "serve": frozenset({"dpc_errors", "dpc_device", "dpc_files", "dpc_inputs", "dpc_spark", "causal_mining",
                        "cause_effect_graph", "train", "dpc_decode", "guided_generation",
                        "tasks"}),
    "cli": frozenset({"dpc_errors", "dpc_device", "dpc_files", "dpc_inputs", "dpc_spark", "causal_mining",
                      "cause_effect_graph", "train", "dpc_decode", "guided_generation",
                      "tasks", "serve"}),
}
PACKAGES = frozenset(ALLOWED)


def _sources(package: str) -> list[Path]:
    single = ROOT / f"{package}.py"
    if single.is_file():
        return [single]
    return sorted(p for p in (ROOT / package).rglob("*.py") if "default_model" not in p.parts)


def project_imports(source: str) -> list[tuple[int, str]]:
    """(line, top-level package) of every project module ``source`` imports, by statement or by
    name in a string (``"tasks.copa.graph"``).

    >>> project_imports("import os\\nfrom tasks.copa import x\\ndef f():\\n    import train.data")
    [(2, 'tasks'), (4, 'train')]
    >>> project_imports("M = ('cause_effect_graph.store', 'loader')")
    [(1, 'cause_effect_graph')]
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if "." in text and " " not in text and text.split(".")[0] in PACKAGES:
                names = [text]  # a module named by string (importlib)
        for name in names:
            top = name.split(".")[0]
            if top in PACKAGES:
                found.append((node.lineno, top))
    return sorted(set(found))


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_goes_up_the_layers(package: str) -> None:
    wrong = [f"{path.relative_to(ROOT)}:{line} imports {top}"
             for path in _sources(package)
             for line, top in project_imports(path.read_text(encoding="utf-8"))
             if top != package and top not in ALLOWED[package]]
    assert not wrong, "\n".join(wrong)


def test_every_package_is_in_the_table() -> None:
    # A new package must be placed in the order before its imports can be checked.
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")
                if p.parent.name not in {"tests", "benchmarks", "build"}}
    assert packages <= PACKAGES, sorted(packages - PACKAGES)


def test_the_check_catches_an_upward_import(tmp_path: Path) -> None:
    # The graph naming the task's scorer module by string is caught like a real import.
    source = "def f():\n    return importlib.import_module('tasks.copa.graph')\n"
    assert [top for _, top in project_imports(source)] == ["tasks"]
    assert "tasks" not in ALLOWED["cause_effect_graph"]


# ---------------------------------------------------------------------------------------------
# No import circles: within a package, the modules import one another one way.


def module_name(path: Path) -> str:
    """The dotted name of the module in ``path`` (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(name: str, modules: frozenset[str]) -> str | None:
    """The project module ``name`` denotes (``a.b.c`` may be the name ``c`` of module ``a.b``)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imported_modules(source: str, module: str, is_package: bool,
                     modules: frozenset[str]) -> set[str]:
    """The project modules ``source`` (the module ``module``) imports, wherever the import stands:
    module level, inside a function, under ``TYPE_CHECKING``, or a module name in a string.

    >>> mods = frozenset({"p", "p.a", "p.b", "p.c"})
    >>> sorted(imported_modules("from p import b\\ndef f():\\n    from .c import x", "p.a", False, mods))
    ['p.b', 'p.c']
    >>> sorted(imported_modules("M = {'x': 'p.b'}\\nfrom p import name", "p.a", False, mods))
    ['p', 'p.b']
    """
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and "." in str(node.value) and node.value in modules:
            names = [node.value]  # a module named by string (importlib); "x.zip" is not one
        for name in names:
            target = _resolve(name, modules)
            if target is not None and target != module:
                found.add(target)
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    paths = _sources(package)
    modules = frozenset(module_name(p) for p in paths)
    return {module_name(p): imported_modules(p.read_text(encoding="utf-8"), module_name(p),
                                             p.name == "__init__.py", modules)
            for p in paths}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, ..., a]``) through each group of modules that import one another.

    >>> find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    [['a', 'b', 'c', 'a']]
    >>> find_cycles({"a": {"b"}, "b": set()})
    []
    """
    # Tarjan's strongly connected components, then a path round each component of two or more.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles = []
    for component in sorted(components):
        members = set(component)
        start = component[0]
        # breadth-first from start back to start, within the component: a shortest cycle
        paths = {nxt: [start, nxt] for nxt in sorted(graph[start]) if nxt in members}
        queue = list(paths)
        while start not in paths:
            node = queue.pop(0)
            for nxt in sorted(graph[node]):
                if nxt in members and nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    queue.append(nxt)
        cycles.append(paths[start])
    return cycles


def _circle(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules that ``start`` reaches and that reach ``start``: its whole circle."""
    def reach(edges: dict[str, set[str]]) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen
    reverse: dict[str, set[str]] = {}
    for module, targets in graph.items():
        for target in targets:
            reverse.setdefault(target, set()).add(module)
    return reach(graph) & reach(reverse)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_circle(package: str) -> None:
    graph = import_graph(package)
    cycles = find_cycles(graph)
    assert not cycles, "import circles:\n" + "\n".join(
        " -> ".join(cycle) + "\n    (modules in this circle: "
        + ", ".join(sorted(_circle(graph, cycle[0]))) + ")" for cycle in cycles)


def test_the_cycle_check_catches_a_planted_circle(tmp_path: Path, monkeypatch) -> None:
    # Two modules of a made-up package that import each other, one inside a function and one
    # under TYPE_CHECKING: the check must see the circle, or it could never fail.
    package = tmp_path / "planted"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from planted.b import g\n    return g\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                  "    from planted import a\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}.PACKAGES", PACKAGES | {"planted"})
    assert find_cycles(import_graph("planted")) == [["planted.a", "planted.b", "planted.a"]]


def test_every_top_level_module_is_installed():
    """``pyproject.toml`` lists every top-level module the packages import (``py-modules``): one
    left out imports from a checkout, so the tests pass, but not from the installed ``dpc``."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
                 ["tool"]["setuptools"]["py-modules"])
    modules = {p.stem for p in ROOT.glob("*.py")}
    assert modules == listed, modules ^ listed
