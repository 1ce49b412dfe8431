"""Bad input over GraphQL (schema.execute and POST /graphql) gets a typed error naming the field, runs no
SQL when the document alone shows the problem, and changes nothing.

NUL characters and lone surrogates are refused before execution as GraphQL errors with
`extensions: {code: VALIDATION, field}` (one check over every argument, inline or in variables, so
queries without an error union get the same answer as mutations); prompt and env bounds are domain
rules and come back as the mutation's ValidationError.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from kandev.domain.validation import MAX_ENV_ENTRIES, MAX_ENV_VALUE_BYTES, MAX_PROMPT_BYTES
from tests.integration.rest.conftest import rest_client
from tests.integration.test_graphql_limits import sql_statements
from tests.support.counts import row_counts

BAD_TEXT = {"nul": "before\x00after", "surrogate": "before\ud800after"}
RESULT = "__typename ... on Error { code message } ... on ValidationError { field }"
CREATE = f"""mutation($i: CreateTaskInput!) {{
  createTask(input: $i) {{ {RESULT} ... on CreateTaskPayload {{ task {{ id }} }} }} }}"""


def only_error(result: Any) -> Any:
    assert result.data is None
    [error] = result.errors
    return error


@pytest.mark.parametrize("kind", sorted(BAD_TEXT))
@pytest.mark.parametrize("field", ["title", "prompt", "externalId"])
async def test_a_nul_or_lone_surrogate_in_a_variable_is_refused_naming_the_field(gql, db, workspace_id, kind, field):
    before = await row_counts(db)
    with sql_statements(db) as statements:
        result = await gql.raw(CREATE, i={"workspaceId": workspace_id, "title": "ok", field: BAD_TEXT[kind]})
    error = only_error(result)
    assert error.extensions == {"code": "VALIDATION", "field": f"input.{field}", "fields": {"field": f"input.{field}"}}
    assert "before" not in error.message and "after" not in error.message  # never echoed
    assert statements == []
    assert await row_counts(db) == before


async def test_a_nul_escape_in_an_inline_string_is_refused_naming_the_field(gql, db, workspace_id):
    before = await row_counts(db)
    mutation = f'mutation {{ createTask(input: {{workspaceId: "{workspace_id}", title: "a\\u0000b"}}) {{ {RESULT} }} }}'
    error = only_error(await gql.raw(mutation))
    assert error.extensions == {"code": "VALIDATION", "field": "input.title", "fields": {"field": "input.title"}}
    assert await row_counts(db) == before


async def test_a_lone_surrogate_escape_in_an_inline_string_is_a_syntax_error(gql, db, workspace_id):
    mutation = f'mutation {{ createTask(input: {{workspaceId: "{workspace_id}", title: "a\\ud800b"}}) {{ {RESULT} }} }}'
    before = await row_counts(db)
    error = only_error(await gql.raw(mutation))
    assert error.extensions["code"] == "GRAPHQL_PARSE_FAILED"
    assert await row_counts(db) == before


@pytest.mark.parametrize("kind", sorted(BAD_TEXT))
async def test_bad_text_in_an_id_argument_of_a_query_is_refused_before_any_sql(gql, db, kind):
    with sql_statements(db) as statements:
        result = await gql.raw("query($id: ID!) { task(id: $id) { id } }", id=BAD_TEXT[kind])
    assert only_error(result).extensions == {"code": "VALIDATION", "field": "id", "fields": {"field": "id"}}
    assert statements == []


@pytest.mark.parametrize("kind", sorted(BAD_TEXT))
async def test_bad_text_in_a_json_argument_names_the_key_path(gql, db, workspace_id, kind):
    mutation = f"""mutation($i: CreateAgentProfileInput!) {{ createAgentProfile(input: $i) {{ {RESULT} }} }}"""
    before = await row_counts(db)
    variables = {"workspaceId": workspace_id, "name": "p", "kind": "SCRIPTED", "env": {"API_KEY": BAD_TEXT[kind]}}
    error = only_error(await gql.raw(mutation, i=variables))
    assert error.extensions == {
        "code": "VALIDATION",
        "field": "input.env.API_KEY",
        "fields": {"field": "input.env.API_KEY"},
    }
    assert await row_counts(db) == before


async def test_an_int_beyond_32_bits_in_a_variable_is_graphql_cores_input_error_with_a_code(gql, db, workspace_id):
    workflow_id = (await gql("query($w: ID!) { workflows(workspaceId: $w) { id } }", w=workspace_id))["workflows"][0][
        "id"
    ]
    mutation = f"""mutation($i: CreateWorkflowStepInput!) {{ createWorkflowStep(input: $i) {{ {RESULT} }} }}"""
    before = await row_counts(db)
    error = only_error(await gql.raw(mutation, i={"workflowId": workflow_id, "name": "Huge", "position": 2**31}))
    assert error.extensions == {"code": "BAD_USER_INPUT"}
    assert "32-bit" in error.message
    assert await row_counts(db) == before


async def test_a_prompt_over_one_mib_is_a_validation_error_on_create_start_and_message(gql, services, db, workspace_id):
    too_long = "x" * (MAX_PROMPT_BYTES + 1)
    before = await row_counts(db)
    created = (await gql.raw(CREATE, i={"workspaceId": workspace_id, "title": "t", "prompt": too_long})).data
    assert created["createTask"]["__typename"] == "ValidationError" and created["createTask"]["field"] == "prompt"
    assert await row_counts(db) == before
    # Multi-byte characters count in bytes: 1 MiB of bytes, not of characters.
    wide = "é" * (MAX_PROMPT_BYTES // 2 + 1)
    created = (await gql.raw(CREATE, i={"workspaceId": workspace_id, "title": "t", "prompt": wide})).data
    assert created["createTask"]["field"] == "prompt"

    task = (await gql(CREATE, i={"workspaceId": workspace_id, "title": "t", "startAgent": False}))["createTask"]
    task_id = task["task"]["id"]
    start = f"mutation($i: StartTaskInput!) {{ startTask(input: $i) {{ {RESULT} }} }}"
    send = f"mutation($i: SendMessageInput!) {{ sendMessage(input: $i) {{ {RESULT} }} }}"
    before = await row_counts(db)
    started = (await gql(start, i={"taskId": task_id, "prompt": too_long}))["startTask"]
    assert (started["__typename"], started["field"]) == ("ValidationError", "prompt")
    assert await row_counts(db) == before
    started = (await gql(start, i={"taskId": task_id, "prompt": "hello"}))["startTask"]
    assert started["__typename"] == "StartTaskPayload"
    before = await row_counts(db)
    sent = (await gql(send, i={"taskId": task_id, "prompt": too_long}))["sendMessage"]
    assert (sent["__typename"], sent["field"]) == ("ValidationError", "prompt")
    assert await row_counts(db) == before


async def test_a_prompt_of_exactly_one_mib_is_accepted(gql, workspace_id):
    prompt = "x" * MAX_PROMPT_BYTES
    created = await gql(CREATE, i={"workspaceId": workspace_id, "title": "t", "prompt": prompt, "startAgent": False})
    assert created["createTask"]["__typename"] == "CreateTaskPayload"


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({f"K{i}": "v" for i in range(MAX_ENV_ENTRIES + 1)}, "env"),
        ({"BIG": "v" * (MAX_ENV_VALUE_BYTES + 1)}, "env.BIG"),
        ({"N" * 257: "v"}, "env"),
    ],
)
async def test_agent_profile_env_beyond_its_bounds_is_a_validation_error(gql, db, workspace_id, env, field):
    mutation = f"""mutation($i: CreateAgentProfileInput!) {{ createAgentProfile(input: $i) {{ {RESULT} }} }}"""
    before = await row_counts(db)
    variables = {"workspaceId": workspace_id, "name": "p", "kind": "SCRIPTED", "env": env}
    result = (await gql(mutation, i=variables))["createAgentProfile"]
    assert (result["__typename"], result["field"]) == ("ValidationError", field)
    assert await row_counts(db) == before


@pytest.mark.parametrize("body", ["[]", '"x"', "1", "null", "[{}]"])
async def test_a_graphql_body_that_is_not_a_json_object_gets_400(settings, db, bus, redis_url, principal, jobs, body):
    before = await row_counts(db)
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as http:
        response = await http.post("/graphql", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert await row_counts(db) == before


async def test_a_lone_surrogate_escape_in_a_json_body_is_refused_naming_the_field(
    settings, db, bus, redis_url, principal, jobs, workspace_id
):
    # Python's json module (like strawberry's) decodes "\ud800" into a lone surrogate: it must not reach SQL.
    body = json.dumps({"query": CREATE, "variables": {"i": {"workspaceId": workspace_id, "title": "PLACEHOLDER"}}})
    body = body.replace("PLACEHOLDER", "a\\ud800b")
    before = await row_counts(db)
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as http:
        response = await http.post("/graphql", content=body, headers={"content-type": "application/json"})
    [error] = response.json()["errors"]
    assert error["extensions"] == {"code": "VALIDATION", "field": "input.title", "fields": {"field": "input.title"}}
    assert await row_counts(db) == before


DEEP = 100_000
EMPTY_SELECTIONS = ["{}", "query { }", "{ workspaces { } }", "query { ...F } fragment F on Query { }"]
RESPONSE_TYPE = "application/graphql-response+json"
NOT_UTF_8 = b'{"query": "{ __typename \xff\xfe }"}'


def errors_logged(caplog: Any) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]


@pytest.mark.parametrize("query", EMPTY_SELECTIONS)
async def test_an_empty_selection_set_is_a_typed_validation_error_logged_nowhere(
    settings, db, bus, redis_url, principal, jobs, query, caplog
):
    caplog.set_level(logging.INFO)
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as http:
        legacy = await http.post("/graphql", json={"query": query})
        modern = await http.post("/graphql", json={"query": query}, headers={"Accept": RESPONSE_TYPE})
    # GraphQL over HTTP: a validation failure is 400 under its own media type, 200 under application/json.
    assert (legacy.status_code, modern.status_code) == (200, 400)
    assert legacy.json()["data"] is None and "data" not in modern.json()
    for answer in (legacy, modern):
        [error] = answer.json()["errors"]
        assert error["extensions"] == {"code": "GRAPHQL_VALIDATION_FAILED"}
        assert error["message"] == "a selection set must select at least one field"
    assert errors_logged(caplog) == []


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("accept", ["application/json", RESPONSE_TYPE])
async def test_json_nested_100000_deep_or_not_utf_8_is_a_typed_400_logged_nowhere(
    settings, db, bus, redis_url, principal, jobs, accept, caplog
):
    caplog.set_level(logging.INFO)
    before = await row_counts(db)
    json_body = {"Content-Type": "application/json", "Accept": accept}
    deep = '{"query": "{ __typename }", "variables": {"v": ' + nested(DEEP) + "}}"
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as http:
        answers = {
            "deep": await http.post("/graphql", content=deep, headers=json_body),
            "deep GET variables": await http.get(
                # A URL holds less: 5,000 levels are still far past what Python's recursion allows.
                "/graphql",
                params={"query": "{ __typename }", "variables": nested(5_000)},
                headers=json_body,
            ),
            "not UTF-8": await http.post("/graphql", content=NOT_UTF_8, headers=json_body),
        }
    reasons = {}
    for name, answer in answers.items():
        assert answer.status_code == 400, name
        assert answer.headers["content-type"].startswith(accept), name
        [error] = answer.json()["errors"]
        assert (error["extensions"]["code"], error["extensions"]["field"]) == ("VALIDATION", "body"), name
        reasons[name] = error["extensions"]["fields"]["reason"]
    assert reasons == {"deep": "too_deep", "deep GET variables": "too_deep", "not UTF-8": "invalid_utf8"}
    assert await row_counts(db) == before
    assert errors_logged(caplog) == []
