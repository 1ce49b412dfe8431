"""Inputs, payloads and result unions of the run mutations (each declared once here), and automationEvents."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.automations.firing import Admission
from kandev.domain.errors import NotFoundError
from kandev.graphql.schema.automation_types import (
    AutomationAck,
    AutomationRun,
    AutomationThreadMessage,
    NextRunIndicator,
    indicator_of,
)
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.enums import AutomationEventKind
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.fields import described

strawberry.enum(
    Admission,
    name="RunAdmission",
    description="What a firing did: FIRED (a run started), SKIPPED (the concurrency cap was reached; a skipped "
    "run says why), DEDUPLICATED (that occurrence already fired), REFUSED (the automation or trigger is "
    "disabled; nothing was written).",
)

_RUN_ID = "The run's id."


@strawberry.input
class RunAutomationNowInput:
    automation_id: strawberry.ID = arg(
        "The automation to fire now (trigger type MANUAL, never deduplicated).", min_length=1
    )


@strawberry.input
class StopRunInput:
    run_id: strawberry.ID = arg(_RUN_ID, min_length=1)


@strawberry.input
class DeleteRunInput:
    run_id: strawberry.ID = arg(_RUN_ID, min_length=1)


@strawberry.input
class DeleteAllRunsInput:
    automation_id: strawberry.ID = arg("The automation whose runs (and unreferenced hidden tasks) go.", min_length=1)


@strawberry.type
class RunAutomationNowPayload:
    admission: Admission
    reason: str | None = strawberry.field(description="Why nothing ran (SKIPPED, REFUSED).")
    run: AutomationRun | None = strawberry.field(description="The run written (FIRED, SKIPPED), else null.")


@strawberry.type
class AutomationRunPayload:
    run: AutomationRun


@strawberry.type
class DeleteRunPayload:
    run_id: strawberry.ID


@strawberry.type
class DeleteAllRunsPayload:
    automation_id: strawberry.ID
    deleted_count: int


@strawberry.type(
    description="A run changed (it was created, its status moved, or it was deleted), an automation's next "
    "scheduled fire moved, its pre-flight acknowledgement was stored, or its thread has a new entry."
)
class AutomationEvent:
    kind: AutomationEventKind
    automation_id: strawberry.ID | None = strawberry.field(
        default=None, description="Null only in the SUBSCRIBED message."
    )
    run: AutomationRun | None = strawberry.field(
        default=None, description="The run as it is now; null in SUBSCRIBED and NEXT_FIRE_CHANGED."
    )
    next_fire: datetime | None = strawberry.field(
        default=None, description="NEXT_FIRE_CHANGED: the automation's next fire; null when it has none."
    )
    ack: AutomationAck | None = strawberry.field(
        default=None, description="ACK_CHANGED: the automation's pre-flight acknowledgement as stored."
    )
    thread_message: AutomationThreadMessage | None = strawberry.field(
        default=None, description="THREAD_MESSAGE: the new entry of the automation's thread."
    )

    @described(
        "The automation's next-run indicator as of this message (as Automation.nextRun); null in SUBSCRIBED and "
        "once the automation is gone. Read only when selected."
    )
    async def next_run(self, info: Info) -> NextRunIndicator | None:
        if self.automation_id is None:
            return None
        try:
            automation = await info.context.services.automations.get(str(self.automation_id))
        except NotFoundError:
            return None
        return await indicator_of(info, automation)


RunAutomationNowResult: TypeAlias = Annotated[
    RunAutomationNowPayload | ExpectedError, strawberry.union("RunAutomationNowResult")
]
StopRunResult: TypeAlias = Annotated[AutomationRunPayload | ExpectedError, strawberry.union("StopRunResult")]
DeleteRunResult: TypeAlias = Annotated[DeleteRunPayload | ExpectedError, strawberry.union("DeleteRunResult")]
DeleteAllRunsResult: TypeAlias = Annotated[
    DeleteAllRunsPayload | ExpectedError, strawberry.union("DeleteAllRunsResult")
]
