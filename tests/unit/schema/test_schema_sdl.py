"""The committed schema.graphql is the SDL the code prints; the web client's types are generated from it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]


def load_printer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("print_schema", ROOT / "scripts" / "print_schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_schema_graphql_is_what_the_code_prints() -> None:
    printer = load_printer()
    committed = (ROOT / "schema.graphql").read_text(encoding="utf-8")
    assert committed == printer.render(), (
        "schema.graphql differs from the schema the code defines: run `make schema` "
        "(prints it and regenerates the web client's types), then commit both"
    )


def test_the_check_refuses_a_stale_sdl_and_names_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    printer = load_printer()
    stale = tmp_path / "schema.graphql"
    stale.write_text(printer.render().replace("type Task {", "type Task {\n  removedLater: Int"), encoding="utf-8")
    monkeypatch.setattr(printer, "SDL_PATH", stale)

    assert printer.main(["--check"]) == 1
    assert "make schema" in capsys.readouterr().err


def test_printing_writes_the_sdl_the_check_then_accepts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    printer = load_printer()
    target = tmp_path / "schema.graphql"
    monkeypatch.setattr(printer, "SDL_PATH", target)
    monkeypatch.setattr(printer, "LIMITS_PATH", tmp_path / "limits.ts")

    assert printer.main([]) == 0
    printed = target.read_text(encoding="utf-8")
    assert "type Query {" in printed and "type Mutation {" in printed and "type Subscription {" in printed
    assert printer.main(["--check"]) == 0


def test_the_web_clients_limits_are_the_declared_ones() -> None:
    printer = load_printer()
    committed = (ROOT / "frontend" / "src" / "api" / "limits.ts").read_text(encoding="utf-8")
    assert committed == printer.render_limits(), "frontend/src/api/limits.ts is stale: run `make schema`"
    assert '"title": {\n      "maxLength": 200' in committed  # CreateTaskInput.title, as the domain holds it
