"""Attachments through the running app: uploaded over REST, referenced by createTask and sendMessage over GraphQL
and by message_task_kandev over MCP, handed by a real worker to the scripted ACP agent (as ACP content when it
says it takes it, else in its working directory), and refused, typed, when they are not the caller's to give."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import select

from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models import Attachment, Message, Session
from tests.support.attachments import NOTES, png, uploaded
from tests.support.session_tokens import side_token
from tests.support.watch import watching

pytestmark = pytest.mark.slow

CREATE = """mutation($input: CreateTaskInput!) { createTask(input: $input) {
  __typename ... on CreateTaskPayload { task { id sessions { id } } }
  ... on Error { code message fields } } }"""
SEND = """mutation($input: SendMessageInput!) { sendMessage(input: $input) {
  __typename ... on SendMessagePayload { session { id } } ... on Error { code message fields } } }"""
MESSAGES = """query($id: ID!) { task(id: $id) { sessions { messages(first: 50) { nodes {
  kind text attachments { id name size contentType url } } } } } }"""


@pytest.fixture
async def app_http(live) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"http://{live.address}", timeout=30) as client:
        yield client


async def graphql(http: httpx.AsyncClient, query: str, **variables: Any) -> dict[str, Any]:
    body = (await http.post("/graphql", json={"query": query, "variables": variables})).json()
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


async def scripted_profile(services: Any, workspace_id: str, **env: str) -> str:
    [profile] = [p for p in await services.agent_profiles.list(workspace_id) if p.kind == "SCRIPTED"]
    await services.agent_profiles.update(profile.id, AgentProfileFields(env=env))
    return profile.id


async def agent_messages(db: Any, session_id: str, kind: str = "AGENT") -> list[Message]:
    async with db.read() as s:
        query = select(Message).where(Message.session_id == session_id, Message.kind == kind).order_by(Message.seq)
        return list(await s.scalars(query))


async def task_with_session(services: Any, workspace_id: str, title: str) -> tuple[str, str]:
    """A task whose session is open (its first turn queued): messages can go to it."""
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title=title, start_agent=False))).task
    started = await services.sessions.start_task(task.id, "/say ready", None)
    return task.id, started.session.id


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_a_task_created_with_an_image_and_a_file_hands_both_to_an_agent_that_takes_them_as_acp_content(
    live, app_http, services, db, bus, workspace_id
):
    await scripted_profile(services, workspace_id, KANDEV_SCRIPTED_PROMPT_CAPABILITIES="image,embeddedContext")
    image, notes = png(4, 4), NOTES
    shot = await uploaded(app_http, "shot.png", image, "image/png")
    text = await uploaded(app_http, "notes.md", notes, "text/markdown")
    data = await graphql(
        app_http,
        CREATE,
        input={
            "workspaceId": workspace_id,
            "title": "Fix the layout",
            "prompt": "/attachments",
            "attachmentIds": [shot["id"], text["id"]],
        },
    )
    task = data["createTask"]["task"]
    session_id = task["sessions"][0]["id"]
    async with watching(bus, db, session_id) as watch:
        turn = await watch.next_turn_end(timeout=60)
    assert turn.state == "COMPLETED", turn.error
    [said] = await agent_messages(db, session_id)
    received = json.loads(said.text)["attachments"]
    assert [(r["type"], r["mime_type"], r["size"], r["sha256"]) for r in received] == [
        ("image", "image/png", len(image), digest(image)),
        ("resource", "text/plain", len(notes), digest(notes)),
    ]
    listed = (await graphql(app_http, MESSAGES, id=task["id"]))["task"]["sessions"][0]["messages"]["nodes"]
    [user] = [m for m in listed if m["kind"] == "USER"]
    assert [(a["name"], a["contentType"], a["size"]) for a in user["attachments"]] == [
        ("shot.png", "image/png", len(image)),
        ("notes.md", "text/plain", len(notes)),
    ]
    served = await app_http.get(user["attachments"][0]["url"])
    assert served.status_code == 200 and served.content == image


async def test_an_agent_without_those_capabilities_finds_the_files_in_its_working_directory_named_in_the_prompt(
    live, app_http, services, db, bus, workspace_id, tmp_path
):
    log = tmp_path / "prompts.jsonl"
    await scripted_profile(services, workspace_id, KANDEV_SCRIPTED_LOG=str(log))
    task_id, session_id = await task_with_session(services, workspace_id, "Read it")
    notes = await uploaded(app_http, "notes.md", NOTES, "text/markdown")
    sent = await graphql(
        app_http, SEND, input={"taskId": task_id, "prompt": "/say got it", "attachmentIds": [notes["id"]]}
    )
    assert sent["sendMessage"]["session"]["id"] == session_id
    async with watching(bus, db, session_id) as watch:
        await watch.turns_ended(2, timeout=60)
    relative = f".kandev/attachments/{notes['id'][:8]}-notes.md"
    prompts = [json.loads(line)["prompt"] for line in log.read_text().splitlines()]
    assert len(prompts) == 2 and relative not in prompts[0] and relative in prompts[1]
    async with db.read() as s:
        session = await s.get(Session, session_id)
    assert session is not None and session.working_dir
    assert (Path(session.working_dir) / relative).read_bytes() == NOTES


async def test_a_link_the_agent_planted_in_its_working_directory_is_never_written_through(
    live, app_http, services, db, bus, workspace_id, tmp_path
):
    task_id, session_id = await task_with_session(services, workspace_id, "Hostile")
    async with watching(bus, db, session_id) as watch:
        await watch.next_turn_end(timeout=60)
        async with db.read() as s:
            workdir = Path((await s.get(Session, session_id)).working_dir)
        outside = tmp_path / "outside"
        outside.mkdir()
        (workdir / ".kandev").mkdir(exist_ok=True)
        os.symlink(outside, workdir / ".kandev" / "attachments")  # what a hostile agent can do in its worktree
        notes = await uploaded(app_http, "notes.md", NOTES, "text/markdown")
        await graphql(
            app_http, SEND, input={"taskId": task_id, "prompt": "/say second", "attachmentIds": [notes["id"]]}
        )
        turn = await watch.next_turn_end(timeout=60)
    assert turn.state == "COMPLETED"
    assert list(outside.iterdir()) == []
    notes_of_turn = [m.text for m in await agent_messages(db, session_id, "SYSTEM")]
    assert any("could not be written into the working directory" in text for text in notes_of_turn)


async def as_agent(address: str, db: Any, session_id: str, tool: str, arguments: dict[str, Any]) -> Any:
    """A tool call over /mcp/session with a token of the session, as its agent makes it."""
    token = await side_token(db, session_id)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(20.0)) as http,
        Client(streamable_http_client(f"http://{address}/mcp/session", http_client=http), mode="legacy") as client,
    ):
        return await client.call_tool(tool, arguments)


async def test_message_task_kandev_gives_an_agent_an_attachment_of_the_same_task_and_refuses_another_tasks(
    live, app_http, services, db, bus, workspace_id
):
    """A parent's agent hands its child the child's own screenshot again; its own one is another task's."""
    await scripted_profile(services, workspace_id, KANDEV_SCRIPTED_PROMPT_CAPABILITIES="image")
    parent_shot = await uploaded(app_http, "parent.png", png(), "image/png")
    child_image = png(2, 2, (0, 90, 200))
    child_shot = await uploaded(app_http, "child.png", child_image, "image/png")
    parent = (
        await graphql(
            app_http,
            CREATE,
            input={
                "workspaceId": workspace_id,
                "title": "Lead",
                "prompt": "/say lead",
                "attachmentIds": [parent_shot["id"]],
            },
        )
    )["createTask"]["task"]
    child = (
        await graphql(
            app_http,
            CREATE,
            input={
                "workspaceId": workspace_id,
                "title": "Part",
                "parentId": parent["id"],
                "prompt": "/say part",
                "attachmentIds": [child_shot["id"]],
            },
        )
    )["createTask"]["task"]
    parent_session, child_session = parent["sessions"][0]["id"], child["sessions"][0]["id"]
    async with watching(bus, db, child_session) as watch:
        await watch.next_turn_end(timeout=60)
        again = await as_agent(
            live.address,
            db,
            parent_session,
            "message_task_kandev",
            {"task_id": child["id"], "prompt": "/attachments", "attachment_ids": [child_shot["id"]]},
        )
        assert not again.is_error, again.content
        await watch.next_turn_end(timeout=60)
    said = (await agent_messages(db, child_session))[-1]
    assert [(r["type"], r["sha256"]) for r in json.loads(said.text)["attachments"]] == [("image", digest(child_image))]
    refused = await as_agent(
        live.address,
        db,
        parent_session,
        "message_task_kandev",
        {"task_id": child["id"], "prompt": "look", "attachment_ids": [parent_shot["id"]]},
    )
    assert refused.is_error
    assert refused.structured_content["code"] == "VALIDATION"
    assert refused.structured_content["fields"]["reason"] == "other_task"
    # An attachment belongs to one task: a new task takes none of its creator's task's files.
    offered = await as_agent(
        live.address, db, parent_session, "create_task_kandev", {"title": "More", "attachment_ids": [parent_shot["id"]]}
    )
    assert offered.is_error and "attachment_ids" in str(offered.content), offered.content
    async with db.read() as s:
        assert (await s.get(Attachment, parent_shot["id"])).task_id == parent["id"]


