"""The review loop on a real worker with the scripted agent: it writes files, a person comments on a line and
sends the review while the agent is mid-turn (queued, delivered once, one REVIEW message, a double click queues
one prompt), the agent's edit makes the thread outdated (or follows it), and the agent resolves it over MCP."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.errors import ConflictError
from kandev.domain.reviews.service import NewComment
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import Message, QueuedPrompt
from kandev.platform.event_bus import task_channel
from tests.integration.e2e.conftest import LiveSystem
from tests.support.git_repos import make_repository
from tests.support.watch import watching

pytestmark = pytest.mark.slow

APP = "".join(f"value_{n} = {n}\n" for n in range(1, 9))
CHANGES = """query($id: ID!) { task(id: $id) { changeStats { files additions deletions } changes { repositories {
  files { nodes { path status additions deletions } } } } } }"""


def write(path: str, text: str) -> str:
    return f"/write {path}\n{text}/end-write"


async def thread_state(services: Any, task_id: str, thread_id: str) -> tuple[str, int | None]:
    [thread] = [t for t in await services.reviews.threads(task_id) if t.id == thread_id]
    return thread.state, thread.line


async def until_thread(services: Any, task_id: str, thread_id: str, wanted: tuple[str, int | None]) -> None:
    async with asyncio.timeout(30):
        while await thread_state(services, task_id, thread_id) != wanted:
            await asyncio.sleep(0.1)


async def test_a_review_goes_to_the_agent_and_comes_back_resolved(
    live: LiveSystem, services, gql, bus, db, workspace_id, tmp_path
):
    repository = await services.repositories.create(workspace_id, "repo", str(make_repository(tmp_path / "repo")))
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Review me", repositories=[RepositoryChoice(repository.id)])
        )
    ).task
    notes = write("NOTES.md", "a\nb\n")
    first = f"{write('src/app.py', APP)}\n{notes}\n/say written\n/sleep 4"
    started = await services.sessions.start_task(task.id, first, None)
    session_id = started.session.id
    async with watching(bus, db, session_id) as watch:
        await watch.message("AGENT", "written", timeout=60)
        # The agent wrote two files; it is still in its turn (sleeping).
        found = (await gql(CHANGES, id=task.id))["task"]
        files = {f["path"]: f for f in found["changes"]["repositories"][0]["files"]["nodes"]}
        assert {p: (f["status"], f["additions"], f["deletions"]) for p, f in files.items()} == {
            "NOTES.md": ("ADDED", 2, 0),
            "src/app.py": ("ADDED", 8, 0),
        }
        async with asyncio.timeout(10):
            while (await gql(CHANGES, id=task.id))["task"]["changeStats"] != {
                "files": 2,
                "additions": 10,
                "deletions": 0,
            }:
                await asyncio.sleep(0.1)

        outdated = await services.reviews.add_comment(
            NewComment(task.id, "Name this `first`", path="src/app.py", line=1)
        )
        follows = await services.reviews.add_comment(NewComment(task.id, "Keep this one", path="src/app.py", line=6))
        # Sent mid-turn, twice at once and once more: one prompt, queued behind the running turn.
        sends = await asyncio.gather(
            *(services.reviews.send_to_agent(task.id, None) for _ in range(2)), return_exceptions=True
        )
        again = await services.reviews.send_to_agent(task.id, None)
        prompt_ids = {s.prompt_id for s in [*sends, again] if not isinstance(s, BaseException)}
        assert len(prompt_ids) == 1 and not any(isinstance(s, BaseException) for s in sends)
        [prompt_id] = prompt_ids
        async with db.read() as s:
            reviews = list(await s.scalars(select(QueuedPrompt).where(QueuedPrompt.source == "review")))
        assert [r.id for r in reviews] == [prompt_id]
        assert f"src/app.py:1 (thread {outdated.id})" in reviews[0].text
        assert "1 | value_1 = 1" in reviews[0].text and "- local: Name this `first`" in reviews[0].text

        turns = await watch.turns_ended(2, timeout=60)  # the review was delivered once the first turn ended
        assert [t.state for t in turns] == ["COMPLETED", "COMPLETED"]
        with pytest.raises(ConflictError):
            await services.reviews.send_to_agent(task.id, None)  # delivered: nothing left to send
        async with db.read() as s:
            shown = list(
                await s.scalars(select(Message).where(Message.session_id == session_id, Message.kind == "REVIEW"))
            )
        [review] = shown
        assert review.turn_id == turns[1].id
        assert [t["thread_id"] for t in review.data["review"]["threads"]] == [outdated.id, follows.id]
        assert review.data["review"]["threads"][0]["comments"] == [{"author": "local", "body": "Name this `first`"}]

        # The agent edits line 1 and inserts two lines above line 6's: one thread outdated, one follows.
        edited = APP.replace("value_1 = 1", "first = 1").replace("value_5 = 5\n", "value_5 = 5\n# note\n# note 2\n")
        fix = f"{write('src/app.py', edited)}\n/sleep 2"
        await services.sessions.send_message(task.id, fix)
        await until_thread(services, task.id, outdated.id, ("OUTDATED", 1))
        await until_thread(services, task.id, follows.id, ("OPEN", 8))
        await watch.turns_ended(3, timeout=60)

        resolve = json.dumps({"thread_id": outdated.id, "note": "Renamed it to `first`."})
        await services.sessions.send_message(task.id, f"/tool resolve_review_comment_kandev {resolve}")
        await watch.turns_ended(4, timeout=60)
    [thread] = [t for t in await services.reviews.threads(task.id) if t.id == outdated.id]
    assert thread.state == "RESOLVED" and thread.resolved_by is not None
    assert (thread.resolved_by.kind, thread.resolved_by.session_id) == ("AGENT", session_id)
    assert thread.anchor_text == "value_1 = 1"  # the original lines stay shown
    assert thread.comments[-1].body == "Renamed it to `first`."


async def test_task_events_tell_the_thread_outdated_when_its_line_is_edited(
    live: LiveSystem, services, bus, db, workspace_id, tmp_path
):
    repository = await services.repositories.create(workspace_id, "repo", str(make_repository(tmp_path / "repo")))
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Events", repositories=[RepositoryChoice(repository.id)])
        )
    ).task
    started = await services.sessions.start_task(task.id, write("a.txt", "keep\nchange me\n"), None)
    async with watching(bus, db, started.session.id) as watch:
        await watch.turns_ended(1, timeout=60)
        thread = await services.reviews.add_comment(NewComment(task.id, "no", path="a.txt", line=2))
        async with bus.subscribe(task_channel(workspace_id)) as events:
            await services.sessions.send_message(task.id, write("a.txt", "keep\nchanged\n"))
            async with asyncio.timeout(30):
                async for payload in events:
                    found = payload.get("review_thread")
                    if found and found["id"] == thread.id and found["state"] == "OUTDATED":
                        break
        await watch.turns_ended(2, timeout=60)
