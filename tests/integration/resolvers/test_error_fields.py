"""A domain error's code and structured fields reach GraphQL clients: on a mutation's error payload, and on
a query's error as `extensions.code` and `extensions.fields`; a submitted id is never echoed in them."""

from __future__ import annotations

from tests.support.workflows import full_review_step

MOVE = """mutation($i: MoveTaskInput!) { moveTask(input: $i) {
  __typename ... on Error { code fields } ... on ConflictError { message } } }"""
CREATE = """mutation($i: CreateTaskInput!) { createTask(input: $i) {
  __typename ... on Error { code fields } ... on ValidationError { field } } }"""
UNKNOWN_TASK_ID = "kdv_looks-like-a-secret"


async def test_a_conflict_payload_carries_its_code_and_the_limit_it_hit(gql, services, workspace_id):
    task_id, step_id = await full_review_step(services, workspace_id)
    answer = (await gql(MOVE, i={"taskId": task_id, "workflowStepId": step_id}))["moveTask"]
    assert answer["__typename"] == "ConflictError"
    assert answer["code"] == "CONFLICT"
    assert answer["fields"] == {"step_id": step_id, "wip_limit": 1}


async def test_a_validation_payload_names_the_field_in_its_fields(gql, workspace_id):
    answer = (await gql(CREATE, i={"workspaceId": workspace_id, "title": "   "}))["createTask"]
    assert answer["__typename"] == "ValidationError" and answer["code"] == "VALIDATION"
    assert answer["fields"] == {"field": answer["field"]} and answer["field"]


async def test_a_not_found_payload_names_the_entity_but_never_echoes_the_id(gql):
    answer = (await gql(MOVE, i={"taskId": UNKNOWN_TASK_ID, "workflowStepId": "x"}))["moveTask"]
    assert answer == {"__typename": "NotFoundError", "code": "NOT_FOUND", "fields": {"entity": "task"}}


async def test_a_query_error_carries_code_and_fields_in_its_extensions(gql):
    result = await gql.raw("query($id: ID!) { task(id: $id) { id } }", id=UNKNOWN_TASK_ID)
    [error] = result.errors
    assert error.message == "task not found"
    assert error.extensions == {"code": "NOT_FOUND", "fields": {"entity": "task"}}
    assert UNKNOWN_TASK_ID not in str(error.formatted)
