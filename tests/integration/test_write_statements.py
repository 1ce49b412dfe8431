"""The web client's writes cost a fixed, small number of SQL statements."""

from __future__ import annotations

from tests.integration.test_sidebar_queries import counted_statements
from tests.support.client_ops import client_operations


async def test_creating_a_task_takes_three_statements_and_two_more_to_remember_the_persons_choice(
    gql, db, workspace_id
):
    create = client_operations()["CREATE_TASK"]
    await gql(create, i={"workspaceId": workspace_id, "title": "warm"})
    with counted_statements(db) as statements:
        data = await gql(create, i={"workspaceId": workspace_id, "title": "counted"})
    assert data["createTask"]["task"]["title"] == "counted"
    kinds = [" ".join(s.split()[:1]).upper() for s in statements if not s.lstrip().upper().startswith("COMMIT")]
    # the workspace, the default workflow's steps (with their workflow), the task already marked complete; then,
    # after that commits, the person's last choice for the new-task form (is the caller a person, the upsert).
    # The payload's cost, activity and pending action are known for a task just made: nothing more is read.
    assert kinds == ["SELECT", "SELECT", "INSERT", "SELECT", "INSERT"], statements
