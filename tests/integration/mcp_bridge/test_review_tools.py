"""The task's agent reads, answers and resolves the review threads on its own task's changes over MCP, and
reaches no other task's threads."""

from __future__ import annotations

from pathlib import Path

from kandev.domain.reviews.service import NewComment
from tests.integration.mcp_bridge.conftest import agent_on, call_tool
from tests.support.changes import materialized_task
from tests.support.git_repos import make_repository


async def reviewed_task(services, workspace_id: str, folder: Path, title: str) -> tuple[str, str]:
    """A task whose worktree changed README, with one comment on its line 1: (task id, thread id)."""
    task_id, worktree = await materialized_task(services, workspace_id, make_repository(folder), title)
    (worktree / "README").write_text("hello there\n")
    thread = await services.reviews.add_comment(NewComment(task_id, "Say goodbye instead", path="README", line=1))
    return task_id, thread.id


async def test_the_agent_lists_answers_and_resolves_its_tasks_threads(surface, services, workspace_id, tmp_path):
    task_id, thread_id = await reviewed_task(services, workspace_id, tmp_path / "repo", "Mine")
    agent = await agent_on(services, task_id)

    failed, listed = await call_tool(surface, agent, "list_review_comments_kandev")
    assert not failed
    [thread] = listed["threads"]
    assert (thread["id"], thread["path"], thread["line"], thread["state"]) == (thread_id, "README", 1, "OPEN")
    assert thread["anchor"]["line_text"] == "hello there"
    assert thread["comments"][0]["body"] == "Say goodbye instead"

    failed, answered = await call_tool(
        surface, agent, "reply_review_comment_kandev", thread_id=thread_id, body="Changed it."
    )
    assert not failed and answered["thread_id"] == thread_id and answered["state"] == "OPEN"
    failed, resolved = await call_tool(
        surface, agent, "resolve_review_comment_kandev", thread_id=thread_id, note="See the new README"
    )
    assert not failed and resolved["state"] == "RESOLVED"
    assert resolved["resolved_by"] == {"kind": "AGENT", "login": None, "session_id": agent.session_id}

    [stored] = await services.reviews.threads(task_id)
    assert [(c.author.kind, c.body) for c in stored.comments] == [
        ("PERSON", "Say goodbye instead"),
        ("AGENT", "Changed it."),
        ("AGENT", "See the new README"),
    ]
    assert answered["id"] == stored.comments[1].id
    _, only_open = await call_tool(surface, agent, "list_review_comments_kandev", state="OPEN")
    assert only_open == {"threads": []}


async def test_an_agent_reaches_no_other_tasks_threads(surface, services, workspace_id, tmp_path):
    other_task, other_thread = await reviewed_task(services, workspace_id, tmp_path / "other", "Other")
    mine, _ = await reviewed_task(services, workspace_id, tmp_path / "mine", "Mine")
    agent = await agent_on(services, mine)
    for tool, arguments in (
        ("reply_review_comment_kandev", {"thread_id": other_thread, "body": "mine now"}),
        ("resolve_review_comment_kandev", {"thread_id": other_thread}),
    ):
        failed, answer = await call_tool(surface, agent, tool, **arguments)
        assert failed and answer["code"] == "NOT_FOUND", tool
    [untouched] = await services.reviews.threads(other_task)
    assert untouched.state == "OPEN" and [c.body for c in untouched.comments] == ["Say goodbye instead"]


async def test_the_task_surface_lists_the_review_tools(surface, services, workspace_id, tmp_path):
    task_id, _ = await reviewed_task(services, workspace_id, tmp_path / "repo", "Listed")
    agent = await agent_on(services, task_id)
    names = {tool.name for tool in await surface.list_tools(agent)}
    assert {"list_review_comments_kandev", "reply_review_comment_kandev", "resolve_review_comment_kandev"} <= names
