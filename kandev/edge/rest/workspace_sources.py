"""POST /api/v1/tasks/{task_id}/workspace-sources: the Files panel's atomic batch of sources."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kandev.domain.services import Services
from kandev.domain.workspace.sources import SourceRequest
from kandev.edge.rest.common import check_body, endpoint, json_object, task_json
from kandev.graphql.contract import command

ADD_SOURCES = command("addWorkspaceSources")


def source_requests(body: dict[str, Any]) -> list[SourceRequest]:
    # add_workspace_sources_kandev's sources, with the task named by the path.
    check_body(ADD_SOURCES.json_schema(without=("task_id",)), body)
    return [SourceRequest(**source) for source in body["sources"]]


@endpoint
async def add_workspace_sources(request: Request, services: Services) -> Response:
    """200 with the task's sources after the batch (`changed: false` for an exact retry)."""
    added = await services.workspace_sources.add(
        request.path_params["task_id"], source_requests(await json_object(request))
    )
    body = {
        "task": await task_json(services, added.task.id),
        "sources": [
            {
                "type": s.kind,
                "id": s.id,
                "name": s.name,
                "added": s.added,
                "path": s.path,
                "base_branch": s.base_branch,
                "branch": s.branch,
            }
            for s in added.sources
        ],
        "changed": added.changed,
        "task_workspace_path": added.task_workspace_path,
    }
    return JSONResponse(body)
