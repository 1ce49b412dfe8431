"""GET /api/v1/workspaces/{id}/automations/export[/zip]: a workspace's automations as YAML or as a zip of
one file each; an unknown workspace and one the caller cannot see are the same 404."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from kandev.domain.services import Services
from kandev.edge.rest.common import endpoint


@endpoint
async def export_automations(request: Request, services: Services) -> Response:
    text = await services.automations.export_yaml(request.path_params["workspace_id"])
    return Response(text.encode(), media_type="application/yaml")


@endpoint
async def export_automations_zip(request: Request, services: Services) -> Response:
    archive = await services.automations.export_zip(request.path_params["workspace_id"])
    headers = {"Content-Disposition": 'attachment; filename="automations.zip"'}
    return Response(archive, media_type="application/zip", headers=headers)
