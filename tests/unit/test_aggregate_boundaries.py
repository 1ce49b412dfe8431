"""Aggregates meet only through the domain's kernel (kandev/domain/*.py: errors, context, records, events,
ports, feeds, scope...) and each other's front door (`<aggregate>.service`); every other reach into another
aggregate's modules is an internal crossing (DESIGN.md section 2). The crossings still left are listed in
aggregate_crossings.txt: a new one fails here with its place, and one removed must leave the list, so the
list only shrinks."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_import_layers import import_graph

LISTED = Path(__file__).with_name("aggregate_crossings.txt")


def aggregate(module: str, packages: set[str]) -> str | None:
    """The aggregate a domain module belongs to, or that a package import names (None for the kernel and
    outside the domain)."""
    parts = module.split(".")
    if parts[:2] != ["kandev", "domain"] or len(parts) < 3:
        return None
    return parts[2] if len(parts) > 3 or parts[2] in packages else None


def internal_crossings(graph: dict[str, dict[str, int]]) -> dict[str, int]:
    """ "importer -> imported" for each import of another aggregate's module that is not its service."""
    packages = {m.split(".")[2] for m in graph if m.startswith("kandev.domain.") and m.count(".") > 2}
    found = {}
    for module, edges in graph.items():
        here = aggregate(module, packages)
        if here is None:
            continue
        for target, line in edges.items():
            there = aggregate(target, packages)
            if there is not None and there != here and target != f"kandev.domain.{there}.service":
                found[f"{module} -> {target}"] = line
    return found


def listed() -> set[str]:
    lines = LISTED.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_no_aggregate_reaches_into_another_beyond_the_crossings_still_listed() -> None:
    crossings = internal_crossings(import_graph())
    new = sorted(f"{crossing} (line {line})" for crossing, line in crossings.items() if crossing not in listed())
    assert new == [], "new internal crossings: react to a domain event, use the kernel or the aggregate's service"


def test_a_crossing_removed_leaves_the_list() -> None:
    gone = sorted(listed() - set(internal_crossings(import_graph())))
    assert gone == [], f"no longer crossings: remove them from {LISTED.name}"


def test_the_checker_tells_a_front_door_and_the_kernel_from_an_internal_module(tmp_path: Path) -> None:
    domain = tmp_path / "domain"
    for folder in ("tasks", "sessions"):
        (domain / folder).mkdir(parents=True)
    (domain / "errors.py").write_text("")
    (domain / "sessions" / "service.py").write_text("")
    (domain / "sessions" / "prompts.py").write_text("")
    (domain / "tasks" / "service.py").write_text(
        "from kandev.domain.errors import E\nfrom kandev.domain.sessions.service import S\n"
        "from kandev.domain.sessions.prompts import enqueue\nfrom kandev.domain.tasks.other import x\n"
        "from kandev.domain.sessions import prompts\n"
    )
    crossings = internal_crossings(import_graph(tmp_path))
    assert crossings == {
        "kandev.domain.tasks.service -> kandev.domain.sessions.prompts": 3,
        "kandev.domain.tasks.service -> kandev.domain.sessions": 5,
    }
