"""A parent's answer racing an operator's superseding prompt, 200 times, with the child's turns run after each
race: one outcome per question, one child turn per accepted answer, every prompt run once."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.errors import ConflictError
from kandev.domain.sessions.turns import claim_turn, finish_turn
from kandev.models import ParentQuestion, QueuedPrompt
from tests.integration.engine.test_parent_questions import family

pytestmark = pytest.mark.reliability

ROUNDS = 200


async def run_queued_turns(services: Any, session_id: str) -> list[tuple[str, str]]:
    """Claim and finish the session's turns until nothing is claimable, as a worker would; (source, text) each."""
    ran = []
    while True:
        claimed = await claim_turn(services.ctx, session_id, worker_name="reliability", job_id=None, lease_seconds=60)
        if claimed is None:
            return ran
        ran.append((claimed.prompt_source, claimed.prompt_text))
        await finish_turn(services.ctx, claimed.turn_id, stop_reason="end_turn")


async def test_an_answer_racing_a_superseding_prompt_has_one_outcome_and_one_child_turn_per_accepted_answer(
    services, db, workspace_id
):
    f = await family(services, workspace_id)
    child_session = f["child_session"].id
    await finish_turn(services.ctx, f["turn"], stop_reason="end_turn")
    await run_queued_turns(services, child_session)
    outcomes: Counter[str] = Counter()
    began = time.monotonic()
    for round_ in range(ROUNDS):
        asked = await f["child_agent"].parent_questions.ask([{"prompt": f"round {round_}?"}], None)
        question_id = asked.question.id
        assert asked.question.state == "PENDING"

        async def answer(text: str = f"answer {round_}", question_id: str = question_id) -> bool:
            try:
                await f["parent_agent"].sessions.send_message(f["child"].id, text, reply_to_question_id=question_id)
            except ConflictError:
                return False
            return True

        accepted, _ = await asyncio.wait_for(
            asyncio.gather(answer(), services.sessions.send_message(f["child"].id, f"operator {round_}")), timeout=30
        )
        ran = await run_queued_turns(services, child_session)
        async with db.read() as s:
            state = await s.scalar(select(ParentQuestion.state).where(ParentQuestion.id == question_id))
            left = list(
                await s.scalars(
                    select(QueuedPrompt.text).where(
                        QueuedPrompt.session_id == child_session, QueuedPrompt.state != "CLAIMED"
                    )
                )
            )
        assert state == ("ANSWERED" if accepted else "SUPERSEDED"), (round_, state, accepted)
        answer_turns = [text for source, text in ran if source == "parent_answer"]
        assert len(answer_turns) == (1 if accepted else 0), (round_, ran)
        assert all(question_id in text and f"answer {round_}" in text for text in answer_turns)
        assert [text for _, text in ran].count(f"operator {round_}") == 1, (round_, ran)
        assert left == [], (round_, left)  # nothing held back, nothing lost
        outcomes[state] += 1
    elapsed = time.monotonic() - began
    assert sum(outcomes.values()) == ROUNDS
    print(f"\n[reliability] answer versus supersede x{ROUNDS}: {dict(outcomes)} in {elapsed:.1f}s")
