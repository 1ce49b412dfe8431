"""The board's and the transcript's queries cost a constant number of SQL statements, however many tasks
or messages they show."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from tests.support.board import add_tasks, add_transcript
from tests.support.client_ops import client_operations

SIDEBAR = """query($ws: ID!) {
  tasks(workspaceId: $ws, first: 500) {
    totalCount pageInfo { hasNextPage endCursor }
    nodes { id title state autopilot parentId pendingAction workflowStepId
            workflowStep { id name } sessions { id state isPrimary } }
  }
}"""


@contextmanager
def counted_statements(db: Any) -> Iterator[list[str]]:
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not statement.lstrip().upper().startswith(("BEGIN", "PRAGMA")):
            statements.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", count)


async def statements_for(gql: Any, db: Any, query: str, **variables: Any) -> tuple[int, dict[str, Any]]:
    with counted_statements(db) as statements:
        data = await gql(query, **variables)
    return len(statements), data


async def test_the_sidebar_query_uses_the_same_number_of_statements_for_10_and_1000_tasks(gql, db, workspace_id):
    await add_tasks(db, workspace_id, 10)
    small, data_small = await statements_for(gql, db, SIDEBAR, ws=workspace_id)
    await add_tasks(db, workspace_id, 990)
    large, data_large = await statements_for(gql, db, SIDEBAR, ws=workspace_id)
    assert (len(data_small["tasks"]["nodes"]), len(data_large["tasks"]["nodes"])) == (10, 500)  # at most 500 a page
    assert data_large["tasks"]["totalCount"] == 1000
    assert small == large
    # workspace check, count, page, pending actions, steps, sessions: per-row loading would be far above this
    assert small <= 6


async def test_the_web_clients_tasks_page_takes_six_statements_for_10_and_for_1000_tasks(gql, db, workspace_id):
    tasks = client_operations()["TASKS"]
    await add_tasks(db, workspace_id, 10)
    small, data_small = await statements_for(gql, db, tasks, w=workspace_id, first=500)
    await add_tasks(db, workspace_id, 990)
    large, data_large = await statements_for(gql, db, tasks, w=workspace_id, first=500)
    assert (len(data_small["tasks"]["nodes"]), len(data_large["tasks"]["nodes"])) == (10, 500)
    # the workspace check, the page, the page's pending actions, the page's card activity, the page's usage (the
    # cards' cost), the page's pull requests (the cards' badges): no total, since the client does not ask for it
    assert small == large == 6


async def test_the_tasks_page_reads_each_tasks_pending_action_with_the_page(gql, db, workspace_id):
    ids = await add_tasks(db, workspace_id, 20)  # every other task has a session; every tenth of those waits
    data = await gql(client_operations()["TASKS"], w=workspace_id, first=50)
    actions = {node["id"]: node["pendingAction"] for node in data["tasks"]["nodes"]}
    assert actions[ids[0]] == "COMPLETION_PENDING"
    assert actions[ids[2]] == actions[ids[1]] == "NONE"
    assert sorted(actions.values()).count("COMPLETION_PENDING") == 1


async def test_the_transcript_query_takes_four_statements_for_10_and_for_200_messages(gql, db, workspace_id):
    session = client_operations()["SESSION"]
    task_ids = await add_tasks(db, workspace_id, 2)
    short_id = await add_transcript(db, task_ids[0], 10)
    long_id = await add_transcript(db, task_ids[1], 200)
    short, data_short = await statements_for(gql, db, session, id=short_id, page=500)
    long, data_long = await statements_for(gql, db, session, id=long_id, page=500)
    assert len(data_short["session"]["messages"]["nodes"]) == 10
    assert len(data_long["session"]["messages"]["nodes"]) == 200
    assert len(data_long["session"]["turns"]) == 3 and len(data_long["session"]["queuedPrompts"]) == 1
    # the session with its visibility check, then turns, messages and queued prompts
    assert short == long == 4


async def test_total_count_and_pending_actions_are_answered_however_the_query_selects_them(gql, db, workspace_id):
    await add_tasks(db, workspace_id, 4)  # the first waits on its completion signal
    query = """query($ws: ID!) {
      tasks(workspaceId: $ws) { ...Counted edges { node { ... on Task { waits: pendingAction } } } }
    }
    fragment Counted on TaskConnection { all: totalCount }"""
    statements, data = await statements_for(gql, db, query, ws=workspace_id)
    assert data["tasks"]["all"] == 4
    assert sorted(edge["node"]["waits"] for edge in data["tasks"]["edges"]) == ["COMPLETION_PENDING"] + ["NONE"] * 3
    assert statements == 4  # workspace check, count, page, the page's pending actions
