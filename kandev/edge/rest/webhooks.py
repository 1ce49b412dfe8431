"""`POST /api/v1/automations/webhook/{automation_id}`: a webhook delivery, authenticated by the automation's
own `X-Webhook-Secret`, or by a signature made with it (`X-Kandev-Timestamp`, `X-Kandev-Signature`: see
kandev.domain.automations.webhook_auth), rather than a personal access token (the HTTP guard lets it
through without an Origin or a JSON content type, and has already refused a body over KANDEV_MAX_BODY_BYTES
with 413). The handler only verifies, records and admits (the process's WebhookIntake, which batches
concurrent deliveries); it answers 202 with the delivery's id and what it came to: `admission` fired, skipped
(the concurrency cap; `reason` says why) or deduplicated (a repeated key; the first delivery's id and run), so
a sender knows whether it runs.

The secret is never logged and never part of an answer; neither is the body."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kandev.domain.automations.webhook_auth import Signed
from kandev.domain.automations.webhooks import Refusal, WebhookRefused
from kandev.edge.http_guard import too_large
from kandev.edge.rest.common import error_response, webhook_refusal
from kandev.wiring import AppState

log = logging.getLogger("kandev.edge.rest.webhooks")
_STATUS = {
    Refusal.UNKNOWN: (404, "NOT_FOUND"),
    Refusal.UNAUTHENTICATED: (401, "UNAUTHENTICATED"),
    Refusal.STALE: (401, "STALE_SIGNATURE"),
    Refusal.REPLAYED: (409, "REPLAYED"),
    Refusal.RATE_LIMITED: (429, "RATE_LIMITED"),
    Refusal.DISABLED: (409, "DISABLED"),
    Refusal.BAD_KEY: (400, "VALIDATION"),
}


async def automation_webhook(request: Request) -> Response:
    state: AppState = request.app.state.kandev
    body = await request.body()
    if len(body) > state.settings.max_body_bytes:  # the guard refuses these first
        return error_response(413, too_large(state.settings.max_body_bytes), "BODY_TOO_LARGE")
    headers = request.headers
    key = headers.get("idempotency-key") or headers.get("x-github-delivery")
    try:
        receipt = await state.webhook_intake.receive(
            request.path_params["automation_id"],
            headers.get("x-webhook-secret"),
            body,
            key,
            signed=Signed(headers.get("x-kandev-timestamp"), headers.get("x-kandev-signature")),
            # The peer's address, never X-Forwarded-For: a header any sender can write.
            source=request.client.host if request.client else None,
        )
    except WebhookRefused as refused:
        return webhook_refusal(refused, _STATUS)
    except Exception:
        log.exception("webhook delivery for automation %s failed", request.path_params["automation_id"][:36])
        return error_response(500, "the request failed unexpectedly; the error was logged", "INTERNAL")
    answer = {
        "delivery_id": receipt.delivery_id,
        "deduplicated": receipt.deduplicated,
        "admission": receipt.admission,
        "reason": receipt.reason,
        "run_id": receipt.run_id,
    }
    return JSONResponse(answer, status_code=202)
