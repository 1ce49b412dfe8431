"""The WSGI guard in front of rq-dashboard: loopback Host only, same-origin only, admin tokens with auth on,
and every JSON string escaped before the dashboard's templates insert it."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from werkzeug.test import Client

from kandev.domain.context import Principal
from kandev.edge.dashboard import DashboardGuard, basic_auth_password

ADMIN, MEMBER = "kdv_admin-token", "kdv_member-token"
PRINCIPALS = {
    ADMIN: Principal(user_id="u1", login="root", admin=True),
    MEMBER: Principal(user_id="u2", login="alice", admin=False),
}


def inner(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    if environ["PATH_INFO"].endswith(".json"):
        body = json.dumps({"jobs": [{"description": "<img src=x onerror=alert(1)>", "n": 3}]}).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]
    start_response("200 OK", [("Content-Type", "text/html")])
    return [b"<html>dashboard</html>"]


def client(auth: bool) -> Client:
    return Client(DashboardGuard(inner, PRINCIPALS.get if auth else None))


def basic(password: str, user: str = "anyone") -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.mark.parametrize("host", ["localhost:9181", "127.0.0.1:9181", "[::1]:9181"])
def test_loopback_hosts_reach_the_dashboard_with_its_security_headers(host: str):
    response = client(auth=False).get("/", headers={"Host": host})
    assert response.status_code == 200 and response.get_data() == b"<html>dashboard</html>"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:9181", "0.0.0.0:9181", "192.168.1.2:9181", ""])
def test_any_other_host_is_misdirected_so_dns_rebinding_reads_nothing(host: str):
    response = client(auth=False).get("/0/data/queues.json", headers={"Host": host})
    assert response.status_code == 421 and b"dashboard" in response.get_data() and b"jobs" not in response.get_data()


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://localhost:8420"},  # another local site is another origin
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_cross_site_and_cross_origin_requests_are_refused_before_any_action(headers: dict[str, str]):
    calls: list[str] = []

    def spy(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        calls.append(environ["PATH_INFO"])
        return inner(environ, start_response)

    response = Client(DashboardGuard(spy, None)).post(
        "/requeue/kandev-turns", headers={"Host": "localhost:9181", **headers}
    )
    assert response.status_code == 403 and calls == []


def test_same_origin_requests_pass():
    headers = {"Host": "localhost:9181", "Origin": "http://localhost:9181", "Sec-Fetch-Site": "same-origin"}
    assert client(auth=False).post("/job/1/requeue", headers=headers).status_code == 200


def test_with_auth_on_no_or_a_wrong_token_is_401_with_a_basic_challenge():
    for headers in ({}, basic("kdv_wrong"), basic(""), {"Authorization": f"Bearer {ADMIN}"}):
        response = client(auth=True).get("/", headers={"Host": "localhost:9181", **headers})
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Basic realm=")


def test_with_auth_on_a_members_token_is_403_and_an_admins_is_let_in():
    assert client(auth=True).get("/", headers={"Host": "localhost:9181", **basic(MEMBER)}).status_code == 403
    assert client(auth=True).get("/", headers={"Host": "localhost:9181", **basic(ADMIN)}).status_code == 200


def test_no_json_string_can_start_markup_and_numbers_are_untouched():
    response = client(auth=False).get("/0/data/jobs.json", headers={"Host": "localhost:9181"})
    payload = json.loads(response.get_data())
    assert payload == {"jobs": [{"description": "‹img src=x onerror=alert(1)›", "n": 3}]}
    assert int(response.headers["Content-Length"]) == len(response.get_data())


@pytest.mark.parametrize(
    ("header", "password"),
    [
        ("Basic " + base64.b64encode(b"u:p:with:colons").decode(), "p:with:colons"),
        ("basic " + base64.b64encode(b":only-password").decode(), "only-password"),
        ("Basic " + base64.b64encode(b"no-colon").decode(), None),
        ("Basic not base64!", None),
        ("Bearer abc", None),
        (None, None),
    ],
)
def test_basic_auth_password_parsing(header: str | None, password: str | None):
    assert basic_auth_password(header) == password
