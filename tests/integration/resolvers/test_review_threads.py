"""Review threads over GraphQL: comment on lines, files and the task; discuss, resolve, reopen, delete one's own
comments; bad input and strangers get typed errors and change nothing; every change reaches taskEvents."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kandev.graphql.root import schema
from kandev.graphql.schema.context import Context
from tests.conftest import GraphQLCaller
from tests.support.changes import materialized_task
from tests.support.git_repos import make_repository

ERRORS = "__typename ... on Error { code message } ... on ValidationError { field }"
THREAD = """id path line endLine side state origin sentInPromptId resolvedAt
  resolvedBy { kind login sessionId }
  anchor { commit line endLine lineText context { before after } }
  comments { id author { kind login } body }"""
ADD = f"""mutation($i: AddReviewCommentInput!) {{ addReviewComment(input: $i) {{ {ERRORS}
  ... on ReviewThreadPayload {{ thread {{ {THREAD} }} }} }} }}"""
REPLY = f"""mutation($i: ReplyToReviewThreadInput!) {{ replyToReviewThread(input: $i) {{ {ERRORS}
  ... on ReviewThreadPayload {{ thread {{ {THREAD} }} }} }} }}"""
RESOLVE = f"""mutation($t: ID!, $note: String) {{ resolveReviewThread(threadId: $t, note: $note) {{ {ERRORS}
  ... on ReviewThreadPayload {{ thread {{ {THREAD} }} }} }} }}"""
REOPEN = f"""mutation($t: ID!) {{ reopenReviewThread(threadId: $t) {{ {ERRORS}
  ... on ReviewThreadPayload {{ thread {{ {THREAD} }} }} }} }}"""
DELETE = f"""mutation($c: ID!) {{ deleteReviewComment(commentId: $c) {{ {ERRORS}
  ... on ReviewThreadPayload {{ threadDeleted thread {{ {THREAD} }} }} }} }}"""
THREADS = f"""query($id: ID!, $state: ReviewThreadState) {{ task(id: $id) {{
  reviewThreads(state: $state) {{ {THREAD} }} }} }}"""
EVENTS = """subscription($ws: ID!) { taskEvents(workspaceId: $ws) { kind task { id }
  reviewThread { id state line comments { body } } } }"""

CODE = "".join(f"line {n}\n" for n in range(1, 21))


async def task_with_file(services, workspace_id: str, tmp_path: Path) -> tuple[str, str, Path]:
    """A started task whose worktree changed app.py: (task id, repository id, worktree folder)."""
    repository = make_repository(tmp_path / "repo")
    (repository / "app.py").write_text(CODE)
    from tests.support.git_repos import git

    git(repository, "add", "app.py")
    git(repository, "commit", "-q", "-m", "app")
    task_id, folder = await materialized_task(services, workspace_id, repository)
    (folder / "app.py").write_text(CODE.replace("line 10\n", "line ten\n"))
    repository_id = (await services.repositories.list(workspace_id))[0].id
    return task_id, repository_id, folder


def payload(data: dict[str, Any], field: str) -> dict[str, Any]:
    result: dict[str, Any] = data[field]
    return result


async def test_a_line_comment_keeps_its_lines_as_anchor_and_the_discussion_runs_its_course(
    gql: GraphQLCaller, services, workspace_id, tmp_path
):
    task_id, repository_id, _ = await task_with_file(services, workspace_id, tmp_path)
    added = payload(
        await gql(
            ADD,
            i={
                "taskId": task_id,
                "repositoryId": repository_id,
                "path": "app.py",
                "line": 10,
                "endLine": 11,
                "body": "Why **ten**?",
            },
        ),
        "addReviewComment",
    )["thread"]
    assert (added["path"], added["line"], added["endLine"], added["side"], added["state"]) == (
        "app.py",
        10,
        11,
        "NEW",
        "OPEN",
    )
    assert added["anchor"]["lineText"] == "line ten\nline 11"
    assert added["anchor"]["context"] == {
        "before": ["line 7", "line 8", "line 9"],
        "after": ["line 12", "line 13", "line 14"],
    }
    assert added["origin"] == "PERSON" and added["comments"][0]["author"] == {"kind": "PERSON", "login": "local"}
    assert added["comments"][0]["body"] == "Why **ten**?"  # stored as written; clients render it

    thread_id = added["id"]
    replied = payload(await gql(REPLY, i={"threadId": thread_id, "body": "Because."}), "replyToReviewThread")
    assert [c["body"] for c in replied["thread"]["comments"]] == ["Why **ten**?", "Because."]
    resolved = payload(await gql(RESOLVE, t=thread_id, note="Fixed it"), "resolveReviewThread")["thread"]
    assert resolved["state"] == "RESOLVED" and resolved["resolvedBy"] == {
        "kind": "PERSON",
        "login": "local",
        "sessionId": None,
    }
    assert resolved["comments"][-1]["body"] == "Fixed it"
    again = payload(await gql(RESOLVE, t=thread_id), "resolveReviewThread")["thread"]
    assert again["state"] == "RESOLVED" and len(again["comments"]) == 3
    reopened = payload(await gql(REOPEN, t=thread_id), "reopenReviewThread")["thread"]
    assert reopened["state"] == "OPEN" and reopened["resolvedBy"] is None

    listed = (await gql(THREADS, id=task_id))["task"]["reviewThreads"]
    assert [t["id"] for t in listed] == [thread_id]
    assert (await gql(THREADS, id=task_id, state="RESOLVED"))["task"]["reviewThreads"] == []


async def test_comments_on_a_whole_file_on_the_whole_task_and_on_the_base_version(
    gql, services, workspace_id, tmp_path
):
    task_id, repository_id, _ = await task_with_file(services, workspace_id, tmp_path)
    whole_file = payload(
        await gql(ADD, i={"taskId": task_id, "path": "app.py", "body": "Split this file"}), "addReviewComment"
    )["thread"]
    assert (whole_file["path"], whole_file["line"], whole_file["anchor"]) == ("app.py", None, None)
    whole_task = payload(await gql(ADD, i={"taskId": task_id, "body": "Add a changelog entry"}), "addReviewComment")[
        "thread"
    ]
    assert (whole_task["path"], whole_task["line"]) == (None, None)
    old = payload(
        await gql(
            ADD,
            i={
                "taskId": task_id,
                "repositoryId": repository_id,
                "path": "app.py",
                "line": 10,
                "side": "OLD",
                "body": "This was fine",
            },
        ),
        "addReviewComment",
    )["thread"]
    assert old["side"] == "OLD" and old["anchor"]["lineText"] == "line 10"


async def test_bad_input_gets_typed_errors_and_changes_nothing(gql, services, workspace_id, tmp_path):
    task_id, repository_id, _ = await task_with_file(services, workspace_id, tmp_path)
    base = {"taskId": task_id, "repositoryId": repository_id, "path": "app.py", "body": "x"}
    cases = [
        ({**base, "taskId": "no-such-task"}, "NOT_FOUND", None),
        ({**base, "repositoryId": "no-such-repository"}, "NOT_FOUND", None),
        ({**base, "path": "no/such/file.py", "line": 1}, "NOT_FOUND", None),
        ({**base, "line": 21}, "VALIDATION", "line"),
        ({**base, "line": 20, "endLine": 22}, "VALIDATION", "endLine"),
        ({**base, "line": 5, "endLine": 4}, "VALIDATION", "endLine"),
        ({**base, "line": 0}, "VALIDATION", "line"),
        ({**base, "line": 1, "body": "   "}, "VALIDATION", "body"),
        ({**base, "line": 1, "body": "x" * 10_001}, "VALIDATION", "body"),
        ({**base, "path": "../outside.py", "line": 1}, "VALIDATION", "path"),
        ({**base, "path": ".git/config", "line": 1}, "VALIDATION", "path"),
    ]
    for variables, code, field in cases:
        answer = payload(await gql(ADD, i=variables), "addReviewComment")
        assert answer["code"] == code, (variables, answer)
        assert answer.get("field") == field, (variables, answer)
    for query, variables, name in (
        (REPLY, {"i": {"threadId": "nope", "body": "x"}}, "replyToReviewThread"),
        (RESOLVE, {"t": "nope"}, "resolveReviewThread"),
        (REOPEN, {"t": "nope"}, "reopenReviewThread"),
        (DELETE, {"c": "nope"}, "deleteReviewComment"),
    ):
        assert payload(await gql(query, **variables), name)["code"] == "NOT_FOUND"
    assert (await gql(THREADS, id=task_id))["task"]["reviewThreads"] == []


async def test_someone_who_cannot_read_the_task_cannot_see_or_touch_its_threads(
    gql, services, bob, workspace_id, tmp_path
):
    task_id, repository_id, _ = await task_with_file(services, workspace_id, tmp_path)
    thread = payload(
        await gql(ADD, i={"taskId": task_id, "path": "app.py", "line": 1, "body": "mine"}), "addReviewComment"
    )["thread"]
    stranger = GraphQLCaller(bob)
    assert (
        payload(
            await stranger(ADD, i={"taskId": task_id, "path": "app.py", "line": 1, "body": "x"}), "addReviewComment"
        )["code"]
        == "NOT_FOUND"
    )
    assert (
        payload(await stranger(REPLY, i={"threadId": thread["id"], "body": "x"}), "replyToReviewThread")["code"]
        == "NOT_FOUND"
    )
    assert payload(await stranger(RESOLVE, t=thread["id"]), "resolveReviewThread")["code"] == "NOT_FOUND"
    assert payload(await stranger(DELETE, c=thread["comments"][0]["id"]), "deleteReviewComment")["code"] == "NOT_FOUND"
    result = await stranger.raw(THREADS, id=task_id)
    assert result.errors and result.errors[0].extensions["code"] == "NOT_FOUND"
    [kept] = (await gql(THREADS, id=task_id))["task"]["reviewThreads"]
    assert (kept["state"], [c["body"] for c in kept["comments"]]) == ("OPEN", ["mine"])


async def test_only_the_author_deletes_a_comment_and_the_last_one_takes_the_thread(
    gql, services, bob, bob_workspace, tmp_path
):
    # Bob's task: Bob can read it, and so can the local user (who sees everything with auth off).
    task_id, _, _ = await task_with_file(bob, bob_workspace, tmp_path)
    bobs = GraphQLCaller(bob)
    thread = payload(
        await bobs(ADD, i={"taskId": task_id, "path": "app.py", "line": 2, "body": "bob's"}), "addReviewComment"
    )["thread"]
    mine = payload(await gql(REPLY, i={"threadId": thread["id"], "body": "local's"}), "replyToReviewThread")
    [bobs_comment, local_comment] = mine["thread"]["comments"]
    refused = payload(await bobs(DELETE, c=local_comment["id"]), "deleteReviewComment")
    assert refused["code"] == "PERMISSION_DENIED"
    first = payload(await gql(DELETE, c=local_comment["id"]), "deleteReviewComment")
    assert not first["threadDeleted"] and [c["body"] for c in first["thread"]["comments"]] == ["bob's"]
    last = payload(await bobs(DELETE, c=bobs_comment["id"]), "deleteReviewComment")
    assert last["threadDeleted"] and last["thread"]["id"] == thread["id"]
    assert (await gql(THREADS, id=task_id))["task"]["reviewThreads"] == []


async def test_two_people_commenting_and_resolving_at_once_lose_nothing(gql, services, bob, bob_workspace, tmp_path):
    task_id, _, _ = await task_with_file(bob, bob_workspace, tmp_path)
    bobs = GraphQLCaller(bob)
    thread_id = payload(
        await bobs(ADD, i={"taskId": task_id, "path": "app.py", "line": 3, "body": "start"}), "addReviewComment"
    )["thread"]["id"]
    calls = [bobs(REPLY, i={"threadId": thread_id, "body": f"bob {n}"}) for n in range(5)]
    calls += [gql(REPLY, i={"threadId": thread_id, "body": f"local {n}"}) for n in range(5)]
    calls += [gql(RESOLVE, t=thread_id), bobs(RESOLVE, t=thread_id, note="done")]
    answers = await asyncio.gather(*calls)
    assert all("code" not in next(iter(a.values())) for a in answers)
    [thread] = (await gql(THREADS, id=task_id))["task"]["reviewThreads"]
    bodies = sorted(c["body"] for c in thread["comments"])
    assert bodies == sorted(["start", "done", *(f"bob {n}" for n in range(5)), *(f"local {n}" for n in range(5))])
    assert thread["state"] == "RESOLVED"


async def test_every_change_of_a_thread_reaches_task_events(gql, services, workspace_id, tmp_path):
    task_id, _, _ = await task_with_file(services, workspace_id, tmp_path)
    stream = await schema.subscribe(
        EVENTS, variable_values={"ws": workspace_id}, context_value=Context.for_services(services)
    )
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(10):
        assert (await anext(stream)).data["taskEvents"]["kind"] == "SUBSCRIBED"  # type: ignore[union-attr,index]
        thread = payload(
            await gql(ADD, i={"taskId": task_id, "path": "app.py", "line": 4, "body": "one"}), "addReviewComment"
        )["thread"]
        await gql(REPLY, i={"threadId": thread["id"], "body": "two"})
        await gql(RESOLVE, t=thread["id"])
        await gql(DELETE, c=thread["comments"][0]["id"])
        while len(seen) < 4:
            seen.append((await anext(stream)).data["taskEvents"])  # type: ignore[union-attr,index]
    await stream.aclose()  # type: ignore[union-attr]
    assert [e["kind"] for e in seen] == ["REVIEW_THREAD"] * 4
    assert all(e["task"]["id"] == task_id and e["reviewThread"]["id"] == thread["id"] for e in seen)
    assert [(e["reviewThread"]["state"], [c["body"] for c in e["reviewThread"]["comments"]]) for e in seen] == [
        ("OPEN", ["one"]),
        ("OPEN", ["one", "two"]),
        ("RESOLVED", ["one", "two"]),
        ("RESOLVED", ["two"]),
    ]
