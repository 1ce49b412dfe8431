"""Each command is described once, on its GraphQL input: the MCP tool schemas, the REST bodies and what
GraphQL refuses all come from that declaration (kandev.graphql.contract, kandev.graphql.schema.declare)."""

from __future__ import annotations

import dataclasses
import importlib
import re
from types import MappingProxyType
from typing import Any

from kandev.domain.validation import MAX_TITLE_LENGTH
from kandev.edge.mcp_bridge import catalogue
from kandev.edge.mcp_bridge import tools as _registered  # noqa: F401 - registers the catalogue
from kandev.edge.mcp_bridge.tools import tasks as task_tools
from kandev.graphql.contract import command
from kandev.graphql.schema.declare import METADATA_KEY, declared
from kandev.graphql.schema.inputs import CreateTaskInput
from tests.integration.rest.conftest import rest_client

# Mutation tools whose arguments are not exactly their mutation's: each keeps a small adapter, checked below.
ADAPTED = {"answer_question_kandev", "show_rich_output_kandev"}
# Arguments a tool leaves out of its mutation's (an agent never sends them).
# What a tool leaves out of its mutation's input: an agent's attachments belong to one task, how a task's checks are
# fixed and merged is a person's choice, and the ship tools act on the calling agent's own task (the session names it).
WITHOUT = {
    "create_task_kandev": ("attachment_ids", "executor_profile_id"),
    "update_task_kandev": ("fix_failing_checks", "auto_merge"),
    "commit_changes_kandev": ("task_id",),
    "push_branch_kandev": ("task_id",),
    "open_pull_request_kandev": ("task_id",),
}
MUTATION = re.compile(r"^mutation(?:\([^)]*\))?\s*\{\s*(?:\w+:\s*)?(\w+)\(")
CREATE = """mutation($input: CreateTaskInput!) { createTask(input: $input) { __typename
  ... on Error { message } ... on ValidationError { field } } }"""


def _mutation_tools() -> dict[str, str]:
    """Every tool that runs a mutation, with the mutation it runs."""
    found = {}
    for name, spec in catalogue.CATALOGUE.items():
        match = MUTATION.match(spec.document.strip())
        if spec.document.lstrip().startswith("mutation"):
            assert match, f"{name}: its document does not start with one mutation"
            found[name] = match[1]
    return found


def test_every_mutation_tool_advertises_the_schema_and_runs_the_document_its_mutation_declares():
    tools = _mutation_tools()
    assert set(tools) > ADAPTED and len(tools) >= 25
    for name, mutation in tools.items():
        if name in ADAPTED:
            continue
        spec = catalogue.CATALOGUE[name]
        assert spec.input_schema == command(mutation).json_schema(without=WITHOUT.get(name, ())), name
        head = command(mutation).document("\0").split("\0")[0]
        assert spec.document.startswith(head), name


def test_the_adapted_tools_take_their_shapes_from_the_declaration():
    answer = catalogue.CATALOGUE["answer_question_kandev"].input_schema["properties"]["answers"]
    assert answer == command("answerClarification").json_schema()["properties"]["answers"]
    shown = catalogue.CATALOGUE["show_rich_output_kandev"].input_schema
    presentation = command("showRichOutput").json_schema()["properties"]["presentation"]
    assert shown == {k: v for k, v in presentation.items() if k != "description"}
    assert shown["properties"]["blocks"]["maxItems"] == presentation["properties"]["blocks"]["maxItems"]


def test_declared_spellings_reach_the_schema_and_go_back_to_graphql_names():
    message = command("sendMessage")
    assert message.json_schema()["properties"]["delivery_mode"]["enum"] == ["queued", "interrupt"]
    arguments = {"task_id": "t", "prompt": "p", "delivery_mode": "interrupt"}
    assert message.variables(arguments) == {"input": {"taskId": "t", "prompt": "p", "deliveryMode": "INTERRUPT"}}
    sources = command("addWorkspaceSources")
    assert sources.json_schema()["properties"]["sources"]["items"]["properties"]["type"]["enum"] == [
        "repository",
        "folder",
    ]
    folder = {"type": "folder", "path": "/srv/notes"}
    assert sources.variables({"sources": [folder]}) == {
        "input": {"sources": [{"type": "FOLDER", "path": "/srv/notes"}]}
    }
    step = command("updateWorkflowStep").json_schema()["properties"]
    assert step["wip_limit"]["type"] == ["integer", "null"] and step["name"]["type"] == "string"
    reorder = command("reorderWorkflowSteps").json_schema()["properties"]["step_ids"]
    assert reorder["items"] == {"type": "string", "minLength": 1} and "minLength" not in reorder


def _create_task_title() -> Any:
    definition = CreateTaskInput.__strawberry_definition__  # type: ignore[attr-defined]
    return next(f for f in definition.fields if f.python_name == "title")


def _forget_derived_schemas() -> None:
    command.cache_clear()
    from kandev.edge.rest import common

    cached = getattr(common, "tool_schema", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()


async def test_one_changed_limit_changes_the_mcp_schema_the_rest_body_and_what_graphql_refuses(
    gql, monkeypatch, settings, db, bus, redis_url, principal, jobs, workspace_id
):
    title = "x" * 21
    allowed = (await gql.raw(CREATE, input={"workspaceId": workspace_id, "title": title})).data["createTask"]
    assert allowed["__typename"] == "CreateTaskPayload"
    field = _create_task_title()
    try:
        with monkeypatch.context() as patch:
            shorter = dataclasses.replace(declared(field.metadata), max_length=20)
            patch.setattr(field, "metadata", MappingProxyType({**field.metadata, METADATA_KEY: shorter}))
            _forget_derived_schemas()
            patch.setattr(catalogue, "CATALOGUE", {})
            importlib.reload(task_tools)  # the tools are declared again, as at start-up

            assert catalogue.CATALOGUE["create_task_kandev"].input_schema["properties"]["title"]["maxLength"] == 20
            assert command("createTask").json_schema()["properties"]["title"]["maxLength"] == 20
            async with rest_client(settings, db, bus, redis_url, principal, jobs) as http:
                refused = await http.post("/api/v1/tasks", json={"workspace_id": workspace_id, "title": title})
                assert refused.status_code == 400 and "title" in refused.text, refused.text
                accepted = await http.post("/api/v1/tasks", json={"workspace_id": workspace_id, "title": title[:20]})
                assert accepted.status_code == 201, accepted.text
            result = (await gql.raw(CREATE, input={"workspaceId": workspace_id, "title": title})).data["createTask"]
            assert result == {
                "__typename": "ValidationError",
                "message": "title must be at most 20 characters",
                "field": "title",
            }
    finally:
        _forget_derived_schemas()
    assert command("createTask").json_schema()["properties"]["title"]["maxLength"] == MAX_TITLE_LENGTH