async def test_a_reference_that_is_not_the_callers_to_give_is_refused_and_binds_nothing(
    live, app_http, services, db, workspace_id
):
    task_id, _ = await task_with_session(services, workspace_id, "Refs")
    mine = await uploaded(app_http, "a.png", png(), "image/png")
    unknown = "00000000-0000-0000-0000-000000000000"
    cases = [
        ([mine["id"], unknown], "not_found"),
        ([mine["id"], mine["id"]], "duplicate"),
    ]
    for ids, reason in cases:
        answer = await graphql(app_http, SEND, input={"taskId": task_id, "prompt": "hi", "attachmentIds": ids})
        assert answer["sendMessage"]["__typename"] == "ValidationError"
        assert answer["sendMessage"]["fields"]["reason"] == reason
    many = [(await uploaded(app_http, f"{n}.png", png(), "image/png"))["id"] for n in range(11)]
    too_many = await graphql(app_http, SEND, input={"taskId": task_id, "prompt": "hi", "attachmentIds": many})
    assert too_many["sendMessage"]["__typename"] == "ValidationError"
    async with db.read() as s:
        bound = await s.scalar(select(Attachment.id).where(Attachment.task_id.is_not(None)).limit(1))
    assert bound is None  # nothing half-bound by a refused message


async def test_a_deleted_tasks_attachments_are_deleted_with_it(live, app_http, services, db, workspace_id):
    shot = await uploaded(app_http, "a.png", png(), "image/png")
    created = await graphql(
        app_http,
        CREATE,
        input={"workspaceId": workspace_id, "title": "Gone", "attachmentIds": [shot["id"]], "startAgent": False},
    )
    task_id = created["createTask"]["task"]["id"]
    assert (await app_http.get(f"/api/v1/attachments/{shot['id']}")).status_code == 200
    await graphql(app_http, "mutation($id: ID!) { deleteTask(taskId: $id) { __typename } }", id=task_id)
    async with db.read() as s:
        assert await s.get(Attachment, shot["id"]) is None
    assert (await app_http.get(f"/api/v1/attachments/{shot['id']}")).status_code == 404


