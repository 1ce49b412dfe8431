"""Mutation inputs and the filter inputs of list queries."""

from __future__ import annotations

import strawberry

from kandev.schema.enums import TaskState


@strawberry.input(description="A new task. Omitted workflow and step mean the workspace default's start step.")
class CreateTaskInput:
    workspace_id: strawberry.ID
    title: str
    prompt: str | None = None
    parent_id: strawberry.ID | None = None
    autopilot: bool | None = strawberry.field(
        default=None, description="Work on its own, asking only its parent; fixed after creation."
    )
    external_id: str | None = strawberry.field(
        default=None, description="Idempotency key, unique per workspace: a repeat returns the same task."
    )
    workflow_id: strawberry.ID | None = None
    workflow_step_id: strawberry.ID | None = None
    agent_profile_id: strawberry.ID | None = None
    executor_profile_id: strawberry.ID | None = None


@strawberry.input(description="Fields to change; state COMPLETED moves the task to its final step.")
class UpdateTaskInput:
    task_id: strawberry.ID
    title: str | None = None
    state: TaskState | None = None


@strawberry.input
class MoveTaskInput:
    task_id: strawberry.ID
    workflow_step_id: strawberry.ID
