"""Shipping's git work, done where the worktree (commit, update) or the repository (push, a local merge) is: on
this process when it reaches them, else by the worker holding the worktree (kandev.jobs.reads answers its
requests). Each function reads what it needs from the database itself, so a worker answering a replica trusts
nothing from the request but ids and the caller's choices."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.changes.places import common_dir
from kandev.domain.changes.service import error_answer
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, DomainError, UnprocessableError
from kandev.domain.ports import GitCredential
from kandev.domain.reviews.follow import refresh_changes
from kandev.domain.shipping import git_ship
from kandev.domain.shipping.git_ship import GitIdentity, PushOutcome, UpdateOutcome
from kandev.domain.shipping.targets import ShipTarget, load_target
from kandev.domain.workspace import git_credentials as creds
from kandev.domain.workspace.source_roots import confine_remote, local_remote
from kandev.models import Task


def _checkout_place(target: ShipTarget) -> Any:
    if target.located.checkout is None:
        raise ConflictError(target.located.note or "the task's worktree is not on this machine", reason="no_worktree")
    return target.located.checkout.place


def _common(target: ShipTarget) -> str:
    found = common_dir(target.repository_path)
    if found is None:
        raise ConflictError("the repository is not on this machine", reason="no_repository")
    return found


def reaches(target: ShipTarget, needs_worktree: bool) -> bool:
    """Whether this process can do the work itself."""
    if needs_worktree:
        return target.located.checkout is not None
    return common_dir(target.repository_path) is not None


async def remote_credential(
    db: AsyncSession, ctx: ServiceContext, target: ShipTarget, url: str
) -> GitCredential | None:
    """The credential git needs for `url`: a connected code host's for an https remote, none for a local one
    (which must still lie under the source roots); ConflictError for a remote Kandev may not push to."""
    if local_remote(url) is not None:
        await asyncio.to_thread(confine_remote, ctx.settings, url, "remote")
        return None
    host = creds.host_of(url)
    if host is None:
        return None  # ssh: the server's own ssh setup decides
    credential = await creds.credential_for(db, ctx.settings, target.workspace_id, host)
    if credential is None:
        raise ConflictError(
            f"the workspace has no code-host connection for {host}, so Kandev can not push there",
            reason="not_connected",
        )
    return credential


async def commit_here(
    ctx: ServiceContext, target: ShipTarget, message: str, paths: list[str] | None, amend: bool, who: GitIdentity
) -> str:
    place = git_ship.ship_place(_checkout_place(target), who)
    sha = await asyncio.to_thread(git_ship.commit, place, target.base_branch, message, paths, amend)
    await refresh_changes(ctx, target.task_id)
    return sha


async def update_here(ctx: ServiceContext, target: ShipTarget, strategy: str, who: GitIdentity) -> UpdateOutcome:
    place = git_ship.ship_place(_checkout_place(target), who)
    common = _common(target)
    if target.remote_url:
        async with ctx.read() as db:
            credential = await remote_credential(db, ctx, target, target.remote_url)
        onto = await asyncio.to_thread(git_ship.fetch_branch, common, target.remote_url, target.base_branch, credential)
        if onto is None:
            raise UnprocessableError(
                f"the remote has no branch {target.base_branch} any more (deleted upstream?)", reason="base_missing"
            )
        await asyncio.to_thread(git_ship.set_ref, common, f"refs/remotes/origin/{target.base_branch}", onto)
    else:
        onto = await asyncio.to_thread(git_ship.branch_head, common, target.base_branch)
        if onto is None:
            raise UnprocessableError(f"the repository has no branch {target.base_branch}", reason="base_missing")
    outcome = await asyncio.to_thread(git_ship.update, place, onto, target.base_branch, strategy)
    await refresh_changes(ctx, target.task_id)
    return outcome


async def push_here(
    ctx: ServiceContext, target: ShipTarget, force_with_lease: bool, last_pushed: str | None
) -> PushOutcome:
    if not target.push_url or not target.push_branch or not target.branch:
        raise ConflictError("the repository has no remote to push the task's branch to", reason="no_remote")
    common = _common(target)
    sha = await asyncio.to_thread(git_ship.branch_head, common, target.branch)
    if sha is None:
        raise ConflictError("the task's branch has no commit yet: commit first", reason="nothing_to_push")
    async with ctx.read() as db:
        credential = await remote_credential(db, ctx, target, target.push_url)
    lease = None
    if force_with_lease:
        lease = last_pushed
        if lease is None:  # never pushed from Kandev: the remote as it is now is what may be replaced
            lease = (
                await asyncio.to_thread(git_ship.remote_head, common, target.push_url, target.push_branch, credential)
                or ""
            )
    return await asyncio.to_thread(git_ship.push, common, target.push_url, sha, target.push_branch, credential, lease)


async def merge_local_here(ctx: ServiceContext, target: ShipTarget, who: GitIdentity) -> str:
    """Merge the task's branch into its base: on the repository's local remote when it has one (the merge commit
    pushed as a fast-forward of the base there), else in the repository itself when the base is not checked out."""
    if not target.branch:
        raise ConflictError("the task's branch has no commit yet", reason="nothing_to_merge")
    common = _common(target)
    head = await asyncio.to_thread(git_ship.branch_head, common, target.branch)
    if head is None:
        raise ConflictError("the task's branch has no commit yet", reason="nothing_to_merge")
    base_branch = target.base_branch
    message = f"Merge {target.branch} into {base_branch}\n\n{target.title}\n"
    remote = target.remote_url
    if remote:
        async with ctx.read() as db:
            credential = await remote_credential(db, ctx, target, remote)
        base = await asyncio.to_thread(git_ship.fetch_branch, common, remote, base_branch, credential)
        if base is None:
            raise UnprocessableError(f"the remote has no branch {base_branch} any more", reason="base_missing")
        merged = await asyncio.to_thread(git_ship.merge_commit, common, base, head, message, who)
        if merged is None:
            raise ConflictError(
                f"the task's branch conflicts with {base_branch}: update the branch and resolve the conflicts first",
                reason="merge_conflict",
            )
        if merged == base:
            raise ConflictError(
                f"{base_branch} already has every commit of the task's branch", reason="nothing_to_merge"
            )
        await asyncio.to_thread(git_ship.push, common, remote, merged, base_branch, credential, None)
        await asyncio.to_thread(git_ship.set_ref, common, f"refs/remotes/origin/{base_branch}", merged)
        return merged
    base = await asyncio.to_thread(git_ship.branch_head, common, base_branch)
    if base is None:
        raise UnprocessableError(f"the repository has no branch {base_branch}", reason="base_missing")
    if await asyncio.to_thread(git_ship.branch_checked_out, common, base_branch):
        raise ConflictError(
            f"{base_branch} is checked out in the repository, so Kandev will not move it under your feet: merge there",
            reason="base_checked_out",
        )
    merged = await asyncio.to_thread(git_ship.merge_commit, common, base, head, message, who)
    if merged is None:
        raise ConflictError(
            f"the task's branch conflicts with {base_branch}: update the branch and resolve the conflicts first",
            reason="merge_conflict",
        )
    if not await asyncio.to_thread(git_ship.set_ref, common, f"refs/heads/{base_branch}", merged, base):
        raise ConflictError(f"{base_branch} moved while merging: try again", reason="base_moved")
    return merged


async def answer(ctx: ServiceContext, request: dict[str, Any]) -> dict[str, Any]:
    """A replica's shipping request, on the worker holding the task's worktree."""
    try:
        async with ctx.read() as db:
            task = await db.get(Task, request["task_id"])
            if task is None or task.deleted_at is not None:
                return {"error": "the task is gone"}
            target = await load_target(ctx, db, task, request["repository_id"])
        who = GitIdentity(**request["who"]) if request.get("who") else None
        action = request["action"]
        if action == "commit" and who is not None:
            sha = await commit_here(ctx, target, request["message"], request.get("paths"), request["amend"], who)
            return {"result": {"sha": sha}}
        if action == "update" and who is not None:
            return {"result": asdict(await update_here(ctx, target, request["strategy"], who))}
        if action == "push":
            return {
                "result": asdict(await push_here(ctx, target, request["force_with_lease"], request.get("last_pushed")))
            }
        if action == "merge_local" and who is not None:
            return {"result": {"sha": await merge_local_here(ctx, target, who)}}
        return {"error": "unknown shipping request"}
    except DomainError as error:
        answer_ = error_answer(error)
        answer_["reason"] = error.fields.get("reason")
        return answer_
