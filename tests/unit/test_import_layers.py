"""The import graph reads top-down: no package imports a layer above it, no two packages import each
other in a circle, and the domain reaches none of the adapters (DESIGN.md section 2)."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import kandev

ROOT = Path(kandev.__file__).parent

# Top-down (DESIGN.md section 2). The CLI and the app are the composition roots; the edges (HTTP, REST, MCP)
# and the jobs are the transports; `wiring` builds the domain's services over this process's platform and
# adapters for them (AppState, provide_services); then the GraphQL schema and resolvers, the domain and its
# tables. Siblings may import each other as long as no cycle forms. `platform` (settings, database, event bus,
# Redis, embedded services, supervisor, clock...) and the runtime are neutral, below every layer; `adapters`
# implement the domain's ports and only the composition roots and `wiring` import them. Every import counts,
# also one inside a function or under TYPE_CHECKING.
LAYERS: list[set[str]] = [
    {"cli", "app"},
    {"edge", "jobs"},
    {"wiring"},
    {"graphql"},
    {"domain"},
    {"models"},
]
# What the domain must never reach, even through a neutral module: modules by prefix.
ADAPTERS = (
    "kandev.adapters",
    "kandev.edge",
    "kandev.jobs",
    "kandev.graphql",
    "kandev.runtime",
    "kandev.wiring",
    "kandev.app",
    "kandev.cli",
    "kandev.platform.metrics",
)
COMPOSITION = {"cli", "app", "wiring", "adapters"}


def module_name(path: Path, root: Path) -> str:
    parts = ("kandev", *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """Every kandev module `module` imports, anywhere in it (function-level and TYPE_CHECKING included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((a.name, node.lineno) for a in node.names if a.name.startswith("kandev"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            if base == "kandev":
                yield from ((f"kandev.{a.name}", node.lineno) for a in node.names)
            elif base.startswith("kandev."):
                yield base, node.lineno


def import_graph(root: Path = ROOT) -> dict[str, dict[str, int]]:
    """module -> {imported kandev module: line}, over the package (migrations are scripts, not layers)."""
    graph: dict[str, dict[str, int]] = {}
    for path in sorted(root.rglob("*.py")):
        if "migrations" in path.relative_to(root).parts:
            continue
        module = module_name(path, root)
        edges = graph.setdefault(module, {})
        for target, line in imported(ast.parse(path.read_text()), module, path.name == "__init__.py"):
            edges.setdefault(target, line)
    return graph


def package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def level(name: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if name in layer), None)


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    found = []
    for module, edges in graph.items():
        here = level(package(module))
        for target, line in edges.items():
            there = level(package(target))
            if here is not None and there is not None and there < here:
                found.append(f"{module}:{line} imports {target}, a layer above it")
    return found


def package_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Groups of layered packages (and the runtime) that import each other in a circle (Tarjan's algorithm)."""
    checked = set().union(*LAYERS, {"runtime"})
    edges: dict[str, set[str]] = defaultdict(set)
    for module, targets in graph.items():
        for target in targets:
            if package(module) != package(target) and {package(module), package(target)} <= checked:
                edges[package(module)].add(package(target))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return cycles


def domain_reaches_adapters(graph: dict[str, dict[str, int]]) -> list[str]:
    """Imports of an adapter by the domain, or by a neutral module (events, config...) the domain reaches."""
    reached = {m for m in graph if package(m) == "domain"}
    frontier = sorted(reached)
    found = set()
    while frontier:
        module = frontier.pop()
        for target, line in graph[module].items():
            if target.startswith(ADAPTERS):
                found.add(f"{module}:{line} imports {target}")
            elif target in graph and target not in reached:
                reached.add(target)
                frontier.append(target)
    return sorted(found)


def adapter_importers(graph: dict[str, dict[str, int]]) -> list[str]:
    """Imports of an adapter by anything but the composition roots, `wiring` and the adapters themselves."""
    return sorted(
        f"{module}:{line} imports {target}"
        for module, edges in graph.items()
        for target, line in edges.items()
        if package(target) == "adapters" and package(module) not in COMPOSITION
    )


def test_no_package_imports_a_layer_above_it() -> None:
    assert upward_imports(import_graph()) == []


def test_no_two_packages_import_each_other_in_a_circle() -> None:
    assert package_cycles(import_graph()) == []


def test_the_domain_reaches_no_adapter_even_through_a_neutral_module() -> None:
    assert domain_reaches_adapters(import_graph()) == []


def test_only_the_composition_roots_import_the_adapters() -> None:
    assert adapter_importers(import_graph()) == []


def test_the_checker_sees_a_layer_importing_one_above_it(tmp_path: Path) -> None:
    (tmp_path / "domain").mkdir()
    (tmp_path / "domain" / "tasks.py").write_text("def f():\n    from kandev.jobs.dispatch import WAITING\n")
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "dispatch.py").write_text("from kandev.domain.tasks import f\n")
    (tmp_path / "graphql").mkdir()
    (tmp_path / "graphql" / "types.py").write_text("import kandev.adapters.github.client\n")
    graph = import_graph(tmp_path)
    assert upward_imports(graph) == ["kandev.domain.tasks:2 imports kandev.jobs.dispatch, a layer above it"]
    assert package_cycles(graph) == [["domain", "jobs"]]
    assert domain_reaches_adapters(graph) == ["kandev.domain.tasks:2 imports kandev.jobs.dispatch"]
    assert adapter_importers(graph) == ["kandev.graphql.types:1 imports kandev.adapters.github.client"]
