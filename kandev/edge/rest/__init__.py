"""The REST endpoints the spec names: thin adapters over the same domain services as GraphQL and MCP."""

from __future__ import annotations

from starlette.routing import Route

from kandev.domain.automations.records import WEBHOOK_ROUTE
from kandev.edge.rest import attachments, exports, github_webhook, tasks, webhooks, workspace_sources


def routes() -> list[Route]:
    return [
        Route("/api/v1/tasks", tasks.create_task, methods=["POST"]),
        Route("/api/v1/attachments", attachments.upload_attachment, methods=["POST"]),
        Route("/api/v1/attachments/{attachment_id}", attachments.download_attachment, methods=["GET"]),
        # No personal access token: the App's HMAC signature is the credential.
        Route("/api/v1/github/webhook", github_webhook.github_webhook, methods=["POST"]),
        Route(
            "/api/v1/workspaces/{workspace_id}/tasks/by-external-id",
            tasks.task_by_external_id,
            methods=["GET", "DELETE"],
        ),
        Route(
            "/api/v1/tasks/{task_id}/workspace-sources",
            workspace_sources.add_workspace_sources,
            methods=["POST"],
        ),
        Route(
            "/api/v1/workspaces/{workspace_id}/automations/export",
            exports.export_automations,
            methods=["GET"],
        ),
        Route(
            "/api/v1/workspaces/{workspace_id}/automations/export/zip",
            exports.export_automations_zip,
            methods=["GET"],
        ),
        Route(WEBHOOK_ROUTE, webhooks.automation_webhook, methods=["POST"]),
    ]
