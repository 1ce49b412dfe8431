"""A malformed createSecret leaves its value nowhere: not in any log record, not in any GraphQL error."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.integration.resolvers.test_profiles_and_secrets import CREATE_SECRET

VALUE = "sk-malformed-secret-value-98765"


def malformed_inputs(workspace_id: str) -> list[dict[str, Any]]:
    return [
        {"workspaceId": workspace_id, "value": VALUE},  # no name
        {"workspaceId": workspace_id, "name": "OK_1", "value": VALUE, "extra": 1},  # unknown field
        {"workspaceId": workspace_id, "name": 5, "value": VALUE},  # wrong type beside the value
        {"workspaceId": workspace_id, "name": [VALUE], "value": VALUE},  # the value where the name goes
        {"workspaceId": workspace_id, "name": "bad name", "value": VALUE},
        {"workspaceId": workspace_id, "name": "TRAILING\n", "value": VALUE},
        {"workspaceId": workspace_id, "name": "NUL\x00", "value": VALUE},
        {"workspaceId": workspace_id, "name": "SURROGATE", "value": VALUE + "\ud800"},
        {"workspaceId": workspace_id, "name": "NUL_VALUE", "value": VALUE + "\x00"},
        {"workspaceId": workspace_id, "name": "X" * 200, "value": VALUE},
        {"workspaceId": "not-a-workspace", "name": "OK_2", "value": VALUE},
    ]


@pytest.fixture
def every_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)  # the root logger: every logger propagates here
    for name in ("strawberry", "strawberry.execution", "graphql", "kandev", "sqlalchemy"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


async def test_a_malformed_create_secret_logs_no_value_and_no_error_text_carries_it(gql, workspace_id, every_log):
    answers = []
    for case in malformed_inputs(workspace_id):
        result = await gql.raw(CREATE_SECRET, i=case)
        payload = (result.data or {}).get("createSecret") or {}
        # Refused every time: a typed error, or a GraphQL input error.
        assert result.errors or payload.get("__typename") in ("ValidationError", "NotFoundError"), case
        answers.append(str([e.formatted for e in result.errors or []]) + str(payload))
    assert every_log.records, "the refusals were expected to log something (the input errors)"
    assert not [a for a in answers if VALUE in a]
    logged = every_log.text + "".join(str(r.msg) + str(r.args) for r in every_log.records)
    assert VALUE not in logged


async def test_invalid_secret_names_and_values_get_typed_errors_naming_the_field(gql, workspace_id):
    fields = {}
    for name, value in [("TRAILING\n", VALUE), ("SURROGATE", VALUE + "\ud800"), ("NUL_VALUE", "a\x00b"), ("E", "")]:
        result = await gql.raw(
            CREATE_SECRET.replace("code message", "code message ... on ValidationError { field }"),
            i={"workspaceId": workspace_id, "name": name, "value": value},
        )
        if result.errors:  # text no string input may carry is refused for every field before execution
            fields[name] = result.errors[0].extensions["field"]
        else:
            fields[name] = result.data["createSecret"].get("field")
    assert fields == {"TRAILING\n": "name", "SURROGATE": "input.value", "NUL_VALUE": "input.value", "E": "value"}
