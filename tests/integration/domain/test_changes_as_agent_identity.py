"""With agents running as their own OS identity (KANDEV_AGENT_UIDS, as root), a task's changes are read by git
running as that identity, in the worktree handed over to it: its own files show, a hard link to a file only the
server may read does not, and the changes can be discarded the same way."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev.domain.access.agent_identities import task_agent_identity
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.domain.workspace.workdirs import prepare_workdir
from kandev.models import Task
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.git_repos import make_repository

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="agents as other identities need root (CI runs as root)")

SECRET = "only the server may read this"
CHANGES = """query($id: ID!) { task(id: $id) { changeStats { files } changes { repositories { note
  files { nodes { path status hunks { lines { kind text } } } } } } } }"""


@pytest.fixture
def base() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="kandev-changes-identity-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def settings(database_url: str, redis_url: str, base: Path) -> Settings:
    return settings_for(database_url, redis_url, base, agent_uids="61970-61979")


async def test_changes_are_read_with_the_agents_identity_rights(gql, services, base, workspace_id):
    repository = await services.repositories.create(workspace_id, "repo", str(make_repository(base / "repo")))
    task_id = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="As agent", repositories=[RepositoryChoice(repository.id)])
        )
    ).task.id
    async with services.ctx.unit_of_work() as uow:
        task = await uow.db.get(Task, task_id)
        owner = await task_agent_identity(uow.db, services.ctx.settings, task)
        assert owner is not None
        folder = await prepare_workdir(uow.db, services.ctx.settings.work_path, task, task.executor_profile_id, owner)
    assert folder.stat().st_uid == owner.uid
    subprocess.run(
        ["/bin/sh", "-c", "printf 'mine\\n' > theirs.txt && printf 'hello\\nagain\\n' > README"],
        cwd=folder,
        user=owner.uid,
        group=owner.gid,
        extra_groups=[],
        check=True,
    )
    secret = base / "server-only.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    os.link(secret, folder / "hardlink.txt")

    [repo] = (await gql(CHANGES, id=task_id))["task"]["changes"]["repositories"]
    files = {f["path"]: f for f in repo["files"]["nodes"]}
    assert repo["note"] is None and set(files) == {"README", "theirs.txt"}
    assert [(x["kind"], x["text"]) for x in files["theirs.txt"]["hunks"][0]["lines"]] == [("ADD", "mine")]
    assert SECRET not in str(repo)

    discarded = await services.reviews.discard(task_id, repository.id, ["README"], None)
    assert discarded == ["README"] and (folder / "README").read_text() == "hello\n"
    assert (folder / "README").stat().st_uid == owner.uid  # git wrote it as the agent's identity
    assert (await gql(CHANGES, id=task_id))["task"]["changeStats"] == {"files": 1}
