"""POST /api/v1/tasks (idempotent with external_id) and the by-external-id lookup and release."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kandev.domain.errors import ValidationError
from kandev.domain.services import Services
from kandev.edge.arguments import ArgumentClash, resolve_aliases
from kandev.edge.rest.common import check_body, endpoint, json_object, operation_context, task_json
from kandev.graphql.contract import TASK, command, run

CREATE = command("createTask")
CREATED = f"... on CreateTaskPayload {{ deduplicated creation_complete: creationComplete task {{ {TASK} }} }}"


def create_variables(body: dict[str, Any]) -> dict[str, Any]:
    """createTask's fields in snake_case (create_task_kandev's), its declared aliases accepted."""
    try:
        body = resolve_aliases(body, CREATE.aliases)
    except ArgumentClash as clash:
        raise ValidationError(str(clash), field=clash.alias) from None
    check_body(CREATE.json_schema(), body)
    return CREATE.variables(body)


@endpoint
async def create_task(request: Request, services: Services) -> Response:
    """201 with the new task, or 200 with the task already holding the external_id."""
    variables = create_variables(await json_object(request))
    data = await run(operation_context(services), CREATE.document(CREATED), variables)
    payload = data["createTask"]
    body = {
        "task": payload["task"],
        "deduplicated": payload["deduplicated"],
        "creation_complete": payload["creation_complete"],
    }
    return JSONResponse(body, status_code=200 if payload["deduplicated"] else 201)


@endpoint
async def task_by_external_id(request: Request, services: Services) -> Response:
    """GET: the task holding the identity, settled or not. DELETE: free the identity, leave the task."""
    workspace_id = request.path_params["workspace_id"]
    external_id = request.query_params.get("external_id")
    if request.method == "DELETE":
        await services.tasks.release_external_id(workspace_id, external_id)
        return Response(status_code=204)
    record = await services.tasks.find_by_external_id(workspace_id, external_id)
    body = {"task": await task_json(services, record.id), "creation_complete": record.creation_completed_at is not None}
    return JSONResponse(body)
