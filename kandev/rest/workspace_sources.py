"""POST /api/v1/tasks/{task_id}/workspace-sources: the Files panel's atomic batch of sources."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kandev.domain.services import Services
from kandev.domain.workspace.sources import SourceRequest
from kandev.rest.common import check_body, endpoint, json_object, task_json


def tool_schema(name: str, without: tuple[str, ...]) -> dict[str, Any]:
    """TEMPORARY until addWorkspaceSources declares its sources the way the tool does."""
    from kandev.mcp_bridge import tools  # noqa: F401
    from kandev.mcp_bridge.catalogue import CATALOGUE

    schema = dict(CATALOGUE[name].validation_schema)
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in without}
    return schema


def source_requests(body: dict[str, Any]) -> list[SourceRequest]:
    # add_workspace_sources_kandev's sources, with the task named by the path.
    check_body(tool_schema("add_workspace_sources_kandev", without=("task_id",)), body)
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
