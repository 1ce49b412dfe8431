"""Inputs and payloads of task dependencies and rich output."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import strawberry

from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.session_types import Message
from kandev.graphql.schema.types import Task


@strawberry.input(description="A 'waits on' link: taskId starts only after dependsOnTaskId has completed.")
class TaskDependencyInput:
    depends_on_task_id: strawberry.ID = arg("The task that must complete first.", min_length=1)
    task_id: strawberry.ID | None = arg(
        "The waiting task. In a task session: your own task (the default and only choice); an automation run "
        "names another task of its workspace.",
        default=None,
        agent="The waiting task. It defaults to your own task, the only choice in a task session; an automation "
        "run names another task of its workspace here (its own task can't wait or be waited on).",
        min_length=1,
    )


@strawberry.type
class TaskDependencyPayload:
    task: Task = strawberry.field(description="The waiting task, with its blockedBy and state after the change.")
    depends_on_task_id: strawberry.ID
    changed: bool = strawberry.field(description="False when the link already was (add) or wasn't (remove) there.")


@strawberry.type
class ShowRichOutputPayload:
    transcript_message: Message = strawberry.field(
        description="The RICH_OUTPUT transcript message; its data.rich_output is what renders."
    )


AddTaskDependencyResult: TypeAlias = Annotated[
    TaskDependencyPayload | ExpectedError, strawberry.union("AddTaskDependencyResult")
]
RemoveTaskDependencyResult: TypeAlias = Annotated[
    TaskDependencyPayload | ExpectedError, strawberry.union("RemoveTaskDependencyResult")
]
ShowRichOutputResult: TypeAlias = Annotated[
    ShowRichOutputPayload | ExpectedError, strawberry.union("ShowRichOutputResult")
]
