"""Files the server ships itself: the GraphiQL page with its vendored scripts (no CDN, works offline)
and the favicon."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

STATIC = Path(__file__).resolve().parent / "static"
GRAPHIQL = STATIC / "graphiql"
# Stored gzip-compressed (the GraphiQL bundle is 3.5 MB as published); names carry their versions.
GRAPHIQL_ASSETS = {
    "react-18.2.0.production.min.js": "text/javascript; charset=utf-8",
    "react-dom-18.2.0.production.min.js": "text/javascript; charset=utf-8",
    "graphiql-3.8.3.min.js": "text/javascript; charset=utf-8",
    "graphiql-3.8.3.min.css": "text/css; charset=utf-8",
}
_IMMUTABLE = "public, max-age=31536000, immutable"
_TOKEN_HEADERS = '{\n  "Authorization": "Bearer kdv_..."\n}'


@cache
def graphiql_page(auth: bool) -> str:
    """With auth on, the Headers tab starts with the Authorization header to fill in."""
    template = (GRAPHIQL / "index.html").read_text()
    return template.replace("__KANDEV_DEFAULT_HEADERS__", json.dumps(_TOKEN_HEADERS if auth else ""))


def graphiql_response(auth: bool) -> HTMLResponse:
    """Never inside another site's frame, where a click could run that site's query with the stored token."""
    headers = {
        "Cache-Control": "no-cache",
        "X-Frame-Options": "DENY",
        "Content-Security-Policy": "frame-ancestors 'none'",
    }
    return HTMLResponse(graphiql_page(auth), headers=headers)


@cache
def _compressed(name: str) -> bytes:
    return (GRAPHIQL / f"{name}.gz").read_bytes()


async def graphiql_asset(request: Request) -> Response:
    """One of the fixed GraphiQL files (never a path from the request), gzip when the client takes it."""
    name = request.path_params["name"]
    media_type = GRAPHIQL_ASSETS.get(name)
    if media_type is None:
        return PlainTextResponse("Not Found", status_code=404)
    headers = {"Cache-Control": _IMMUTABLE, "Vary": "Accept-Encoding"}
    body = _compressed(name)
    if "gzip" in request.headers.get("accept-encoding", "").lower():
        headers["Content-Encoding"] = "gzip"
    else:
        body = gzip.decompress(body)
    return Response(body, media_type=media_type, headers=headers)


async def favicon(request: Request) -> Response:
    return Response(
        (STATIC / "favicon.ico").read_bytes(),
        media_type="image/x-icon",
        headers={"Cache-Control": "public, max-age=86400"},
    )
