"""An agent's create_task_kandev costs no more database transactions than the web client's createTask."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from kandev.domain.tasks.service import CreateTask
from kandev.edge.mcp_bridge.auth import resolve_caller
from tests.integration.mcp_bridge.conftest import call_tool
from tests.support.session_tokens import kept_checks, launch_token

# The web client's createTask with the task fields its board reads (frontend/src/api/ops.ts).
WEB_CLIENT_CREATE_TASK = """mutation($input: CreateTaskInput!) { createTask(input: $input) {
  __typename ... on Error { message code } ... on CreateTaskPayload { task { id title state autopilot parentId
  pendingAction workflowId workflowStepId externalId archivedAt createdAt updatedAt blockReason } } } }"""


@contextmanager
def counted_transactions(db: Any) -> Iterator[list[int]]:
    """Counts connection checkouts: every read or write unit of work that touches the database takes one."""
    seen = [0]

    def on_checkout(*_: Any) -> None:
        seen[0] += 1

    pool = db.engine.sync_engine.pool
    event.listen(pool, "checkout", on_checkout)
    try:
        yield seen
    finally:
        event.remove(pool, "checkout", on_checkout)


async def test_an_agents_create_task_costs_no_more_transactions_than_the_web_clients(
    surface, services, gql, db, workspace_id
):
    own = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Mine"))).task
    session = (await services.sessions.start_task(own.id, "hi", None)).session
    token = await launch_token(services.ctx, session.id)
    async with kept_checks(surface._state().redis) as callers:
        await resolve_caller(surface._state(), "session", f"Bearer {token}", callers)  # a live agent's check is kept

        with counted_transactions(db) as web:
            created = await gql(WEB_CLIENT_CREATE_TASK, input={"workspaceId": workspace_id, "title": "From the web"})
        assert created["createTask"]["__typename"] == "CreateTaskPayload"

        with counted_transactions(db) as agent:
            caller = await resolve_caller(surface._state(), "session", f"Bearer {token}", callers)
            assert caller is not None
            error, made = await call_tool(surface, caller, "create_task_kandev", title="From the agent")
    assert not error, made
    print(f"transactions: web createTask {web[0]}, agent create_task_kandev {agent[0]}")
    assert agent[0] <= web[0]
