"""`kandev dashboard`: rq-dashboard on loopback against this installation's Redis, behind a WSGI guard.

The guard answers only to loopback Host names (no DNS rebinding), refuses cross-site requests (the dashboard
has state-changing routes, one of them a GET), keeps markup out of every string of its JSON (its pages insert
some unescaped), and with KANDEV_AUTH=on asks for HTTP basic auth whose password is an admin's personal access token.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import Callable, Iterable
from typing import Any

from kandev.domain.access.tokens import principal_for_token
from kandev.domain.context import Principal
from kandev.edge.http_guard import is_loopback, split_host
from kandev.platform.database import Database

DEFAULT_PORT = 9181
REALM = "kandev dashboard"
_SAME_SITE = frozenset({"same-origin", "none"})
_SECURITY_HEADERS = [
    # Its pages use inline scripts and styles and compile underscore templates (eval); nothing may come from or
    # go to anywhere else.
    (
        "Content-Security-Policy",
        "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'",
    ),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
]

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Verify = Callable[[str], "Principal | None"]


def basic_auth_password(header: str | None) -> str | None:
    """The password of an `Authorization: Basic …` value (the user name is ignored), else None."""
    if not header:
        return None
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic" or not encoded.strip():
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    _, sep, password = decoded.partition(":")
    return password if sep and password else None


# Look-alikes, not entities: its job list escapes (an entity would show as `&lt;`), its job page does not, and a
# traceback's `<module>` must read right in both. Without < and > no markup can start; the values its templates
# put into attributes unescaped are job ids and URLs, which Kandev makes.
_NO_MARKUP = str.maketrans({"<": "‹", ">": "›"})


def _escaped(value: Any) -> Any:
    if isinstance(value, str):
        return value.translate(_NO_MARKUP)
    if isinstance(value, list):
        return [_escaped(item) for item in value]
    if isinstance(value, dict):
        return {key: _escaped(item) for key, item in value.items()}
    return value


class DashboardGuard:
    """WSGI middleware: what it refuses never reaches rq-dashboard."""

    def __init__(self, app: WsgiApp, verify: Verify | None) -> None:
        self.app = app
        self.verify = verify  # None: auth off, the loopback bind is the boundary

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        refusal = self._refusal(environ)
        if refusal is not None:
            status, message, extra = refusal
            body = (message + "\n").encode()
            headers = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))]
            start_response(status, headers + extra + _SECURITY_HEADERS)
            return [body]
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[..., Any]:
            captured.update(status=status, headers=headers, exc_info=exc_info)
            return lambda data: None  # rq-dashboard (Flask) never uses write()

        chunks = self.app(environ, capture)
        try:
            body = b"".join(chunks)
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        headers = [(k, v) for k, v in captured["headers"] if k.lower() != "content-length"]
        content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
        if content_type.startswith("application/json") and body:
            body = json.dumps(_escaped(json.loads(body))).encode()
        start_response(
            captured["status"],
            headers + [("Content-Length", str(len(body)))] + _SECURITY_HEADERS,
            captured["exc_info"],
        )
        return [body]

    def _refusal(self, environ: dict[str, Any]) -> tuple[str, str, list[tuple[str, str]]] | None:
        host_header = environ.get("HTTP_HOST", "")
        host = split_host(host_header)
        if host is None or not is_loopback(host[0]):
            return "421 Misdirected Request", "the dashboard answers only to localhost", []
        if environ.get("HTTP_SEC_FETCH_SITE", "none") not in _SAME_SITE:
            return "403 Forbidden", "cross-site requests are refused", []
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None and origin != f"http://{host_header}":
            return "403 Forbidden", "cross-origin requests are refused", []
        if self.verify is None:
            return None
        challenge = [("WWW-Authenticate", f'Basic realm="{REALM}", charset="UTF-8"')]
        token = basic_auth_password(environ.get("HTTP_AUTHORIZATION"))
        principal = self.verify(token) if token else None
        if principal is None:
            return "401 Unauthorized", "sign in with an admin's personal access token as the password", challenge
        if not principal.admin:
            return "403 Forbidden", "the dashboard is for admins", []
        return None


def token_verifier(database_url: str) -> Verify:
    """Checks a personal access token against the database (one short-lived engine per check)."""

    async def check(token: str) -> Principal | None:
        db = Database(database_url, pooled=False)
        try:
            return await principal_for_token(db, token)
        finally:
            await db.dispose()

    return lambda token: asyncio.run(check(token))


def dashboard_app(redis_url: str, verify: Verify | None) -> WsgiApp:
    """rq-dashboard's Flask app for `redis_url`, behind the guard."""
    from flask import Flask
    from rq_dashboard import default_settings
    from rq_dashboard.web import blueprint, setup_rq_connection

    # Rooted in the rq_dashboard package, as its own command does: its templates link the app's /static (jQuery,
    # Bootstrap, its CSS), which must then be the package's static folder.
    app = Flask("rq_dashboard")
    app.config.from_object(default_settings)
    app.config["RQ_DASHBOARD_REDIS_URL"] = redis_url
    app.register_blueprint(blueprint)
    setup_rq_connection(app)
    return DashboardGuard(app.wsgi_app, verify)


def serve_dashboard(app: WsgiApp, port: int) -> None:
    """Serve on 127.0.0.1:`port` until interrupted; never on another interface."""
    from werkzeug.serving import make_server

    make_server("127.0.0.1", port, app, threaded=True).serve_forever()
