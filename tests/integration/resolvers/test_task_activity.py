"""Task.activity: what a board card shows about a task's agent, read for a whole page in one statement,
and only ever about the caller's own tasks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kandev.domain.services import Services
from kandev.models import AgentProfile, Clarification, Message, Session, Task, Turn
from kandev.models.base import utcnow
from tests.conftest import GraphQLCaller
from tests.integration.test_sidebar_queries import statements_for
from tests.support.board import add_tasks
from tests.support.client_ops import client_operations

ACTIVITY = """query($id: ID!) { task(id: $id) { activity {
  agentProfileId agentName lastActivityAt preview hasRun lastTurnFailed needsAnswer } } }"""


async def _session(db: Any, task_id: str, profile: str, *, age: int, said: list[str], turn: str = "COMPLETED") -> str:
    """A session `age` minutes old on the task, run by a new profile named `profile`, with one turn that
    ended in `turn` and the agent's messages `said`, each a second apart."""
    async with db.transaction() as tx:
        workspace_id = (await tx.get(Task, task_id)).workspace_id
        row = AgentProfile(workspace_id=workspace_id, name=profile, kind="SCRIPTED")
        tx.add(row)
        await tx.flush()
        start = utcnow() - timedelta(minutes=age)
        session = Session(task_id=task_id, agent_profile_id=row.id, state="WAITING_FOR_INPUT", created_at=start)
        tx.add(session)
        await tx.flush()
        ended = Turn(session_id=session.id, seq=1, state=turn, started_at=start, ended_at=start)
        tx.add(ended)
        await tx.flush()
        tx.add_all(
            Message(
                session_id=session.id,
                turn_id=ended.id,
                seq=i + 1,
                kind="AGENT",
                text=text,
                created_at=start + timedelta(seconds=i + 1),
            )
            for i, text in enumerate(said)
        )
        return session.id


async def test_a_task_that_never_ran_has_no_agent_preview_or_attention(gql, db, workspace_id):
    [task_id] = (await add_tasks(db, workspace_id, 2))[1:]  # add_tasks gives every other task a session
    activity = (await gql(ACTIVITY, id=task_id))["task"]["activity"]
    assert activity == {
        "agentProfileId": None,
        "agentName": None,
        "lastActivityAt": None,
        "preview": None,
        "hasRun": False,
        "lastTurnFailed": False,
        "needsAnswer": False,
    }


async def test_the_card_shows_the_newest_sessions_agent_and_its_last_words_as_plain_text(gql, db, workspace_id):
    [task_id] = (await add_tasks(db, workspace_id, 2))[1:]
    await _session(db, task_id, "Old agent", age=60, said=["an hour ago"])
    await _session(
        db, task_id, "New agent", age=3, said=["first", "**Tests pass**, see [the PR](https://x.test)\n\nDone."]
    )
    activity = (await gql(ACTIVITY, id=task_id))["task"]["activity"]
    assert activity["agentName"] == "New agent"
    assert activity["preview"] == "Tests pass, see the PR Done."
    assert activity["hasRun"] is True and activity["lastTurnFailed"] is False and activity["needsAnswer"] is False
    # the newest message of the newest session, not the older session's
    assert activity["lastActivityAt"] > (utcnow() - timedelta(minutes=4)).isoformat()


async def test_a_failed_last_turn_and_a_pending_question_show_on_the_card(gql, db, workspace_id):
    [task_id] = (await add_tasks(db, workspace_id, 2))[1:]
    session_id = await _session(db, task_id, "Scripted agent", age=1, said=["trying"], turn="FAILED")
    activity = (await gql(ACTIVITY, id=task_id))["task"]["activity"]
    assert (activity["lastTurnFailed"], activity["needsAnswer"]) == (True, False)
    async with db.transaction() as tx:
        tx.add(Clarification(session_id=session_id, task_id=task_id, questions=[{"id": "q", "prompt": "Which?"}]))
    activity = (await gql(ACTIVITY, id=task_id))["task"]["activity"]
    assert (activity["lastTurnFailed"], activity["needsAnswer"]) == (True, True)


async def test_the_board_page_reads_every_cards_activity_in_one_statement(gql, db, workspace_id):
    tasks = client_operations()["TASKS"]
    ids = await add_tasks(db, workspace_id, 3)
    for n, task_id in enumerate(ids):
        await _session(db, task_id, f"Agent {n}", age=n + 1, said=[f"said by {n}"])
    few, _ = await statements_for(gql, db, tasks, w=workspace_id, first=500)
    more_ids = await add_tasks(db, workspace_id, 30)
    for n, task_id in enumerate(more_ids[:10]):
        await _session(db, task_id, f"More {n}", age=n + 1, said=[f"more by {n}"])
    many, data = await statements_for(gql, db, tasks, w=workspace_id, first=500)
    assert few == many
    previews = {node["id"]: node["activity"]["preview"] for node in data["tasks"]["nodes"]}
    assert [previews[i] for i in ids] == ["said by 0", "said by 1", "said by 2"]


async def test_another_users_tasks_never_show_in_my_cards_and_mine_never_in_theirs(
    gql: GraphQLCaller, db: Any, workspace_id: str, bob: Services, bob_workspace: str
):
    [mine] = (await add_tasks(db, workspace_id, 2))[1:]
    [bobs] = (await add_tasks(db, bob_workspace, 2))[1:]
    await _session(db, mine, "My agent", age=2, said=["my secret plan"])
    await _session(db, bobs, "Bob's agent", age=1, said=["bob's secret plan"])
    as_bob = GraphQLCaller(bob)
    denied = await as_bob.raw(ACTIVITY, id=mine)
    assert denied.errors and "my secret plan" not in repr(denied.data)
    denied_page = await as_bob.raw(client_operations()["TASKS"], w=workspace_id, first=50)
    assert denied_page.errors and "my secret plan" not in repr(denied_page.data)
    page = await gql(client_operations()["TASKS"], w=workspace_id, first=50)
    previews = [node["activity"]["preview"] for node in page["tasks"]["nodes"]]
    assert "my secret plan" in previews and "bob's secret plan" not in previews
    bob_page = await as_bob(client_operations()["TASKS"], w=bob_workspace, first=50)
    assert [n["activity"]["agentName"] for n in bob_page["tasks"]["nodes"] if n["id"] == bobs] == ["Bob's agent"]
