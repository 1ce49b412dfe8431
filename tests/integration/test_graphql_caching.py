"""Parsing and validation run once per operation text; the variable-dependent cost checks and every
refusal still run on each request."""

from __future__ import annotations

from typing import Any

import pytest
import strawberry.schema.schema as strawberry_schema

import kandev.graphql.schema.caching as caching
from tests.integration.test_graphql_limits import refused

PAGE = "query($w: ID!, $n: Int) { tasks(workspaceId: $w, first: $n) { nodes { id } } }"


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every operation graphql-core validates, by the first line of its text."""
    seen: list[str] = []
    real = strawberry_schema.validate_document

    def counted(schema: Any, document: Any, rules: Any) -> Any:
        seen.append(document.loc.source.body)
        return real(schema, document, rules)

    monkeypatch.setattr(caching, "validate_document", counted)
    monkeypatch.setattr(strawberry_schema, "validate_document", counted)
    return seen


async def test_the_same_operation_is_validated_once_however_often_it_runs(gql, workspace_id, validations):
    text = PAGE + " # once"
    for _ in range(3):
        await gql(text, w=workspace_id, n=10)
    assert validations.count(text) == 1


async def test_a_document_that_fails_validation_fails_every_time_and_is_not_remembered(gql, validations):
    text = "{ noSuchField }"
    for _ in range(2):
        result = await gql.raw(text)
        assert result.data is None and "noSuchField" in result.errors[0].message
    assert validations.count(text) == 2


async def test_a_validated_operation_is_still_refused_for_a_page_its_variables_make_too_big(gql, db, workspace_id):
    text = PAGE + " # variables"
    await gql(text, w=workspace_id, n=10)
    error = await refused(gql, db, text, w=workspace_id, n=501)
    assert error.extensions["code"] == "VALIDATION" and "first" in error.message


async def test_the_parsed_document_is_reused_for_the_same_text(gql, workspace_id):
    parse = caching._parse
    text = PAGE + " # parsed"
    await gql(text, w=workspace_id, n=1)
    hits = parse.cache_info().hits
    await gql(text, w=workspace_id, n=2)
    assert parse.cache_info().hits == hits + 1
