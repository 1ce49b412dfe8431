"""One ASGI middleware in front of every HTTP and WebSocket route: known Host only (421, no DNS rebinding),
same-site Origin only (403), JSON bodies for state changes (415), no session token outside /mcp/session
(401), and a cap on /graphql and REST bodies, the webhooks' included (413, before the rest is read).

The one upload route takes multipart/form-data, but only with the header `Kandev-Upload: 1`: a cross-site
form can post multipart, never set a header, so the JSON rule keeps its purpose (no state change a page on
another site can make); its cap is an attachment's size, not KANDEV_MAX_BODY_BYTES."""

from __future__ import annotations

import ipaddress
import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kandev.domain.access.session_tokens import is_session_credential as is_session_token
from kandev.domain.attachments.content import MAX_BYTES as MAX_ATTACHMENT_BYTES
from kandev.platform.settings import Settings

MIB = 1024 * 1024
# Bodies KANDEV_MAX_BODY_BYTES caps: GraphQL's and every REST endpoint's (the MCP SDK caps its own).
_CAPPED = re.compile(r"/graphql|/api/v1/.+")
# Authenticated by their own secret or signature, posted by services that send no browser Origin and
# whatever content type they like.
_WEBHOOKS = re.compile(r"/api/v1/automations/webhook/[^/]+|/api/v1/github/webhook")
_SESSION_ENDPOINT = "/mcp/session"
UPLOAD_PATH = "/api/v1/attachments"
UPLOAD_HEADER = "kandev-upload"
# An attachment and the multipart framing around it (its part headers, the boundaries).
UPLOAD_LIMIT = MAX_ATTACHMENT_BYTES + 64 * 1024
_STATE_CHANGING = frozenset({"POST", "PUT", "PATCH"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_TOKEN_REFUSAL = "a valid personal access token is required"
_PLAIN_HOST = re.compile(r"(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


def is_loopback(host: str) -> bool:
    """`localhost`, 127.0.0.0/8 or ::1 (brackets allowed); not 0.0.0.0, which reaches every interface."""
    name = host.strip().lower().rstrip(".").removeprefix("[").removesuffix("]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None] | None:
    """(lower-case name, port) of a Host header or host[:port] setting; None when it is not a plain host."""
    if not _PLAIN_HOST.fullmatch(value.strip()):
        return None
    try:
        parts = urlsplit(f"//{value.strip()}")
        port = parts.port
    except ValueError:
        return None
    name = (parts.hostname or "").rstrip(".")
    return (name, port) if name else None


@dataclass(frozen=True)
class _Origin:
    scheme: str
    host: str
    port: int | None

    @classmethod
    def parse(cls, value: str) -> _Origin | None:
        try:
            parts = urlsplit(value.strip())
            port = parts.port
        except ValueError:
            return None
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.username is not None:
            return None
        return cls(scheme, parts.hostname.rstrip("."), port or _DEFAULT_PORTS[scheme])


class HttpGuard:
    """Wraps the whole app; what it refuses never reaches a route, so nothing runs."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        public = _Origin.parse(settings.resolved_public_url())
        # Bound to every interface with no public URL, the "public" host 0.0.0.0 names no site.
        self._public_origin = public if public is not None and not _unspecified(public.host) else None
        self._hosts = {name for name, _ in filter(None, map(split_host, _listed(settings.allowed_hosts)))}
        if self._public_origin is not None:
            self._hosts.add(self._public_origin.host)
        self._origins = set(filter(None, map(_Origin.parse, _listed(settings.allowed_origins))))
        self._max_body = settings.max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        path: str = scope["path"]
        method: str = scope.get("method", "GET")
        if scope["type"] == "http" and path == "/healthz" and method in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        webhook = scope["type"] == "http" and method == "POST" and _WEBHOOKS.fullmatch(path) is not None
        refusal = self._refusal(scope, headers, webhook)
        if refusal is not None:
            await _refuse(scope, receive, send, *refusal)
            return
        if scope["type"] == "http" and _CAPPED.fullmatch(path):
            limit = UPLOAD_LIMIT if _is_upload(scope) else self._max_body
            await _capped(self.app, scope, receive, send, limit)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers, webhook: bool) -> tuple[int, str] | None:
        host = split_host(headers.get("host", ""))
        if host is None or not (is_loopback(host[0]) or host[0] in self._hosts):
            return 421, "this server does not answer to that Host; add it to KANDEV_ALLOWED_HOSTS"
        if webhook:
            return None
        if scope["type"] == "http" and _needs_json(scope["method"], headers):
            media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if _is_upload(scope):
                if headers.get(UPLOAD_HEADER) != "1" or media_type != "multipart/form-data":
                    return 415, "an upload is multipart/form-data with the header Kandev-Upload: 1"
            elif media_type != "application/json":
                return 415, "the body must be application/json"
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin, scope, host):
            return 403, "cross-origin requests are refused; add the origin to KANDEV_ALLOWED_ORIGINS"
        if scope["path"] != _SESSION_ENDPOINT and is_session_token(headers.get("authorization")):
            return 401, _TOKEN_REFUSAL
        return None

    def _origin_allowed(self, value: str, scope: Scope, host: tuple[str, int | None]) -> bool:
        origin = _Origin.parse(value)  # `null` and anything but http(s) parse to None
        if origin is None:
            return False
        scheme: str = scope.get("scheme", "http")
        scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
        own = _Origin(scheme, host[0], host[1] or _DEFAULT_PORTS.get(scheme))
        return origin in (own, self._public_origin) or origin in self._origins


def _is_upload(scope: Scope) -> bool:
    return scope["type"] == "http" and scope.get("method") == "POST" and scope["path"] == UPLOAD_PATH


def _listed(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _needs_json(method: str, headers: Headers) -> bool:
    if method in _STATE_CHANGING:
        return True
    has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
    return method == "DELETE" and has_body


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    """An HTTP error in the shape its route's clients read; a WebSocket handshake refused before accept."""
    path: str = scope["path"]
    if path == "/mcp" or path.startswith("/mcp/"):
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    elif path == "/graphql":
        body = {"errors": [{"message": message, "extensions": {"code": _CODES[status]}}]}
    else:
        body = {"error": message, "code": _CODES[status]}
    payload = json.dumps(body).encode()
    response_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if status == 401:
        response_headers.append((b"www-authenticate", b"Bearer"))
    if scope["type"] == "websocket":
        await receive()  # websocket.connect
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": 1008})  # the server answers 403
            return
        await send({"type": "websocket.http.response.start", "status": status, "headers": response_headers})
        await send({"type": "websocket.http.response.body", "body": payload})
        return
    await send({"type": "http.response.start", "status": status, "headers": response_headers})
    await send({"type": "http.response.body", "body": payload})


_CODES = {
    401: "UNAUTHENTICATED",
    403: "FORBIDDEN_ORIGIN",
    413: "BODY_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    421: "MISDIRECTED_REQUEST",
}


def too_large(limit: int) -> str:
    """The refusal of a body over `limit` bytes, in the unit the limit was set in."""
    size = f"{limit // MIB} MiB" if limit % MIB == 0 else f"{limit} bytes"
    return f"the body is larger than {size}"


async def _capped(app: ASGIApp, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
    """Reads a body up to `limit` bytes as it arrives (a declared length is not trusted either way), answers
    413 as soon as it is beyond (the rest is never read), else replays it to the route."""
    declared = Headers(scope=scope).get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        await _refuse(scope, receive, send, 413, too_large(limit))
        return
    chunks: deque[Message] = deque()
    size = 0
    while True:
        message = await receive()
        chunks.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > limit:
            await _refuse(scope, receive, send, 413, too_large(limit))
            return
        if not message.get("more_body", False):
            break

    async def replay() -> Message:
        return chunks.popleft() if chunks else await receive()

    await app(scope, replay, send)
