"""A tool's is_error result carries the domain error's code and structured fields (never a submitted value),
whether the error came back as a mutation's error payload or was raised."""

from __future__ import annotations

from tests.integration.mcp_bridge.conftest import call_tool
from tests.support.workflows import full_review_step

UNKNOWN_ID = "kdv_looks-like-a-secret"


async def test_a_conflict_from_a_mutation_payload_carries_its_code_and_fields(
    surface, external, services, workspace_id
):
    task_id, step_id = await full_review_step(services, workspace_id)
    error, payload = await call_tool(surface, external, "move_task_kandev", task_id=task_id, workflow_step_id=step_id)
    assert error
    assert payload == {
        "error": "the step is at its WIP limit",
        "code": "CONFLICT",
        "fields": {"step_id": step_id, "wip_limit": 1},
    }


async def test_a_not_found_names_the_entity_and_never_echoes_the_id(surface, external):
    # archive answers with an error payload; listing steps raises from a query: both paths carry fields.
    for tool, arguments, entity in [
        ("archive_task_kandev", {"task_id": UNKNOWN_ID}, "task"),
        ("list_workflow_steps_kandev", {"workflow_id": UNKNOWN_ID}, "workflow"),
    ]:
        error, payload = await call_tool(surface, external, tool, **arguments)
        assert error and payload["code"] == "NOT_FOUND" and payload["fields"] == {"entity": entity}, tool
        assert UNKNOWN_ID not in str(payload)
