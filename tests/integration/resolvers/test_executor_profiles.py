"""Executor profiles: everyone lists them, only admins write them (KANDEV_AUTH=on)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.models import ExecutorProfile
from tests.conftest import GraphQLCaller
from tests.support.factories import settings_for

FIELDS = "id name kind builtin workspaceId serverWide"
LIST = f"query($ws: ID!) {{ executorProfiles(workspaceId: $ws) {{ {FIELDS} }} }}"
ANSWER = f"__typename ... on ExecutorProfilePayload {{ executorProfile {{ {FIELDS} }} }} ... on Error {{ code }}"
CREATE = f"mutation($i: CreateExecutorProfileInput!) {{ createExecutorProfile(input: $i) {{ {ANSWER} }} }}"
UPDATE = f"mutation($i: UpdateExecutorProfileInput!) {{ updateExecutorProfile(input: $i) {{ {ANSWER} }} }}"
DELETE = f"mutation($id: ID!) {{ deleteExecutorProfile(executorProfileId: $id) {{ {ANSWER} }} }}"


@pytest.fixture
def settings(database_url, redis_url, tmp_path):
    return settings_for(database_url, redis_url, tmp_path, auth="on")


async def snapshot(services: Services) -> list[tuple[Any, ...]]:
    async with services.ctx.db.read() as session:
        rows = await session.scalars(select(ExecutorProfile).order_by(ExecutorProfile.id))
        return [(p.id, p.workspace_id, p.name, p.kind) for p in rows]


async def test_a_non_admin_can_not_create_change_or_delete_executor_profiles(services, bob, bob_workspace):
    bobs = GraphQLCaller(bob)
    builtin = (await bobs(LIST, ws=bob_workspace))["executorProfiles"]
    assert {p["kind"] for p in builtin} == {"WORKTREE", "LOCAL", "SCRATCH"}
    worktree = next(p for p in builtin if p["kind"] == "WORKTREE")
    before = await snapshot(services)
    answers = [
        await bobs(CREATE, i={"workspaceId": bob_workspace, "name": "Here", "kind": "LOCAL"}),
        await bobs(CREATE, i={"workspaceId": None, "name": "Everywhere", "kind": "LOCAL"}),
        await bobs(UPDATE, i={"executorProfileId": worktree["id"], "kind": "LOCAL"}),
        await bobs(UPDATE, i={"executorProfileId": worktree["id"], "name": "Renamed"}),
        await bobs(DELETE, id=worktree["id"]),
    ]
    assert [next(iter(a.values()))["__typename"] for a in answers] == ["PermissionDeniedError"] * 5
    assert await snapshot(services) == before


async def test_an_admins_server_wide_executor_is_listed_everywhere_and_usable_by_another_users_task(
    services, gql, bob, bob_workspace
):
    made = await gql(CREATE, i={"workspaceId": None, "name": "Scratch for all", "kind": "SCRATCH"})
    shared = made["createExecutorProfile"]["executorProfile"]
    assert shared["serverWide"] is True and shared["workspaceId"] is None and shared["kind"] == "SCRATCH"
    listed = (await GraphQLCaller(bob)(LIST, ws=bob_workspace))["executorProfiles"]
    assert [p["id"] for p in listed if p["serverWide"]] == [shared["id"]]
    task = await bob.tasks.create(CreateTask(workspace_id=bob_workspace, title="T", executor_profile_id=shared["id"]))
    assert task.task.executor_profile_id == shared["id"]

    renamed = await gql(UPDATE, i={"executorProfileId": shared["id"], "name": "Scratch", "kind": "WORKTREE"})
    assert renamed["updateExecutorProfile"]["executorProfile"] | {"id": None} == {
        **shared,
        "id": None,
        "name": "Scratch",
        "kind": "WORKTREE",
    }
    twice = await gql(CREATE, i={"workspaceId": None, "name": "Scratch", "kind": "SCRATCH"})
    assert twice["createExecutorProfile"]["__typename"] == "ConflictError"
    deleted = await gql(DELETE, id=shared["id"])
    assert deleted["deleteExecutorProfile"]["__typename"] == "ExecutorProfilePayload"


async def test_an_admin_cannot_delete_a_workspaces_default_executor_or_reach_another_users(
    services, gql, workspace_id, bob_workspace
):
    local_default = next(p for p in (await gql(LIST, ws=workspace_id))["executorProfiles"] if p["kind"] == "WORKTREE")
    refused = await gql(DELETE, id=local_default["id"])
    assert refused["deleteExecutorProfile"]["__typename"] == "ConflictError"
    async with services.ctx.db.read() as session:
        bobs_own = await session.scalar(select(ExecutorProfile.id).where(ExecutorProfile.workspace_id == bob_workspace))
    hidden = await gql(UPDATE, i={"executorProfileId": bobs_own, "name": "Mine"})
    assert hidden["updateExecutorProfile"]["__typename"] == "NotFoundError"
