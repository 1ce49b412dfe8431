"""authoringDraft reads only authoring chats the caller can see: another kind of task, or another user's
chat, is not found."""

from __future__ import annotations

from kandev.domain.tasks.service import CreateTask
from tests.conftest import GraphQLCaller

DRAFT = "query($task: ID!) { authoringDraft(taskId: $task) { state operatorMessages } }"


async def test_a_task_that_is_not_an_authoring_chat_has_no_draft(gql, services, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Plain", start_agent=False))).task
    refused = await gql.raw(DRAFT, task=task.id)
    assert refused.errors[0].extensions["code"] == "NOT_FOUND" and refused.data is None


async def test_another_users_authoring_chat_is_not_found_and_the_owner_reads_it(gql, services, bob, workspace_id):
    started = await services.automations.start_authoring(workspace_id, "every day tidy up", None)
    refused = await GraphQLCaller(bob).raw(DRAFT, task=started.task.id)
    assert refused.errors[0].extensions["code"] == "NOT_FOUND" and refused.data is None
    # No worker here: the first message is still queued, so nothing has been said to the agent yet.
    assert (await gql(DRAFT, task=started.task.id))["authoringDraft"] == {"state": "COLLECTING", "operatorMessages": 0}
