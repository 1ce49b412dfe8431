"""What people are waiting to answer in a workspace, as one connection of three kinds."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.sessions.pending_actions import PendingPage, PendingRow
from kandev.graphql.schema.config_types import PermissionRequest
from kandev.graphql.schema.fields import described
from kandev.graphql.schema.types import PageInfo
from kandev.graphql.schema.workflow_engine_types import Clarification, ParentQuestion
from kandev.models import Clarification as ClarificationRow
from kandev.models import PermissionRequest as PermissionRow

PendingActionItem: TypeAlias = Annotated[
    Clarification | PermissionRequest | ParentQuestion,
    strawberry.union(
        "PendingActionItem",
        description="One thing an agent waits on: a question to the operator (answerClarification), a "
        "permission request (resolvePermission) or an autopilot child's question to its parent.",
    ),
]


@strawberry.type
class PendingActionEdge:
    cursor: str
    node: PendingActionItem


@strawberry.type(description="A page of what agents wait on in a workspace, oldest first.")
class PendingActionConnection:
    edges: list[PendingActionEdge]
    page_info: PageInfo
    # Counted only when the query selects totalCount.
    count: strawberry.Private[int | None]

    @described("Pending items of all three kinds in the workspace, the same on every page.")
    def total_count(self) -> int:
        assert self.count is not None, "the pendingActions resolver counts whenever totalCount is selected"
        return self.count

    @strawberry.field
    def nodes(self) -> list[PendingActionItem]:
        return [edge.node for edge in self.edges]


def _node(row: PendingRow) -> Clarification | PermissionRequest | ParentQuestion:
    if isinstance(row, ClarificationRow):
        return Clarification(row=row)
    if isinstance(row, PermissionRow):
        return PermissionRequest(row=row)
    return ParentQuestion(row=row)


def pending_connection(page: PendingPage) -> PendingActionConnection:
    edges = [PendingActionEdge(cursor=c, node=_node(r)) for r, c in zip(page.rows, page.cursors, strict=True)]
    page_info = PageInfo(has_next_page=page.has_next_page, end_cursor=page.cursors[-1] if page.cursors else None)
    return PendingActionConnection(edges=edges, page_info=page_info, count=page.total_count)