async def test_another_users_upload_is_not_found_to_a_second_person(services, db, workspace_id):
    """Unbound uploads are their uploader's alone (the same answer as an unknown id)."""
    record = await services.attachments.upload("a.png", "image/png", png())
    task_id, _ = await task_with_session(services, workspace_id, "Mine")
    other = services.ctx.with_principal(replace(services.principal, user_id="someone-else", login="other"))
    with pytest.raises(Exception) as refused:
        await Services(other).sessions.send_message(task_id, "hi", attachment_ids=[record.id])
    assert getattr(refused.value, "fields", {}).get("reason") == "not_found"
    with pytest.raises(Exception) as hidden:
        await Services(other).attachments.download(record.id)
    assert type(hidden.value).__name__ == "NotFoundError"


async def test_an_agent_reads_a_tasks_attachments_in_its_conversation_to_name_them_again(
    live, app_http, services, db, bus, workspace_id
):
    shot = await uploaded(app_http, "child.png", png(), "image/png")
    parent = (
        await graphql(app_http, CREATE, input={"workspaceId": workspace_id, "title": "Lead", "prompt": "/say lead"})
    )["createTask"]["task"]
    child = (
        await graphql(
            app_http,
            CREATE,
            input={
                "workspaceId": workspace_id,
                "title": "Part",
                "parentId": parent["id"],
                "prompt": "/say part",
                "attachmentIds": [shot["id"]],
            },
        )
    )["createTask"]["task"]
    async with watching(bus, db, child["sessions"][0]["id"]) as watch:
        await watch.next_turn_end(timeout=60)
    read = await as_agent(
        live.address,
        db,
        parent["sessions"][0]["id"],
        "get_task_conversation_kandev",
        {"task_id": child["id"], "sort": "asc"},
    )
    assert not read.is_error, read.content
    [user] = [m for m in read.structured_content["messages"] if m["kind"] == "USER"]
    assert user["attachments"] == [
        {"id": shot["id"], "name": "child.png", "size": shot["size"], "content_type": "image/png"}
    ]
