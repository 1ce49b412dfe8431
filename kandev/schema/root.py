"""Root Query, Mutation and Subscription types and the schema object."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.extensions import MaskErrors

from kandev.domain.errors import DomainError
from kandev.resolvers import subscriptions as subscription_resolvers
from kandev.resolvers import tasks as task_resolvers
from kandev.resolvers import workspaces as workspace_resolvers
from kandev.schema.errors import ERROR_TYPES


@strawberry.type
class Query:
    workspaces = strawberry.field(resolver=workspace_resolvers.workspaces, description="Workspaces the caller can see.")
    workflows = strawberry.field(resolver=workspace_resolvers.workflows, description="A workspace's workflows.")
    task = strawberry.field(resolver=task_resolvers.task)
    tasks = strawberry.field(resolver=task_resolvers.tasks, description="A workspace's tasks, newest first.")


@strawberry.type
class Mutation:
    create_task = strawberry.mutation(resolver=task_resolvers.create_task)
    update_task = strawberry.mutation(resolver=task_resolvers.update_task)
    move_task = strawberry.mutation(resolver=task_resolvers.move_task, description="Move a task to another step by hand.")
    archive_task = strawberry.mutation(resolver=task_resolvers.archive_task)
    delete_task = strawberry.mutation(resolver=task_resolvers.delete_task)


@strawberry.type
class Subscription:
    task_events = strawberry.subscription(
        resolver=subscription_resolvers.task_events, description="Every change to the workspace's tasks, as it commits."
    )


def _should_mask(error: object) -> bool:
    # Domain errors raised outside a union (queries, subscriptions) are safe to show as they are.
    original = getattr(error, "original_error", None)
    return original is not None and not isinstance(original, DomainError)


class KandevSchema(strawberry.Schema):
    def process_errors(self, errors: list[Any], execution_context: Any = None) -> None:
        # Expected domain errors are answers, not incidents: log only the rest.
        unexpected = [e for e in errors if not isinstance(getattr(e, "original_error", None), DomainError)]
        if unexpected:
            super().process_errors(unexpected, execution_context)


schema = KandevSchema(
    query=Query,
    mutation=Mutation,
    subscription=Subscription,
    types=list(ERROR_TYPES),
    extensions=[MaskErrors(should_mask_error=_should_mask)],
)
