"""`kandev export automations WORKSPACE [--zip] [--output PATH]`: the bytes the REST export answers, the
workspace named by id or by name."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from kandev.cli import app
from tests.integration.rest.conftest import rest_client
from tests.integration.rest.test_automation_export_endpoints import export_url, furnish


@pytest.fixture
async def http(settings, db, bus, redis_url, principal, jobs) -> AsyncIterator[httpx.AsyncClient]:
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as client:
        yield client


@pytest.fixture
def kandev(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Runs `kandev ...` (in a thread: the CLI runs its own event loop) on the test's database, without Redis;
    returns (exit code, stdout bytes, stderr)."""
    for name in ("KANDEV_REDIS_URL", "KANDEV_AUTH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KANDEV_DATABASE_URL", database_url)
    monkeypatch.setenv("KANDEV_DATA_DIR", str(tmp_path / "cli-data"))

    async def run(*args: str) -> tuple[int, bytes, str]:
        done = await asyncio.to_thread(CliRunner().invoke, app, list(args))
        return done.exit_code, done.stdout_bytes, done.stderr

    return run


async def test_the_cli_prints_the_rest_yaml_for_a_workspace_given_by_id_or_name(
    kandev, http, services, db, workspace_id, tmp_path
):
    await furnish(services, db, workspace_id, tmp_path)
    served = (await http.get(export_url(workspace_id))).content
    name = (await services.workspaces.get(workspace_id)).name

    for reference in (workspace_id, name):
        code, out, err = await kandev("export", "automations", reference)
        assert (code, err) == (0, "")
        assert out == served


async def test_the_cli_writes_the_rest_zip_to_a_file(kandev, http, services, db, workspace_id, tmp_path):
    await furnish(services, db, workspace_id, tmp_path)
    target = tmp_path / "out" / "automations.zip"
    target.parent.mkdir()

    code, out, _ = await kandev("export", "automations", workspace_id, "--zip", "--output", str(target))

    assert code == 0 and out == b""
    assert target.read_bytes() == (await http.get(export_url(workspace_id, zipped=True))).content
    code, out, _ = await kandev("export", "automations", workspace_id, "--zip")
    assert code == 0 and out == target.read_bytes()  # stdout is no terminal here


async def test_an_unknown_workspace_or_a_name_two_workspaces_share_is_refused(kandev, services, workspace_id):
    code, out, err = await kandev("export", "automations", "no-such-workspace")
    assert code == 2 and out == b"" and "workspace 'no-such-workspace' not found" in err

    await services.workspaces.create("Twins")
    await services.workspaces.create("Twins")
    code, out, err = await kandev("export", "automations", "Twins")
    assert code == 2 and out == b"" and "2 workspaces have this name" in err


def test_the_help_lists_the_export_command():
    runner = CliRunner()
    assert "export" in runner.invoke(app, ["--help"]).stdout
    shown = runner.invoke(app, ["export", "automations", "--help"]).stdout
    assert all(word in shown for word in ("WORKSPACE", "--zip", "--output"))
