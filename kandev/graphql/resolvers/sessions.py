"""Session queries and the start / message / stop mutations."""

from __future__ import annotations

import strawberry

from kandev.domain.records import SessionRecord
from kandev.domain.sessions.service import Delivery, DeliveryMode, StopResult
from kandev.graphql.resolvers.common import attempt, optional_id
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.inputs import SendMessageInput, StartTaskInput, TaskIdArgument
from kandev.graphql.schema.payloads import (
    SendMessagePayload,
    SendMessageResult,
    StartTaskPayload,
    StartTaskResult,
    StopTaskPayload,
    StopTaskResult,
)
from kandev.graphql.schema.session_types import Session
from kandev.graphql.schema.types import Task


def _session(row: object) -> Session:
    return Session.of(SessionRecord.of(row))


async def session(info: Info, id: strawberry.ID) -> Session:
    return _session(await info.context.services.sessions.get(str(id)))


def started_payload(value: Delivery) -> StartTaskPayload:
    return StartTaskPayload(task=Task.of(value.task), session=_session(value.session))


def _sent(value: Delivery) -> SendMessagePayload:
    return SendMessagePayload(
        task=Task.of(value.task),
        session=_session(value.session),
        queued_prompt_id=strawberry.ID(value.prompt.id),
    )


def _stopped(value: StopResult) -> StopTaskPayload:
    return StopTaskPayload(
        task=Task.of(value.task),
        status=value.status,
        stopped_sessions=[_session(s) for s in value.stopped_sessions],
    )


async def start_task(info: Info, input: StartTaskInput) -> StartTaskResult:
    call = info.context.services.sessions.start_task(
        str(input.task_id), input.prompt, optional_id(input.agent_profile_id)
    )
    return await attempt(call, started_payload)


async def send_message(info: Info, input: SendMessageInput) -> SendMessageResult:
    call = info.context.services.sessions.send_message(
        str(input.task_id),
        input.prompt,
        session_id=optional_id(input.session_id),
        delivery_mode=DeliveryMode(input.delivery_mode.value),
        reply_to_question_id=optional_id(input.reply_to_question_id),
        attachment_ids=[str(i) for i in input.attachment_ids or []],
    )
    return await attempt(call, _sent)


async def stop_task(info: Info, task_id: TaskIdArgument) -> StopTaskResult:
    return await attempt(info.context.services.sessions.stop_task(str(task_id)), _stopped)
