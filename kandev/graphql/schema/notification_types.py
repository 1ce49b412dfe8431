"""Notification channels as clients see them (never their URL), their inputs and payloads."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.notifications.channels import ChannelRecord
from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.errors import ExpectedError


@strawberry.enum(description="What a channel is told about.")
class NotificationEvent(Enum):
    NEEDS_INPUT = strawberry.enum_value("NEEDS_INPUT", description="An agent asks a question or a permission.")
    TURN_FAILED = strawberry.enum_value("TURN_FAILED", description="A turn failed.")
    REVIEW_READY = strawberry.enum_value("REVIEW_READY", description="A task reached review.")


@strawberry.enum(description="How the channel's last attempt went.")
class NotificationChannelStatus(Enum):
    NEW = "NEW"
    OK = "OK"
    SLOW = "SLOW"
    FAILING = "FAILING"


@strawberry.type(description="Where a workspace's notifications go; the URL is stored encrypted and never answered.")
class NotificationChannel:
    id: strawberry.ID
    name: str
    service: str = strawberry.field(description="The URL's scheme: json, slack, discord, mailto, ntfy, ...")
    target: str = strawberry.field(description="The host it reaches, when the URL names one.")
    events: list[NotificationEvent]
    enabled: bool
    status: NotificationChannelStatus
    last_attempt_at: datetime | None
    last_delivered_at: datetime | None
    last_error: str | None = strawberry.field(description="Why the last attempt failed (no URL, no token).")
    last_duration_ms: int | None
    pending_deliveries: int = strawberry.field(description="Notifications still being tried (with backoff).")
    failed_deliveries: int = strawberry.field(description="Notifications given up after every retry.")
    created_at: datetime

    @classmethod
    def of(cls, record: ChannelRecord) -> NotificationChannel:
        return cls(
            id=strawberry.ID(record.id),
            name=record.name,
            service=record.service,
            target=record.target,
            events=[NotificationEvent(e) for e in record.events],
            enabled=record.enabled,
            status=NotificationChannelStatus(record.status),
            last_attempt_at=record.last_attempt_at,
            last_delivered_at=record.last_delivered_at,
            last_error=record.last_error,
            last_duration_ms=record.last_duration_ms,
            pending_deliveries=record.pending,
            failed_deliveries=record.failed,
            created_at=record.created_at,
        )


URL_HELP = (
    "The target in Apprise's URL form: json://host[:port]/path (a generic JSON webhook; jsons:// for https), "
    "slack://..., discord://..., mailto://user:pass@host, ntfy://topic, ... Stored encrypted."
)


@strawberry.input
class CreateNotificationChannelInput:
    workspace_id: strawberry.ID = arg("The workspace.", min_length=1)
    name: str = arg("A name people recognise.", min_length=1, max_length=200)
    url: str = arg(URL_HELP, min_length=1, max_length=2000)
    events: list[NotificationEvent] = arg("What it is told about.", min_items=1, max_items=3)


@strawberry.input(description="Only the fields given change.")
class UpdateNotificationChannelInput:
    channel_id: strawberry.ID = arg("The channel.", min_length=1)
    name: str | None = arg("A new name.", default=None, min_length=1, max_length=200)
    url: str | None = arg(URL_HELP, default=None, min_length=1, max_length=2000)
    events: list[NotificationEvent] | None = arg("What it is told about.", default=None, min_items=1, max_items=3)
    enabled: bool | None = arg("false: nothing is sent to it.", default=None)


@strawberry.type
class NotificationChannelPayload:
    channel: NotificationChannel


@strawberry.type(description="Whether the test notification reached the target, else why not.")
class TestNotificationPayload:
    delivered: bool
    error: str | None


NotificationChannelResult: TypeAlias = Annotated[
    NotificationChannelPayload | ExpectedError, strawberry.union("NotificationChannelResult")
]
TestNotificationResult: TypeAlias = Annotated[
    TestNotificationPayload | ExpectedError, strawberry.union("TestNotificationResult")
]
