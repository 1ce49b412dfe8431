"""POST /api/v1/github/webhook: the GitHub App's deliveries (push, check_run). No personal access token: the
`X-Hub-Signature-256` HMAC of the raw body under the App's webhook secret is the credential, checked before
the body is parsed. 404 without an App, 401 on a bad or missing signature (429 with Retry-After once one
address sent too many: kandev.domain.automations.webhook_auth), 413 over KANDEV_MAX_BODY_BYTES (1 MiB;
refused first by the HTTP guard), 400 on a body that is not a JSON object, 202 otherwise (`duplicate` for a
delivery id or a body handled before)."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kandev.domain.automations.webhooks import Refusal, WebhookRefused
from kandev.domain.github.webhooks import receive_delivery
from kandev.edge.http_guard import too_large
from kandev.edge.rest.common import error_response, webhook_refusal
from kandev.wiring import SYSTEM, AppState

log = logging.getLogger("kandev.adapters.github.webhooks")
_STATUS = {
    Refusal.UNKNOWN: (404, "NOT_FOUND"),
    Refusal.UNAUTHENTICATED: (401, "BAD_SIGNATURE"),
    Refusal.RATE_LIMITED: (429, "RATE_LIMITED"),
    Refusal.BAD_BODY: (400, "VALIDATION"),
}


async def github_webhook(request: Request) -> Response:
    state: AppState = request.app.state.kandev
    body = await request.body()
    if len(body) > state.settings.max_body_bytes:  # the guard refuses these first
        return error_response(413, too_large(state.settings.max_body_bytes), "BODY_TOO_LARGE")
    headers = request.headers
    try:
        outcome = await receive_delivery(
            state.services(SYSTEM).ctx,
            body,
            headers.get("x-hub-signature-256"),
            headers.get("x-github-event", ""),
            headers.get("x-github-delivery"),
            source=request.client.host if request.client else None,
        )
    except WebhookRefused as refused:
        return webhook_refusal(refused, _STATUS)
    except Exception:
        log.exception("a GitHub webhook delivery failed")
        return error_response(500, "the delivery failed unexpectedly; the error was logged", "INTERNAL")
    return JSONResponse(
        {
            "accepted": True,
            "event": outcome.event,
            "duplicate": outcome.duplicate,
            "ignored": outcome.ignored,
            "recorded": outcome.recorded,
            "fired": sum(1 for o in outcome.fired if o.fired),
        },
        status_code=202,
    )
