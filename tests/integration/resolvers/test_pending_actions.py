"""pendingActions(workspaceId): what agents wait on in a workspace, of three kinds, oldest first, paged by an
opaque cursor, for ordinary tasks and automation runs' hidden tasks alike."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kandev.domain.access.session_grants import session_principal
from kandev.domain.automations.records import AutomationFields
from kandev.domain.services import Services
from kandev.models import AutomationRun
from kandev.models.base import utcnow
from tests.conftest import GraphQLCaller
from tests.integration.test_sidebar_queries import counted_statements
from tests.support.factories import automation_run, new_task
from tests.support.pending import add_parent_question, add_permission, add_question, launched, session_of
from tests.support.session_tokens import side_token

NODE = """__typename
  ... on Clarification { id taskId sessionId runId createdAt }
  ... on PermissionRequest { id taskId sessionId runId createdAt }
  ... on ParentQuestion { id childTaskId childSessionId runId createdAt }"""
PENDING = f"""query($ws: ID!, $first: Int, $after: String) {{
  pendingActions(workspaceId: $ws, first: $first, after: $after) {{
    totalCount pageInfo {{ hasNextPage endCursor }} edges {{ cursor node {{ {NODE} }} }} }} }}"""
ANSWER = """mutation($i: AnswerClarificationInput!) { answerClarification(input: $i) { __typename } }"""
RESOLVE = """mutation($i: ResolvePermissionInput!) { resolvePermission(input: $i) { __typename } }"""


async def pending(gql: GraphQLCaller, workspace_id: str, **variables: Any) -> dict[str, Any]:
    return (await gql(PENDING, ws=workspace_id, **variables))["pendingActions"]


async def every_page(gql: GraphQLCaller, workspace_id: str, first: int) -> list[list[dict[str, Any]]]:
    pages, after = [], None
    for _ in range(50):  # far more pages than any test writes
        page = await pending(gql, workspace_id, first=first, after=after)
        pages.append([edge["node"] for edge in page["edges"]])
        if not page["pageInfo"]["hasNextPage"]:
            return pages
        after = page["pageInfo"]["endCursor"]
    raise AssertionError("pendingActions kept answering hasNextPage")


async def autopilot_child(services: Any, workspace_id: str, title: str = "Child") -> str:
    parent_id = await new_task(services, workspace_id, "Parent")
    return await new_task(services, workspace_id, title, parent_id=parent_id)


async def run_task(services: Any, workspace_id: str) -> tuple[str, str, str]:
    """An automation fired once into its hidden task: (run id, task id, session id)."""
    fields = AutomationFields(name="Nightly", prompt="/say hi")
    automation_id = (await services.automations.create(workspace_id, fields)).automation.id
    return await launched(services, automation_id)


async def test_questions_permissions_and_parent_questions_come_oldest_first_across_pages(
    gql, services, db, workspace_id
):
    start = utcnow() - timedelta(hours=1)
    ordinary = await session_of(db, await new_task(services, workspace_id, "Ordinary"))
    child = await session_of(db, await autopilot_child(services, workspace_id))
    made = [
        ("PermissionRequest", await add_permission(db, ordinary, start + timedelta(seconds=3))),
        ("Clarification", await add_question(db, ordinary, start + timedelta(seconds=1))),
        ("ParentQuestion", await add_parent_question(db, child, start + timedelta(seconds=2))),
        ("Clarification", await add_question(db, child, start + timedelta(seconds=5))),
        ("PermissionRequest", await add_permission(db, child, start + timedelta(seconds=4))),
    ]
    # two items at one moment: the id decides, on every page
    same_moment = start + timedelta(seconds=6)
    made += [
        ("Clarification", await add_question(db, ordinary, same_moment)),
        ("PermissionRequest", await add_permission(db, ordinary, same_moment)),
    ]
    expected = [made[1], made[2], made[0], made[4], made[3], *sorted(made[5:], key=lambda kind_id: kind_id[1])]

    pages = await every_page(gql, workspace_id, first=2)

    assert [len(page) for page in pages] == [2, 2, 2, 1]
    assert [(node["__typename"], node["id"]) for page in pages for node in page] == expected
    assert (await pending(gql, workspace_id))["totalCount"] == 7


async def test_a_question_in_an_automation_runs_hidden_task_appears_with_its_run(gql, services, db, workspace_id):
    run_id, task_id, session_id = await run_task(services, workspace_id)
    ordinary = await session_of(db, await new_task(services, workspace_id, "Ordinary"))
    in_run = await add_question(db, session_id, utcnow())
    outside = await add_permission(db, ordinary, utcnow())

    nodes = {edge["node"]["id"]: edge["node"] for edge in (await pending(gql, workspace_id))["edges"]}

    found = nodes[in_run]
    assert (found["__typename"], found["taskId"], found["sessionId"], found["runId"]) == (
        "Clarification",
        task_id,
        session_id,
        run_id,
    )
    assert nodes[outside]["runId"] is None
    # the hidden task is on no list, yet what it waits on is here
    tasks = await gql("query($ws: ID!) { tasks(workspaceId: $ws) { nodes { id } } }", ws=workspace_id)
    assert task_id not in {node["id"] for node in tasks["tasks"]["nodes"]}


async def test_on_a_task_serving_several_runs_each_item_names_the_run_it_was_raised_in(gql, services, db, workspace_id):
    first_run, task_id, session_id = await run_task(services, workspace_id)
    async with db.read() as s:
        automation_id = (await s.get(AutomationRun, first_run)).automation_id
    during_first = await add_permission(db, session_id, utcnow())
    second_run = await automation_run(db, automation_id, utcnow(), task_id=task_id, session_id=session_id)
    during_second = await add_question(db, session_id, utcnow())

    nodes = {edge["node"]["id"]: edge["node"] for edge in (await pending(gql, workspace_id))["edges"]}

    assert (nodes[during_first]["runId"], nodes[during_second]["runId"]) == (first_run, second_run)


async def test_answered_resolved_and_settled_items_and_those_of_archived_or_deleted_tasks_leave_the_list(
    gql, services, db, workspace_id
):
    session = await session_of(db, await new_task(services, workspace_id, "Asks"))
    question = await add_question(db, session, utcnow())
    permission = await add_permission(db, session, utcnow())
    staying = await add_question(db, session, utcnow())
    for state in ("ANSWERED", "REJECTED", "EXPIRED", "CANCELLED"):
        await add_question(db, session, utcnow(), state=state)
    await add_permission(db, session, utcnow(), state="RESOLVED")
    settled_child = await session_of(db, await autopilot_child(services, workspace_id))
    await add_parent_question(db, settled_child, utcnow(), state="STALE")
    archived_task = await autopilot_child(services, workspace_id, "Archived")
    await add_parent_question(db, await session_of(db, archived_task), utcnow())
    deleted_task = await new_task(services, workspace_id, "Deleted")
    await add_question(db, await session_of(db, deleted_task), utcnow())
    await services.tasks.archive(archived_task)
    await services.tasks.delete(deleted_task)

    answer = {"clarificationId": question, "answers": [{"questionId": "q1", "selectedOptions": ["a"]}]}
    answered = await gql(ANSWER, i=answer)
    resolved = await gql(RESOLVE, i={"requestId": permission, "optionId": "allow"})

    assert answered["answerClarification"]["__typename"] == "ClarificationPayload"
    assert resolved["resolvePermission"]["__typename"] == "ResolvePermissionPayload"
    page = await pending(gql, workspace_id)
    assert [edge["node"]["id"] for edge in page["edges"]] == [staying]
    assert page["totalCount"] == 1


async def test_another_workspaces_items_are_absent_and_a_workspace_out_of_reach_is_not_found(
    gql, services, db, workspace_id, bob, bob_workspace
):
    mine = await add_question(db, await session_of(db, await new_task(services, workspace_id)), utcnow())
    await add_question(db, await session_of(db, await new_task(bob, bob_workspace)), utcnow())

    page = await pending(gql, workspace_id)
    refused = await GraphQLCaller(bob).raw(PENDING, ws=workspace_id)
    unknown = await gql.raw(PENDING, ws="no-such-workspace")

    assert [edge["node"]["id"] for edge in page["edges"]] == [mine]
    assert refused.errors[0].extensions["code"] == unknown.errors[0].extensions["code"] == "NOT_FOUND"
    assert refused.data is None and unknown.data is None


async def test_an_agents_session_sees_its_own_workspaces_items_and_no_other_workspace(gql, services, db, workspace_id):
    task_id = await new_task(services, workspace_id, "Coordinator")
    session_id = await session_of(db, task_id)
    waiting = await add_question(db, await session_of(db, await new_task(services, workspace_id)), utcnow())
    other_workspace = (await services.workspaces.create("Other")).id
    token = await side_token(db, session_id)
    principal = await session_principal(db, session_id, token, services.ctx.settings.server_key)
    assert principal is not None
    agent = GraphQLCaller(Services(services.ctx.with_principal(principal)))

    page = await pending(agent, workspace_id)
    refused = await agent.raw(PENDING, ws=other_workspace)

    assert [edge["node"]["id"] for edge in page["edges"]] == [waiting]
    assert refused.errors[0].extensions["code"] == "NOT_FOUND"


async def test_a_cursor_not_from_this_api_or_a_page_size_out_of_bounds_is_a_validation_error(gql, workspace_id):
    bad_cursor = await gql.raw(PENDING, ws=workspace_id, after="not a cursor")
    too_many = await gql.raw(PENDING, ws=workspace_id, first=501)
    negative = await gql.raw(PENDING, ws=workspace_id, first=-1)

    for answer in (bad_cursor, too_many, negative):
        assert answer.errors[0].extensions["code"] == "VALIDATION", answer.errors


async def test_a_page_of_pending_actions_takes_the_same_statements_for_3_and_for_60_items(
    gql, services, db, workspace_id
):
    _, _, run_session = await run_task(services, workspace_id)
    sessions = [await session_of(db, await new_task(services, workspace_id)), run_session]
    children = [await session_of(db, await autopilot_child(services, workspace_id, f"Child {i}")) for i in range(20)]

    async def add(children_from: int, count: int) -> None:
        for i in range(children_from, children_from + count):
            await add_question(db, sessions[i % 2], utcnow())
            await add_permission(db, sessions[i % 2], utcnow())
            await add_parent_question(db, children[i], utcnow())  # one pending question per child session

    await add(0, 1)
    with counted_statements(db) as small:
        small_page = await pending(gql, workspace_id, first=50)
    await add(1, 19)
    with counted_statements(db) as large:
        large_page = await pending(gql, workspace_id, first=50)

    assert (len(small_page["edges"]), len(large_page["edges"])) == (3, 50)
    assert {edge["node"]["__typename"] for edge in large_page["edges"]} == {
        "Clarification",
        "PermissionRequest",
        "ParentQuestion",
    }
    assert any(edge["node"]["runId"] for edge in large_page["edges"])
    # the workspace, the total, one page per kind, the runs of the page's tasks
    assert len(small) == len(large) == 6, large
