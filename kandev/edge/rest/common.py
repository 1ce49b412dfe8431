"""What every REST handler shares: the caller's services, JSON bodies, and domain errors as statuses."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kandev.domain.automations.webhooks import Refusal, WebhookRefused
from kandev.domain.errors import (
    ConflictError,
    DomainError,
    NotFoundError,
    PermissionDeniedError,
    QuotaExceededError,
    UnavailableError,
    UnprocessableError,
    ValidationError,
)
from kandev.domain.services import Services
from kandev.domain.validation import check_tree, decode_json
from kandev.edge.arguments import argument_errors
from kandev.edge.authentication import authenticate
from kandev.graphql.contract import TASK_QUERY, Refused, run
from kandev.graphql.schema.context import Context
from kandev.wiring import AppState

log = logging.getLogger("kandev.edge.rest")
# Most specific first: an UnprocessableError is also a ConflictError.
STATUS: dict[type[DomainError], int] = {
    ValidationError: 400,
    PermissionDeniedError: 403,
    NotFoundError: 404,
    UnprocessableError: 422,
    UnavailableError: 503,
    ConflictError: 409,
}
# A mutation's error member carries its domain error's code and type name (the schema names its error types
# after the domain's): the code picks the status, else the type (a ConflictError with a code of its own).
_STATUS_BY_CODE = {kind.code: status for kind, status in STATUS.items()}
_STATUS_BY_TYPE = {kind.__name__: status for kind, status in STATUS.items()}
Handler = Callable[[Request, Services], Awaitable[Response]]


class Unauthenticated(Exception):
    pass


def error_response(status: int, message: str, code: str, **fields: Any) -> JSONResponse:
    body = {"error": message, "code": code, **{k: v for k, v in fields.items() if v is not None}}
    return JSONResponse(body, status_code=status)


def domain_error(error: DomainError) -> JSONResponse:
    """The error's status, with its code and structured fields (never a submitted value)."""
    status = next((s for kind, s in STATUS.items() if isinstance(error, kind)), 400)
    field = error.field if isinstance(error, ValidationError) else None
    return _answer(status, error.message, error.code, field, error.wire_fields())


def _answer(status: int, message: str, code: str, field: str | None, fields: dict[str, Any]) -> JSONResponse:
    """A quota over time is 429 with Retry-After (when the next one fits); a quota of things held stays 409."""
    response = error_response(status, message, code, field=field, fields=fields)
    retry_after = fields.get("retry_after_seconds")
    if code == QuotaExceededError.code and isinstance(retry_after, int):
        response.status_code = 429
        response.headers["Retry-After"] = str(retry_after)
    return response


def webhook_refusal(refused: WebhookRefused, statuses: dict[Refusal, tuple[int, str]]) -> JSONResponse:
    """A webhook endpoint's refusal as its status and code; a rate limit says when to try again."""
    status, code = statuses[refused.refusal]
    response = error_response(status, refused.message, code)
    if refused.retry_after is not None:
        response.headers["Retry-After"] = str(refused.retry_after)
    return response


async def services_for(request: Request) -> Services:
    """The caller the authentication door admits: with KANDEV_AUTH=on, the owner of the bearer token."""
    state: AppState = request.app.state.kandev
    principal = await authenticate(state, request.headers.get("authorization"))
    if principal is None:
        raise Unauthenticated
    return state.services(principal)


def endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Authenticate, run, and translate: 401 without a valid token, domain errors to their status,
    anything unexpected to a masked 500."""

    @wraps(handler)
    async def run(request: Request) -> Response:
        try:
            services = await services_for(request)
        except Unauthenticated:
            response = error_response(401, "a valid personal access token is required", "UNAUTHENTICATED")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        try:
            check_tree(dict(request.path_params), "")
            check_tree(dict(request.query_params), "")
            return await handler(request, services)
        except DomainError as error:
            return domain_error(error)
        except Refused as error:
            return refusal(error)
        except Exception:
            log.exception("%s %s failed", request.method, request.url.path)
            return error_response(500, "the request failed unexpectedly; the error was logged", "INTERNAL")

    return run


async def json_object(request: Request) -> dict[str, Any]:
    body = decode_json(await request.body() or b"null")
    if not isinstance(body, dict):
        raise ValidationError("the body must be a JSON object", field="body")
    check_tree(body, "")
    return body


def check_body(schema: dict[str, Any], body: dict[str, Any]) -> None:
    """A body that breaks the schema is a 400 naming every problem (never echoing a value)."""
    problems = argument_errors(schema, body)
    if problems:
        raise ValidationError("; ".join(problems), field="body")


def operation_context(services: Services) -> Context:
    """A GraphQL context for running an operation in process as the REST caller."""
    return Context.for_services(services)


async def task_json(services: Services, task_id: str) -> dict[str, Any]:
    """A task in the one JSON shape REST and MCP share (kandev.graphql.contract.TASK_FIELDS)."""
    return (await run(operation_context(services), TASK_QUERY, {"id": task_id}))["task"]


def refusal(error: Refused) -> JSONResponse:
    """A mutation's error member as the status its domain error would get."""
    status = _STATUS_BY_CODE.get(error.code) or _STATUS_BY_TYPE.get(error.typename, 400)
    return _answer(status, error.message, error.code, error.field, error.fields)
