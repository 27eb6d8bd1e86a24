"""The project's shape: no import cycles (function-level imports included), the engine
never imports the evaluation or a business package, modules stay small."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("deepagent", "context_loader", "rag_cases", "business", "eval")
MAX_MODULE_LINES = 400
MAX_ENGINE_FUNCTION_LINES = 60


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden |= {id(n) for n in ast.walk(node)}
    return hidden


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    for alias in node.names:
        yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base


def _known(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> nx.DiGraph[str]:
    """Every import between project modules, wherever it stands in the module (imports
    under ``if TYPE_CHECKING`` aside: they never run)."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hidden = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in hidden:
                continue
            for target in _targets(node, name, path.name == "__init__.py"):
                known = _known(target)
                if known is not None and known != name and not name.startswith(known + "."):
                    graph.add_edge(name, known)
    return graph


def test_no_import_cycles() -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == [], f"import cycles: {cycles}"


def test_the_engine_imports_neither_the_evaluation_nor_a_business_package() -> None:
    graph = import_graph()
    wrong = sorted(
        (a, b)
        for a, b in graph.edges
        if a.startswith("deepagent") and b.split(".")[0] in ("eval", "business")
    )
    assert wrong == []


def test_the_checker_sees_a_cycle_and_a_function_level_import(tmp_path: Path) -> None:
    graph = nx.DiGraph([("a", "b"), ("b", "a")])
    assert [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    tree = ast.parse("def f():\n    from deepagent import agent\n")
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert list(_targets(imports[0], "x", False)) == ["deepagent.agent"]


def test_modules_are_small() -> None:
    long = {
        name: n
        for name, path in MODULES.items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_engine_functions_are_short() -> None:
    long = {}
    for name, path in MODULES.items():
        if not name.startswith("deepagent"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_ENGINE_FUNCTION_LINES:
                    long[f"{name}.{node.name}"] = size
    assert long == {}
