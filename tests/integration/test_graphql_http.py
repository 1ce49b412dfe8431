"""GraphQL over HTTP as its specification asks: application/graphql-response+json for the clients that accept
it (request errors then 400 without `data`), application/json as before for the rest, 405 with the right
Allow for a mutation over GET and for methods /graphql does not take, and a typed refusal, not a crash, for a
subscription sent over plain HTTP."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import kandev.app
from kandev.edge.graphql_http import answer_type
from tests.integration.rest.conftest import rest_client
from tests.support.counts import row_counts

RESPONSE_TYPE = "application/graphql-response+json"
CREATE_WORKSPACE = 'mutation { createWorkspace(input: {name: "Over GET"}) { __typename } }'
SUBSCRIPTION = "subscription($w: ID!) { taskEvents(workspaceId: $w) { kind } }"
REQUEST_ERRORS = {
    "parse": ("{", None, "GRAPHQL_PARSE_FAILED"),
    "validation": ("{ noSuchField }", None, "GRAPHQL_VALIDATION_FAILED"),
    "coercion": ("query($id: ID!) { task(id: $id) { id } }", {"id": {"an": "object"}}, "BAD_USER_INPUT"),
}


@pytest.fixture
async def web_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A built web client, whose catch-all route once answered every method /graphql does not take."""
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "index.html").write_text("<!doctype html><title>Kandev</title>")
    monkeypatch.setattr(kandev.app, "FRONTEND_DIST", dist)


@pytest.fixture
async def http(web_client, settings, db, bus, redis_url, principal, jobs) -> AsyncIterator[httpx.AsyncClient]:
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as client:
        yield client


def post(http: httpx.AsyncClient, query: str, variables: Any = None, accept: str | None = None) -> Any:
    headers = {"Accept": accept} if accept else {}
    return http.post("/graphql", json={"query": query, "variables": variables}, headers=headers)


def only_error(response: httpx.Response) -> dict[str, Any]:
    [error] = response.json()["errors"]
    return error


async def test_a_client_that_accepts_graphql_response_json_gets_it(http):
    response = await post(http, "{ __typename }", accept=RESPONSE_TYPE)
    assert response.status_code == 200
    assert response.headers["content-type"] == f"{RESPONSE_TYPE}; charset=utf-8"
    assert response.json() == {"data": {"__typename": "Query"}}


@pytest.mark.parametrize("kind", sorted(REQUEST_ERRORS))
async def test_a_request_error_under_graphql_response_json_is_a_400_without_data(http, db, kind):
    query, variables, code = REQUEST_ERRORS[kind]
    before = await row_counts(db)
    response = await post(http, query, variables, accept=f"{RESPONSE_TYPE}, application/json;q=0.9")
    assert response.status_code == 400
    assert response.headers["content-type"] == f"{RESPONSE_TYPE}; charset=utf-8"
    assert "data" not in response.json()
    assert only_error(response)["extensions"]["code"] == code
    assert await row_counts(db) == before


@pytest.mark.parametrize("kind", sorted(REQUEST_ERRORS))
async def test_application_json_keeps_200_and_a_null_data_for_request_errors(http, kind):
    query, variables, code = REQUEST_ERRORS[kind]
    response = await post(http, query, variables, accept="application/json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.json()["data"] is None
    assert only_error(response)["extensions"]["code"] == code


async def test_a_field_error_under_graphql_response_json_is_a_200_that_keeps_its_data_entry(http):
    # `task` is non-null, so its error nulls the whole `data`: execution ran, so this is no request error.
    response = await post(http, 'query { task(id: "no-such-task") { id } }', accept=RESPONSE_TYPE)
    assert response.status_code == 200
    assert "data" in response.json() and response.json()["data"] is None
    assert only_error(response)["path"] == ["task"]


@pytest.mark.parametrize(
    ("accept", "answer"),
    [
        (None, "application/json"),
        ("*/*", "application/json"),
        ("application/json", "application/json"),
        (RESPONSE_TYPE, RESPONSE_TYPE),
        (f"{RESPONSE_TYPE}; charset=utf-8", RESPONSE_TYPE),
        (f"{RESPONSE_TYPE}, application/json", RESPONSE_TYPE),
        (f"application/json;q=0.9, {RESPONSE_TYPE}", RESPONSE_TYPE),
        (f"application/json, {RESPONSE_TYPE};q=0.5", "application/json"),
        (f"{RESPONSE_TYPE};q=0", "application/json"),
        (f"{RESPONSE_TYPE};q=nonsense, application/json", "application/json"),
    ],
)
def test_the_answer_type_follows_the_accept_header(accept, answer):
    assert answer_type(accept) == answer


async def test_a_mutation_over_get_is_405_allowing_post_and_changes_nothing(http, db):
    before = await row_counts(db)
    response = await http.get("/graphql", params={"query": CREATE_WORKSPACE})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert only_error(response)["extensions"]["code"] == "METHOD_NOT_ALLOWED"
    assert await row_counts(db) == before


async def test_a_subscription_over_plain_http_is_a_typed_400_naming_the_websocket_and_logs_no_error(
    http, workspace_id, caplog
):
    caplog.set_level(logging.INFO)
    answers = [
        await http.post("/graphql", json={"query": SUBSCRIPTION, "variables": {"w": workspace_id}}),
        await http.get("/graphql", params={"query": SUBSCRIPTION, "variables": f'{{"w": "{workspace_id}"}}'}),
    ]
    for response in answers:
        assert response.status_code == 400
        error = only_error(response)
        assert error["extensions"]["code"] == "SUBSCRIPTION_NEEDS_WEBSOCKET"
        assert "WebSocket" in error["message"]
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
async def test_methods_graphql_does_not_take_are_405_allowing_get_and_post(http, method):
    response = await http.request(method, "/graphql", json={"query": "{ __typename }"})
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"
    assert only_error(response)["extensions"]["code"] == "METHOD_NOT_ALLOWED"


async def test_strawberrys_own_refusals_are_typed_json(http):
    response = await http.post("/graphql", json={"variables": {}})
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert only_error(response)["extensions"]["code"] == "BAD_REQUEST"
