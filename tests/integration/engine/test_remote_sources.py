"""Network remotes as sources: an ssh remote naming this machine is a local path and obeys the source roots, however
it is spelled; a non-admin's remote may not point inward, and its clone connects to the address that was
checked."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from kandev.domain.errors import UnprocessableError, ValidationError
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.sources import SourceRequest
from tests.integration.engine.test_source_roots import configured, counts
from tests.support.git_http import bare_from, git_http_server
from tests.support.git_repos import make_repository
from tests.support.users import services_as

TOKEN = "tok-2d8e51c0"


def this_machine_spellings(path: Path) -> list[str]:
    """Ways to name a checkout on this machine as an ssh remote."""
    return [
        f"ssh://localhost{path}",
        f"ssh://127.0.0.1{path}",
        f"ssh://127.1{path}",
        f"ssh://0.0.0.0{path}",
        f"ssh://[::1]{path}",
        f"ssh://[::ffff:127.0.0.1]{path}",
        f"ssh://root@LOCALHOST.:2222{path}",
        f"ssh://local%68ost{path}",  # git decodes the host...
        f"ssh://localhost%2F{str(path)[1:]}",  # ...and an encoded slash ends it
        f"ssh://{socket.gethostname()}{path}",
        f"ssh://buildbox.example{path}",  # a name that resolves to loopback
        f"git@localhost:{path}",
        f"git@buildbox.example:{path}",
    ]


async def add_remote(services: Services, workspace_id: str, url: str) -> Any:
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Remote"))).task
    return await services.workspace_sources.add(task.id, [SourceRequest(type="repository", remote_url=url)])


async def test_an_ssh_remote_naming_this_machine_outside_the_source_roots_is_refused_however_spelled(
    services, db, workspace_id, tmp_path, dns, settings
):
    dns.set("buildbox.example", ["127.0.0.1"])
    outside = make_repository(tmp_path / "outside")
    (tmp_path / "roots").mkdir()
    confined = configured(services, source_roots=str(tmp_path / "roots"))
    for url in this_machine_spellings(outside):
        before = await counts(db)
        with pytest.raises(ValidationError) as refused:
            await add_remote(confined, workspace_id, url)
        assert refused.value.field == "sources[0].remote_url", url
        assert "KANDEV_SOURCE_ROOTS" in refused.value.message, url
        assert await counts(db) == before, url
    assert not (settings.work_path / "repositories").exists()  # nothing was cloned


@pytest.mark.parametrize("path", ["/etc", "data dir"])
async def test_an_ssh_remote_naming_this_machine_is_held_to_the_same_rules_as_a_local_path(
    services, workspace_id, settings, path
):
    # Default roots (auth off): home and the temp dir, where the data dir lies.
    if path == "data dir":
        make_repository(settings.data_path / "checkout")
        path = str(settings.data_path / "checkout")
    with pytest.raises(ValidationError) as refused:
        await add_remote(services, workspace_id, f"ssh://localhost{path}")
    assert refused.value.message == "remote_url is not an allowed source location"


@pytest.mark.parametrize("url", ["git@localhost:project.git", "ssh://localhost/~root/project", "ssh://localhost/~/x"])
async def test_an_ssh_remote_naming_this_machine_must_name_an_absolute_path(services, workspace_id, url):
    with pytest.raises(ValidationError) as refused:
        await add_remote(services, workspace_id, url)
    assert "absolute path on this machine" in refused.value.message


async def test_an_ssh_remote_naming_this_machine_inside_the_roots_passes_and_is_cloned_over_ssh(
    services, workspace_id, tmp_path
):
    inside = make_repository(tmp_path / "roots" / "project")
    confined = configured(services, source_roots=str(tmp_path / "roots"))
    # Nothing listens on port 1: the check passed, and the clone (over ssh, to this machine) could not be made.
    with pytest.raises(UnprocessableError, match="could not be cloned"):
        await add_remote(confined, workspace_id, f"ssh://localhost:1{inside}")


async def non_admin(services: Services, tmp_path: Path, **settings: Any) -> tuple[Services, str]:
    her = await services_as(configured(services, auth="on", source_roots=str(tmp_path), **settings), "mallory")
    return her, (await her.workspaces.create("Mallory's")).id


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1:8420/x.git",
        "https://169.254.169.254/latest.git",
        "https://[::ffff:10.0.0.1]/x.git",
        "https://0x7f000001/x.git",
        "https://git.rebind.example/acme/app.git",
        "ssh://git@10.255.255.7/acme/app.git",
        "git@git.rebind.example:acme/app.git",
        "ssh://git@[fd00::7]:2222/acme/app.git",
    ],
)
async def test_a_non_admins_remote_pointing_inward_is_refused_before_anything_is_cloned(
    services, db, tmp_path, dns, settings, url
):
    dns.set("git.rebind.example", ["10.9.8.7"])
    her, workspace = await non_admin(services, tmp_path)
    before = await counts(db)
    with pytest.raises(ValidationError) as refused:
        await add_remote(her, workspace, url)
    assert refused.value.field == "sources[0].remote_url" and refused.value.fields["reason"] == "inward_address"
    assert await counts(db) == before
    assert not (settings.work_path / "repositories").exists()


async def test_a_clone_connects_to_the_address_checked_not_to_what_the_name_answers_later(
    services, tmp_path, dns, monkeypatch
):
    # An admin allowed the host (a test can only serve on loopback); its clone is still held to the address
    # the check resolved, under its own name for TLS: the name's next answer is a dead address.
    dns.set("git.corp.example", ["127.0.0.1"], ["127.0.0.9"])
    her, workspace = await non_admin(services, tmp_path, mcp_allowed_hosts="git.corp.example")
    with git_http_server(tmp_path / "git-http", {TOKEN}, set(), host="git.corp.example") as server:
        monkeypatch.setenv("GIT_SSL_CAINFO", server.ca_file)
        bare_from(make_repository(tmp_path / "app"), server, "acme/app")
        url = server.repository_url("acme/app").replace("https://", f"https://x:{TOKEN}@")
        added = await add_remote(her, workspace, url)
    assert added.sources[0].added and (Path(her.ctx.settings.work_path) / "repositories").is_dir()
    assert dns.asked == ["git.corp.example"]
    assert server.requests and all(token == TOKEN or token is None for _, _, token in server.requests)
