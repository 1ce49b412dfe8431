"""GraphQL over HTTP as its specification asks, around strawberry's ASGI view: the answer's media type is
negotiated (application/graphql-response+json for a client that asks for it, application/json otherwise);
under the new type a request error (a document that does not parse or validate, variables that do not
coerce) is a 400 without `data`; every refusal is a JSON error with a code instead of strawberry's plain
text; a mutation over GET is 405 (Allow: POST), a subscription over plain HTTP a typed 400 that names the
WebSocket, and any other method 405 (Allow: GET, POST). WebSocket messages are read by the same JSON
decoder."""

from __future__ import annotations

import json
from typing import Any

from cross_web import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from strawberry.asgi import GraphQL
from strawberry.exceptions import MissingQueryError
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType

from kandev.domain.errors import ValidationError
from kandev.domain.validation import decode_json as json_value

RESPONSE_TYPE = "application/graphql-response+json"
JSON_TYPE = "application/json"
METHODS = ("GET", "POST")
SUBSCRIPTION_NEEDS_WEBSOCKET = (
    "subscriptions are served over the WebSocket at /graphql (subprotocol graphql-transport-ws), not plain HTTP"
)
# Strawberry's own refusals (a missing query, an unknown operation name, a bad parameter), by status.
_CODES = {400: "BAD_REQUEST", 405: "METHOD_NOT_ALLOWED"}


class HttpRefusal(HTTPException):
    """A request refused before execution, answered as a GraphQL error with `code` (and `extensions`)."""

    def __init__(
        self, status: int, message: str, code: str, headers: dict[str, str] | None = None, **extensions: Any
    ) -> None:
        super().__init__(status, message)
        self.code = code
        self.headers = headers or {}
        self.extensions = {key: value for key, value in extensions.items() if value is not None}


def answer_type(accept: str | None) -> str:
    """RESPONSE_TYPE when Accept names it and ranks it no lower than application/json; else JSON_TYPE, also
    for `*/*` and no Accept at all (older clients)."""
    if not accept or RESPONSE_TYPE not in accept.lower():
        return JSON_TYPE
    quality: dict[str, float] = {}
    for item in accept.lower().split(","):
        media, *parameters = (part.strip() for part in item.split(";"))
        q = next((value for name, _, value in (p.partition("=") for p in parameters) if name.strip() == "q"), "1")
        try:
            quality[media] = max(quality.get(media, 0.0), float(q))
        except ValueError:
            continue
    wanted = quality.get(RESPONSE_TYPE, 0.0)
    older = max(quality.get(JSON_TYPE, 0.0), quality.get("application/*", 0.0), quality.get("*/*", 0.0))
    return RESPONSE_TYPE if wanted > 0 and wanted >= older else JSON_TYPE


def content_type(media_type: str) -> str:
    """The answer's Content-Type, naming its encoding as the spec asks (JSON is always UTF-8 here)."""
    return f"{media_type}; charset=utf-8"


def refusal_response(refusal: HTTPException, media_type: str) -> Response:
    """A refusal as a GraphQL response with only `errors`: its message and code (and extensions)."""
    if isinstance(refusal, HttpRefusal):
        extensions: dict[str, Any] = {"code": refusal.code, **refusal.extensions}
        headers = refusal.headers
    else:
        extensions, headers = {"code": _CODES.get(refusal.status_code, "BAD_REQUEST")}, {}
    body = json.dumps({"errors": [{"message": refusal.reason, "extensions": extensions}]})
    return Response(
        body, status_code=refusal.status_code, headers={**headers, "content-type": content_type(media_type)}
    )


def _request_error(result: ExecutionResult) -> bool:
    """Nothing ran: the document did not parse or validate, or the variables did not coerce (no error has a
    path, which every field error has)."""
    errors = result.errors or []
    return result.data is None and bool(errors) and all(error.path is None for error in errors)


def _wrong_transport(operation: OperationType) -> HttpRefusal:
    if operation == OperationType.SUBSCRIPTION:
        return HttpRefusal(400, SUBSCRIPTION_NEEDS_WEBSOCKET, "SUBSCRIPTION_NEEDS_WEBSOCKET")
    return HttpRefusal(405, "mutations need POST", "METHOD_NOT_ALLOWED", headers={"Allow": "POST"})


class GraphQLOverHttp(GraphQL[Any, None]):
    """Strawberry's view with the HTTP rules above; WebSocket messages read by the same JSON decoder."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            if request.method not in METHODS:
                raise HttpRefusal(
                    405, "/graphql takes GET and POST", "METHOD_NOT_ALLOWED", headers={"Allow": ", ".join(METHODS)}
                )
            response = await self.run(request)
        except HTTPException as refusal:
            response = refusal_response(refusal, answer_type(request.headers.get("accept")))
        await response(scope, receive, send)

    def parse_json(self, data: str | bytes) -> Any:
        # The body, and GET's `variables` and `extensions`: a JSON object, else a typed 400.
        try:
            value = json_value(data)
        except ValidationError as error:
            raise HttpRefusal(400, error.message, error.code, field=error.field, fields=error.wire_fields()) from None
        if not isinstance(value, dict):
            raise HttpRefusal(400, "the request body must be a JSON object", ValidationError.code, field="body")
        return value

    def decode_json(self, data: str | bytes) -> object:
        # A WebSocket message. One too deep to walk (or not UTF-8) is answered like one that is not JSON (4400),
        # instead of a RecursionError that ends the connection with a traceback.
        try:
            return json_value(data, field="message")
        except ValidationError as error:
            raise json.JSONDecodeError(error.message, "", 0) from None

    async def execute_single(  # noqa: PLR0917 - strawberry's signature
        self,
        request: Request,
        request_adapter: Any,
        sub_response: Response,
        context: Any,
        root_value: None,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        # As strawberry's, but subscriptions are never executed over plain HTTP (they would fail as a null).
        method = request_adapter.method
        allowed = {OperationType.QUERY} if method == "GET" else {OperationType.QUERY, OperationType.MUTATION}
        try:
            return await self.schema.execute(
                request_data.query,
                root_value=root_value,
                variable_values=request_data.variables,
                context_value=context,
                operation_name=request_data.operation_name,
                allowed_operation_types=allowed,
                operation_extensions=request_data.extensions,
            )
        except InvalidOperationTypeError as error:
            raise _wrong_transport(error.operation_type) from None
        except CannotGetOperationTypeError as error:
            raise HTTPException(400, error.as_http_error_reason()) from None
        except MissingQueryError:
            raise HTTPException(400, "No GraphQL query found in the request") from None

    async def get_sub_response(self, request: Request) -> Response:  # type: ignore[override]
        response = await super().get_sub_response(request)
        response.media_type = answer_type(request.headers.get("accept"))
        return response

    async def process_result(self, request: Request, result: ExecutionResult) -> GraphQLHTTPResponse:
        processed = await super().process_result(request, result)
        if _request_error(result) and answer_type(request.headers.get("accept")) == RESPONSE_TYPE:
            processed.pop("data", None)
        return processed

    def create_response(
        self, response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse], sub_response: Response
    ) -> Response:
        response = super().create_response(response_data, sub_response)
        response.headers["content-type"] = content_type(sub_response.media_type or JSON_TYPE)
        if isinstance(response_data, dict) and "data" not in response_data:
            # Only a request error under RESPONSE_TYPE loses its `data`: 400, or 500 when it was our fault.
            errors = [error for error in response_data.get("errors") or [] if isinstance(error, dict)]
            internal = any((error.get("extensions") or {}).get("code") == "INTERNAL" for error in errors)
            response.status_code = 500 if internal else 400
        return response
