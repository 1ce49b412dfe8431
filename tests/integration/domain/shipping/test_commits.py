"""commitTaskChanges: the task's changes committed on its branch as the person (their account's name and email,
asked for once) with the agent named in a trailer; refused while a turn runs, with nothing to commit, or before the
person has a commit identity; and git run in the worktree honours nothing the worktree or repository planted."""

from __future__ import annotations

import stat
from typing import Any

from sqlalchemy import select

from kandev.models import Session, Turn
from kandev.models.base import new_id, utcnow
from tests.support.git_repos import git, make_repository
from tests.support.shipping import COMMIT, EMAIL, NAME, ref, shippable_task, show, task_branch, with_identity


async def commit(gql: Any, task_id: str, **fields: Any) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(COMMIT, input={"taskId": task_id, **fields}))["commitTaskChanges"]
    return found


async def test_a_commit_is_the_persons_with_the_agent_in_a_trailer_on_the_tasks_branch(
    services, gql, workspace_id, tmp_path
):
    await with_identity(gql)
    repository = make_repository(tmp_path / "repo")
    task_id, folder = await shippable_task(services, workspace_id, repository)
    (folder / "app.py").write_text("print('hi')\n")
    (folder / "README").write_text("hello\nworld\n")
    found = await commit(gql, task_id, message="Greet the world")
    assert found["__typename"] == "CommitPayload", found
    branch = await task_branch(services, task_id)
    sha = found["commit"]["sha"]
    assert ref(repository, f"refs/heads/{branch}") == sha
    assert show(repository, sha, "%an <%ae>|%cn <%ce>") == f"{NAME} <{EMAIL}>|{NAME} <{EMAIL}>"
    body = show(repository, sha, "%B")
    assert body.startswith("Greet the world\n\nAgent: ")
    assert "Co-authored-by: " in body
    assert git(repository, "show", "--name-only", "--format=", sha).split() == ["README", "app.py"]
    assert git(folder, "status", "--porcelain") == ""
    # main is untouched.
    assert show(repository, "main", "%s") == "init"


async def test_only_the_paths_given_are_committed(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    task_id, folder = await shippable_task(services, workspace_id, make_repository(tmp_path / "repo"))
    (folder / "a.txt").write_text("a\n")
    (folder / "b.txt").write_text("b\n")
    found = await commit(gql, task_id, message="Only a", paths=["a.txt"])
    assert found["__typename"] == "CommitPayload", found
    assert git(folder, "show", "--name-only", "--format=", "HEAD").split() == ["a.txt"]
    assert git(folder, "status", "--porcelain") == "?? b.txt"


async def test_nothing_to_commit_and_no_identity_are_conflicts_that_change_nothing(
    services, gql, workspace_id, tmp_path
):
    repository = make_repository(tmp_path / "repo")
    task_id, folder = await shippable_task(services, workspace_id, repository)
    (folder / "x.txt").write_text("x\n")
    refused = await commit(gql, task_id, message="x")
    assert (refused["code"], refused["fields"]["reason"]) == ("CONFLICT", "identity_missing")
    await with_identity(gql)
    branch = await task_branch(services, task_id)
    before = ref(repository, f"refs/heads/{branch}")
    (folder / "x.txt").unlink()
    refused = await commit(gql, task_id, message="x")
    assert (refused["code"], refused["fields"]["reason"]) == ("CONFLICT", "nothing_to_commit")
    assert ref(repository, f"refs/heads/{branch}") == before
    amend = await commit(gql, task_id, message="x", amend=True)
    assert amend["fields"]["reason"] == "nothing_to_amend"


async def test_a_commit_while_a_turn_runs_is_refused(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    task_id, folder = await shippable_task(services, workspace_id, make_repository(tmp_path / "repo"))
    (folder / "x.txt").write_text("x\n")
    async with services.ctx.unit_of_work() as uow:
        session = Session(id=new_id(), task_id=task_id, state="RUNNING", created_at=utcnow())
        uow.db.add(session)
        await uow.db.flush()
        uow.db.add(Turn(id=new_id(), session_id=session.id, seq=1, state="RUNNING", started_at=utcnow()))
    refused = await commit(gql, task_id, message="x")
    assert (refused["code"], refused["fields"]["reason"]) == ("CONFLICT", "turn_running")
    assert git(folder, "status", "--porcelain") == "?? x.txt"


async def test_nothing_the_worktree_or_repository_planted_runs_when_committing(services, gql, workspace_id, tmp_path):
    """Hooks, a filter driver, fsmonitor, an editor, signing with a hostile gpg.program, a worktree-only config:
    the commit is made and not one of them ran."""
    await with_identity(gql)
    repository = make_repository(tmp_path / "repo")
    task_id, folder = await shippable_task(services, workspace_id, repository)
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    evil.chmod(evil.stat().st_mode | stat.S_IEXEC)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "commit-msg", "prepare-commit-msg", "post-commit", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        (hooks / hook).chmod(0o755)
    for key, value in (
        ("core.hooksPath", str(hooks)),
        ("core.fsmonitor", str(evil)),
        ("core.editor", str(evil)),
        ("commit.gpgSign", "true"),
        ("gpg.program", str(evil)),
        ("filter.evil.clean", str(evil)),
        ("filter.evil.smudge", str(evil)),
        ("filter.evil.required", "true"),
        ("core.pager", str(evil)),
        ("extensions.worktreeConfig", "true"),
    ):
        git(repository, "config", key, value)
    # A worktree-only config too (the agent's own, beside its worktree's folder in the repository).
    git(folder, "config", "--worktree", "diff.external", str(evil))
    (folder / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    (folder / "note.txt").write_text("plain\n")
    found = await commit(gql, task_id, message="Planted")
    assert found["__typename"] == "CommitPayload", found
    assert not marker.exists(), marker.read_text()
    sha = found["commit"]["sha"]
    # Stored as written (no clean filter), unsigned.
    assert git(repository, "show", f"{sha}:note.txt") == "plain"
    assert "gpgsig" not in git(repository, "cat-file", "commit", sha)


async def test_an_agent_profile_named_in_the_trailer_is_the_tasks(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    task_id, folder = await shippable_task(services, workspace_id, make_repository(tmp_path / "repo"))
    (folder / "a.txt").write_text("a\n")
    found = await commit(gql, task_id, message="A")
    async with services.ctx.read() as db:
        assert await db.scalar(select(Session.id).where(Session.task_id == task_id)) is None
    # No session yet: the workspace's default profile is the agent named.
    assert "\nAgent: Scripted\n" in found["commit"]["message"]
