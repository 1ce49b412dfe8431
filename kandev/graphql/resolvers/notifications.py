"""Notification channels: list, create, update, delete and send a test."""

from __future__ import annotations

import strawberry

from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.notification_types import (
    CreateNotificationChannelInput,
    NotificationChannel,
    NotificationChannelPayload,
    NotificationChannelResult,
    TestNotificationPayload,
    TestNotificationResult,
    UpdateNotificationChannelInput,
)


async def notification_channels(info: Info, workspace_id: strawberry.ID) -> list[NotificationChannel]:
    return [
        NotificationChannel.of(r) for r in await info.context.services.notification_channels.list(str(workspace_id))
    ]


def _payload(record: object) -> NotificationChannelPayload:
    return NotificationChannelPayload(channel=NotificationChannel.of(record))  # type: ignore[arg-type]


async def create_notification_channel(info: Info, input: CreateNotificationChannelInput) -> NotificationChannelResult:
    call = info.context.services.notification_channels.create(
        str(input.workspace_id), input.name, input.url, [e.name for e in input.events]
    )
    return await attempt(call, _payload)


async def update_notification_channel(info: Info, input: UpdateNotificationChannelInput) -> NotificationChannelResult:
    call = info.context.services.notification_channels.update(
        str(input.channel_id),
        name=input.name,
        url=input.url,
        events=None if input.events is None else [e.name for e in input.events],
        enabled=input.enabled,
    )
    return await attempt(call, _payload)


async def delete_notification_channel(info: Info, id: strawberry.ID) -> NotificationChannelResult:
    return await attempt(info.context.services.notification_channels.delete(str(id)), _payload)


async def test_notification_channel(info: Info, id: strawberry.ID) -> TestNotificationResult:
    call = info.context.services.notification_channels.test(str(id))
    return await attempt(
        call, lambda outcome: TestNotificationPayload(delivered=outcome.delivered, error=outcome.error)
    )
