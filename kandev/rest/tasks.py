"""POST /api/v1/tasks (idempotent with external_id) and the by-external-id lookup and release."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kandev.domain.errors import ValidationError
from kandev.domain.records import TaskRecord
from kandev.domain.repositories import RepositoryChoice
from kandev.domain.services import Services
from kandev.domain.tasks import CreateTask
from kandev.rest.common import check_body, endpoint, json_object, tool_schema

TASK_FIELDS = (
    "id",
    "workspace_id",
    "workflow_id",
    "workflow_step_id",
    "parent_id",
    "title",
    "prompt",
    "state",
    "autopilot",
    "origin",
    "external_id",
    "agent_profile_id",
    "executor_profile_id",
    "block_reason",
    "created_at",
    "updated_at",
    "archived_at",
)


def task_json(record: TaskRecord) -> dict[str, Any]:
    data = record.to_json()
    return {key: data[key] for key in TASK_FIELDS}


def create_command(body: dict[str, Any]) -> CreateTask:
    # create_task_kandev's fields, with workspace_id required: a REST caller has no task to default it from.
    check_body(tool_schema("create_task_kandev", required=("workspace_id",)), body)
    if "prompt" in body and "description" in body:
        raise ValidationError("send either prompt or description, not both", field="description")
    for key in ("parent_id", "blocked_by"):
        value = body.get(key)
        values = value if isinstance(value, list) else [value]
        if "self" in values:
            raise ValidationError(f"{key} 'self' only works inside a task session", field=key)
    return CreateTask(
        workspace_id=body["workspace_id"],
        title=body["title"],
        prompt=body.get("prompt", body.get("description")) or "",
        parent_id=body.get("parent_id") or None,
        autopilot=bool(body.get("autopilot", False)),
        external_id=body.get("external_id"),
        workflow_id=body.get("workflow_id"),
        workflow_step_id=body.get("workflow_step_id"),
        agent_profile_id=body.get("agent_profile_id"),
        executor_profile_id=body.get("executor_profile_id"),
        start_agent=body.get("start_agent"),
        blocked_by=list(body.get("blocked_by", [])),
        start_when_unblocked=body.get("start_when_unblocked"),
        repositories=[
            RepositoryChoice(repository_id=r["repository_id"], base_branch=r.get("base_branch"))
            for r in body.get("repositories", [])
        ],
    )


@endpoint
async def create_task(request: Request, services: Services) -> Response:
    """201 with the new task, or 200 with the task already holding the external_id."""
    created = await services.tasks.create(create_command(await json_object(request)))
    body = {
        "task": task_json(created.task),
        "deduplicated": created.deduplicated,
        "creation_complete": created.creation_complete,
    }
    return JSONResponse(body, status_code=200 if created.deduplicated else 201)


@endpoint
async def task_by_external_id(request: Request, services: Services) -> Response:
    """GET: the task holding the identity, settled or not. DELETE: free the identity, leave the task."""
    workspace_id = request.path_params["workspace_id"]
    external_id = request.query_params.get("external_id")
    if request.method == "DELETE":
        await services.tasks.release_external_id(workspace_id, external_id)
        return Response(status_code=204)
    record = await services.tasks.find_by_external_id(workspace_id, external_id)
    return JSONResponse({"task": task_json(record), "creation_complete": record.creation_completed_at is not None})
