"""No import cycle in kandev/ or frontend/src/, and no function-level import of a kandev module hiding one: a
cycle fails with its path, a dodged import with its place. Only imports that keep start-up fast may sit in a
function, each marked `# lazy: <why>` on its line or the line above."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import kandev

PACKAGE = Path(kandev.__file__).parent
FRONTEND = PACKAGE.parent / "frontend" / "src"
_TS_IMPORT = re.compile(r"^\s*(import|export)\s+(?!type\b)[^'\"]*?from\s+['\"](\.[^'\"]+)['\"]", re.M)


def python_modules(root: Path) -> dict[str, Path]:
    modules = {}
    for path in root.rglob("*.py"):
        if "migrations" in path.relative_to(root).parts:
            continue  # scripts Alembic runs, not modules of the package
        parts = ("kandev", *path.relative_to(root).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, module: str, is_package: bool) -> Iterator[tuple[ast.AST, str, bool]]:
    """(node, imported kandev module, inside a function) for every import that runs (TYPE_CHECKING left out)."""

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.AST, str, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                yield from walk(ast.Module(body=child.orelse, type_ignores=[]), in_function)
                continue
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                yield from ((child, a.name, in_function) for a in child.names if a.name.startswith("kandev"))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = module.split(".")
                    anchor = anchor if is_package else anchor[:-1]
                    anchor = anchor[: len(anchor) - child.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                if base.startswith("kandev"):
                    yield from ((child, f"{base}.{a.name}", in_function) for a in child.names)
            yield from walk(child, inner)

    yield from walk(tree, False)


def python_graph(root: Path = PACKAGE) -> tuple[dict[str, set[str]], list[str]]:
    """Module-level import edges between kandev modules, and the function-level imports not marked lazy."""
    modules = python_modules(root)
    edges: dict[str, set[str]] = {name: set() for name in modules}
    dodges: list[str] = []
    for name, path in modules.items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node, target, in_function in _imports(ast.parse(text), name, path.name == "__init__.py"):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if not target or target == name:
                continue
            if not in_function:
                edges[name].add(target)
                continue
            line = getattr(node, "lineno", 0)
            if not any("# lazy:" in lines[i] for i in (line - 1, line - 2) if 0 <= i < len(lines)):
                dodges.append(f"{path.relative_to(root.parent)}:{line} imports {target} inside a function")
    return edges, sorted(set(dodges))


def typescript_graph(root: Path = FRONTEND) -> dict[str, set[str]]:
    """Relative imports between the web client's files (`import type` left out: it never runs)."""
    files = {p.resolve(): p for p in root.rglob("*") if p.suffix in (".ts", ".tsx") and "gql" not in p.parts}
    edges: dict[str, set[str]] = {}
    for path in files.values():
        name = str(path.relative_to(root))
        edges[name] = set()
        for _, spec in _TS_IMPORT.findall(path.read_text(encoding="utf-8")):
            base = (path.parent / spec).resolve()
            suffixed = (Path(f"{base}{suffix}") for suffix in (".ts", ".tsx", "/index.ts", "/index.tsx"))
            for candidate in (base, *suffixed):
                if candidate in files:
                    edges[name].add(str(files[candidate].relative_to(root)))
                    break
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected group of more than one node, as a path that closes on its first node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges.get(node, ())):
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
                found.append(_path(sorted(group), edges))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _path(group: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A cycle through the group's first member, found by a breadth-first walk inside the group."""
    start, members = group[0], set(group)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for other in sorted(edges.get(node, ()) & members):
            if other == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if other not in previous:
                previous[other] = node
                frontier.append(other)
    return group


def test_kandev_has_no_import_cycle() -> None:
    found = cycles(python_graph()[0])
    assert not found, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in found)


def test_no_function_level_import_hides_one_unless_marked_lazy() -> None:
    dodges = python_graph()[1]
    assert not dodges, "function-level imports (mark a start-up one '# lazy: <why>'):\n" + "\n".join(dodges)


def test_the_web_client_has_no_import_cycle() -> None:
    found = cycles(typescript_graph())
    assert not found, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in found)


def test_the_checker_names_a_cycle_by_its_path_and_a_dodged_import_by_its_place(tmp_path: Path) -> None:
    root = tmp_path / "kandev"
    (root / "domain").mkdir(parents=True)
    (root / "domain" / "a.py").write_text("from kandev.domain.b import g\n")
    (root / "domain" / "b.py").write_text("from kandev.domain import c\ndef g():\n    from kandev.domain.a import f\n")
    lazy = "def h():\n    import kandev.domain.b  # lazy: test\n"
    (root / "domain" / "c.py").write_text("import kandev.domain.a\n" + lazy)
    edges, dodges = python_graph(root)
    assert cycles(edges) == [["kandev.domain.a", "kandev.domain.b", "kandev.domain.c", "kandev.domain.a"]]
    assert dodges == ["kandev/domain/b.py:3 imports kandev.domain.a inside a function"]
