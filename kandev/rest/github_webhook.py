"""POST /api/v1/github/webhook: the GitHub App's deliveries (push, check_run). No personal access token: the
`X-Hub-Signature-256` HMAC of the raw body under the App's webhook secret is the credential, checked before
the body is parsed. 404 without an App, 401 on a bad or missing signature, 413 over 1 MiB (also refused
earlier by the HTTP guard), 400 on a body that is not a JSON object, 202 otherwise."""

from __future__ import annotations

import json
import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kandev.domain.github.webhooks import handle_delivery, signature_ok, webhook_secret
from kandev.http_guard import WEBHOOK_BODY_LIMIT
from kandev.rest.common import error_response
from kandev.state import SYSTEM, AppState

log = logging.getLogger("kandev.github.webhooks")


async def github_webhook(request: Request) -> Response:
    state: AppState = request.app.state.kandev
    services = state.services(SYSTEM)
    body = await request.body()
    if len(body) > WEBHOOK_BODY_LIMIT:
        return error_response(413, "the body is larger than 1 MiB", "BODY_TOO_LARGE")
    try:
        secret = await webhook_secret(services.ctx)
        if secret is None:
            return error_response(404, "no GitHub App is configured on this server", "NOT_FOUND")
        if not signature_ok(secret, body, request.headers.get("x-hub-signature-256")):
            return error_response(401, "the delivery's X-Hub-Signature-256 does not verify", "BAD_SIGNATURE")
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            payload = None
        if not isinstance(payload, dict):
            return error_response(400, "the body must be a JSON object", "VALIDATION")
        event = request.headers.get("x-github-event", "")
        outcome = await handle_delivery(services.ctx, event, request.headers.get("x-github-delivery"), payload)
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
