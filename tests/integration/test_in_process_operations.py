"""Operations run in process (MCP tools, REST handlers: kandev.graphql.contract.run) keep what the HTTP endpoint
enforces, though strawberry's per-request machinery does not run for them: the cost and input checks
on their variables, validation, value-free failures and the log of what was not the caller's mistake."""

from __future__ import annotations

import logging
import uuid

import pytest

import kandev.graphql.contract as contract
from kandev.domain.errors import ValidationError
from kandev.graphql.contract import OperationFailed, run
from kandev.graphql.schema.context import Context
from tests.integration.test_graphql_limits import sql_statements

CREATE = """mutation($input: CreateTaskInput!) { createTask(input: $input) { __typename
  ... on Error { message code } ... on ValidationError { field } } }"""


async def test_an_operation_too_costly_for_its_variables_is_refused_before_any_sql(services, db, workspace_id):
    query = "query($w: ID!, $n: Int!) { tasks(workspaceId: $w, first: $n) { nodes { children { id } } } }"
    context = Context.for_services(services)
    assert await run(context, query, {"w": workspace_id, "n": 1})  # cheap with a small page
    with sql_statements(db) as statements, pytest.raises(OperationFailed, match="too expensive"):
        await run(context, query, {"w": workspace_id, "n": 500})
    assert statements == []


async def count_tasks(gql, workspace_id: str) -> int:
    data = await gql("query($w: ID!) { tasks(workspaceId: $w) { totalCount } }", w=workspace_id)
    return data["tasks"]["totalCount"]


async def test_text_no_database_can_store_in_the_variables_is_a_validation_error_and_creates_nothing(
    services, gql, workspace_id
):
    before = await count_tasks(gql, workspace_id)
    with pytest.raises(ValidationError) as refused:
        await run(Context.for_services(services), CREATE, {"input": {"workspaceId": workspace_id, "title": "a\x00b"}})
    assert "title" in str(refused.value.field)
    assert await count_tasks(gql, workspace_id) == before


async def test_a_document_the_schema_refuses_fails_without_echoing_its_values(services, workspace_id):
    query = f'{{ tasks(workspaceId: "{workspace_id}", first: "secret-page") {{ totalCount }} }}'
    with pytest.raises(OperationFailed) as failed:
        await run(Context.for_services(services), query, {})
    assert "secret-page" not in str(failed.value)
    assert str(failed.value)


async def test_an_unexpected_failure_is_logged_once_and_raised_with_its_cause(services, monkeypatch, caplog):
    async def broken(*args, **kwargs):
        raise RuntimeError("the disk caught fire")

    monkeypatch.setattr(type(services.workspaces), "list", broken)
    with caplog.at_level(logging.ERROR), pytest.raises(OperationFailed) as failed:
        await run(Context.for_services(services), "{ workspaces { id } }", {})
    assert isinstance(failed.value.__cause__, RuntimeError)  # the edge logs it and answers a masked text
    logged = [r for r in caplog.records if r.levelno == logging.ERROR and r.exc_info]
    assert len(logged) == 1 and "fire" in str(logged[0].exc_info[1])


async def test_the_callers_mistake_stays_its_domain_error_and_is_not_logged(services, workspace_id, caplog):
    query = "query($w: ID!, $n: Int!) { tasks(workspaceId: $w, first: $n) { totalCount } }"
    with caplog.at_level(logging.ERROR), pytest.raises(ValidationError):
        await run(Context.for_services(services), query, {"w": workspace_id, "n": -1})
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_document_is_parsed_and_validated_once_however_often_it_runs(services, monkeypatch):
    parsed: list[str] = []
    real_parse = contract.parse

    def counting_parse(source, *args, **kwargs):
        parsed.append(source)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(contract, "parse", counting_parse)
    document = f"{{ only_{uuid.uuid4().hex}: workspaces {{ id }} }}"  # a text no earlier run has used
    answers = [await run(Context.for_services(services), document, {}) for _ in range(3)]
    assert parsed == [document]
    assert all(answer == answers[0] and next(iter(answer.values())) for answer in answers)
