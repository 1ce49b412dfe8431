"""sendReviewToAgent over GraphQL: one prompt in the task's primary session in the documented format, the threads
marked sent with its id; a repeat while it waits answers the same prompt; bad input gets typed errors."""

from __future__ import annotations

from sqlalchemy import select

from kandev.domain.reviews.service import NewComment
from kandev.models import QueuedPrompt
from tests.conftest import GraphQLCaller
from tests.support.changes import materialized_task
from tests.support.git_repos import make_repository

SEND = """mutation($i: SendReviewToAgentInput!) { sendReviewToAgent(input: $i) { __typename
  ... on Error { code message fields } ... on ValidationError { field }
  ... on SendReviewPayload { promptId threads { id state sentInPromptId } } } }"""


async def reviewed(services, workspace_id: str, tmp_path) -> tuple[str, list[str]]:
    task_id, folder = await materialized_task(services, workspace_id, make_repository(tmp_path / "repo"))
    (folder / "README").write_text("hello\nworld\n")
    first = await services.reviews.add_comment(NewComment(task_id, "Capitalise", path="README", line=1))
    second = await services.reviews.add_comment(NewComment(task_id, "Add a **title**", path="README"))
    await services.sessions.start_task(task_id, "/say started", None)  # a primary session (no worker: it waits)
    return task_id, [first.id, second.id]


async def review_prompts(db) -> list[QueuedPrompt]:
    async with db.read() as s:
        return list(await s.scalars(select(QueuedPrompt).where(QueuedPrompt.source == "review")))


async def test_a_send_queues_one_prompt_in_the_documented_format_and_a_repeat_answers_it_again(
    gql: GraphQLCaller, services, db, workspace_id, tmp_path
):
    task_id, thread_ids = await reviewed(services, workspace_id, tmp_path)
    sent = (await gql(SEND, i={"taskId": task_id, "threadIds": None}))["sendReviewToAgent"]
    assert sent["__typename"] == "SendReviewPayload"
    assert [t["id"] for t in sent["threads"]] == thread_ids
    assert all(t["sentInPromptId"] == sent["promptId"] for t in sent["threads"])
    [prompt] = await review_prompts(db)
    assert prompt.id == sent["promptId"] and prompt.state == "QUEUED"
    assert prompt.text.startswith("Review comments on your changes: 2 threads.")
    assert f"## README:1 (thread {thread_ids[0]})\n```\n1 | hello\n```\n- local: Capitalise" in prompt.text
    assert f"## README (whole file, thread {thread_ids[1]})\n- local: Add a **title**" in prompt.text
    assert [t["thread_id"] for t in prompt.sender["review"]["threads"]] == thread_ids

    again = (await gql(SEND, i={"taskId": task_id, "threadIds": None}))["sendReviewToAgent"]
    named = (await gql(SEND, i={"taskId": task_id, "threadIds": thread_ids}))["sendReviewToAgent"]
    assert again["promptId"] == named["promptId"] == sent["promptId"]
    assert len(await review_prompts(db)) == 1


async def test_a_reply_after_sending_makes_the_thread_sendable_again(gql, services, db, workspace_id, tmp_path):
    task_id, thread_ids = await reviewed(services, workspace_id, tmp_path)
    first = (await gql(SEND, i={"taskId": task_id, "threadIds": [thread_ids[0]]}))["sendReviewToAgent"]
    await services.reviews.reply(thread_ids[0], "Also the second word")
    second = (await gql(SEND, i={"taskId": task_id, "threadIds": [thread_ids[0]]}))["sendReviewToAgent"]
    assert second["promptId"] != first["promptId"]
    assert [t["sentInPromptId"] for t in second["threads"]] == [second["promptId"]]
    assert len(await review_prompts(db)) == 2


async def test_bad_sends_get_typed_errors_and_queue_nothing(gql, services, bob, db, workspace_id, tmp_path):
    task_id, thread_ids = await reviewed(services, workspace_id, tmp_path)
    other_task, _ = await materialized_task(services, workspace_id, make_repository(tmp_path / "other"), "Other")
    await services.reviews.resolve(thread_ids[1])
    cases = [
        ({"taskId": "no-such-task"}, "NOT_FOUND"),
        ({"taskId": task_id, "threadIds": ["no-such-thread"]}, "NOT_FOUND"),
        ({"taskId": other_task, "threadIds": [thread_ids[0]]}, "NOT_FOUND"),
        ({"taskId": task_id, "threadIds": [thread_ids[1]]}, "VALIDATION"),
        ({"taskId": task_id, "threadIds": []}, "VALIDATION"),
        ({"taskId": other_task}, "CONFLICT"),  # nothing to send there
    ]
    for variables, code in cases:
        assert (await gql(SEND, i=variables))["sendReviewToAgent"]["code"] == code, variables
    stranger = (await GraphQLCaller(bob)(SEND, i={"taskId": task_id}))["sendReviewToAgent"]
    assert stranger["code"] == "NOT_FOUND"
    assert await review_prompts(db) == []
