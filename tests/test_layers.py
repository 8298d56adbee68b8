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
``dpc_files`` (the checks made before any output is written) likewise.
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
    "causal_mining": frozenset({"dpc_errors", "dpc_device", "dpc_files"}),
    "cause_effect_graph": frozenset({"dpc_errors", "dpc_device", "dpc_files", "causal_mining"}),
    "train": frozenset({"dpc_errors", "dpc_device", "dpc_files", "causal_mining"}),
    "dpc_decode": frozenset({"dpc_errors"}),
    "guided_generation": frozenset({"dpc_errors", "dpc_device", "dpc_files", "causal_mining",
                                    "cause_effect_graph", "train", "dpc_decode"}),
    "tasks": frozenset({"dpc_errors", "dpc_device", "dpc_files", "causal_mining",
                        "cause_effect_graph", "train", "dpc_decode", "guided_generation"}),
    # the web page (issue 22): above every package it serves, below the command
    "serve": frozenset({"dpc_errors", "dpc_device", "dpc_files", "causal_mining",
                        "cause_effect_graph", "train", "dpc_decode", "guided_generation",
                        "tasks"}),
    "cli": frozenset({"dpc_errors", "dpc_device", "dpc_files", "causal_mining",
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
