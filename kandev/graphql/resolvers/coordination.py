"""Agent coordination: spawning sibling sessions and finding related tasks."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.records import SessionRecord
from kandev.domain.sessions.service import MAX_SESSION_NAME_LENGTH
from kandev.domain.sessions.service import spawn_session as spawn
from kandev.domain.validation import MAX_TITLE_LENGTH
from kandev.graphql.resolvers.common import attempt, optional_id
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.payloads import SpawnSessionPayload, SpawnSessionResult
from kandev.graphql.schema.session_types import Session
from kandev.graphql.schema.types import Task


@strawberry.input(
    description="Agent only: a named sibling session on your task (default) or another task of your workspace."
)
class SpawnSessionInput:
    task_id: strawberry.ID | None = arg(
        "The task. Default: your own task.", default=None, agent="Target task. Default: your own task."
    )
    name: str | None = arg("A name for the session.", default=None, max_length=MAX_SESSION_NAME_LENGTH)
    prompt: str | None = arg("First prompt for the new session's agent.", default=None)
    agent_profile_id: strawberry.ID | None = arg("Agent profile. Default: the task's or the workspace's.", default=None)


async def spawn_session(info: Info, input: SpawnSessionInput) -> SpawnSessionResult:
    call = spawn(
        info.context.services.ctx,
        optional_id(input.task_id),
        input.name,
        input.prompt,
        optional_id(input.agent_profile_id),
    )
    return await attempt(
        call,
        lambda r: SpawnSessionPayload(
            task=Task.of(r.task),
            session=Session.of(SessionRecord.of(r.session)),
            queued_prompt_id=strawberry.ID(r.prompt.id) if r.prompt else None,
        ),
    )


@strawberry.input(description="Agent only: the title for your task (the session that owns the title handoff).")
class SetTaskTitleInput:
    title: str = arg("The title.", min_length=1, max_length=MAX_TITLE_LENGTH)


@strawberry.type
class SetTaskTitlePayload:
    status: str = strawberry.field(description="accepted, title_not_pending or title_not_owner.")
    task: Task
    renamed_branches: list[str]
    preserved_branches: list[str]
    failed_branches: list[str]


SetTaskTitleResult: TypeAlias = Annotated[SetTaskTitlePayload | ExpectedError, strawberry.union("SetTaskTitleResult")]


async def set_task_title(info: Info, input: SetTaskTitleInput) -> SetTaskTitleResult:
    return await attempt(
        info.context.services.titles.set_title(input.title),
        lambda r: SetTaskTitlePayload(
            status=r.status,
            task=Task.of(r.task),
            renamed_branches=r.renamed,
            preserved_branches=r.preserved,
            failed_branches=r.failed,
        ),
    )
