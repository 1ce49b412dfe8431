"""GraphQL cost limits: an expensive operation is refused before any SQL runs, and the web client's own
board and sidebar operations pass at the 500-row page cap."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from kandev.graphql.root import schema
from kandev.graphql.schema.context import Context
from kandev.graphql.schema.limits import MAX_ALIASES, MAX_COST, MAX_DEPTH, MAX_TOKENS
from tests.integration.rest.conftest import rest_client
from tests.integration.test_sidebar_queries import add_tasks
from tests.support.client_ops import client_operations


@contextmanager
def sql_statements(db: Any) -> Iterator[list[str]]:
    """Every statement the engine sends while the block runs."""
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", record)


async def refused(gql: Any, db: Any, query: str, **variables: Any) -> Any:
    """Run `query`, assert it was refused with one error and no SQL, and return that error."""
    with sql_statements(db) as statements:
        result = await gql.raw(query, **variables)
    assert result.data is None
    assert statements == []
    [error] = result.errors
    assert error.extensions and error.extensions.get("code"), error
    return error


async def test_the_web_clients_board_and_sidebar_operations_run_at_the_500_page_cap(gql, services, db, workspace_id):
    operations = client_operations()
    # The board and the sidebar page through tasks (one column or the whole workspace per page); the cap
    # must admit the largest page a client may ask for.
    assert re.search(r"\btasks\([^)]*workflowStepId:\s*\$step\b[^)]*first:\s*\$first\b", operations["TASKS"])
    assert re.search(r"\bmessages\([^)]*first:\s*\$page\b", operations["SESSION"])
    await add_tasks(db, workspace_id, 501)
    first = await gql("query($w: ID!) { tasks(workspaceId: $w, first: 1) { nodes { id } } }", w=workspace_id)
    task_id = first["tasks"]["nodes"][0]["id"]
    session_id = (await services.sessions.start_task(task_id, "hello", None)).session.id
    variables = {"w": workspace_id, "after": None, "id": session_id, "t": None, "s": session_id}
    variables |= {"step": None, "first": 500, "page": 500}
    # A rich-output file preview pages nothing; it runs too, so every read the client sends is exercised.
    variables |= {"taskId": task_id, "path": "README.md", "repository": None}
    ran = []
    for name, document in operations.items():
        if document.lstrip().startswith("mutation"):
            continue  # the board's reads and live updates are what the page cap must admit
        wanted = set(re.findall(r"\$(\w+)\s*:", document))
        if "before" in wanted:
            continue  # earlier transcript pages: the same messages field at the same cap
        values = {key: variables[key] for key in wanted}
        if re.search(r"\btask\(id:\s*\$id\b", document):
            values["id"] = task_id
        context = Context.for_services(services)
        if document.lstrip().startswith("subscription"):
            stream = await schema.subscribe(document, variable_values=values, context_value=context)
            assert isinstance(stream, AsyncIterator), (name, stream)
            await stream.aclose()  # type: ignore[attr-defined]
        elif document.lstrip().startswith("query"):
            result = await schema.execute(document, variable_values=values, context_value=context)
            assert result.errors is None, (name, result.errors)
            ran.append(name)
            if name == "TASKS":
                page = result.data["tasks"]
                assert len(page["nodes"]) == 500 and page["pageInfo"]["hasNextPage"] is True
    assert {"BOOT", "WORKSPACE", "TASKS", "TASK", "SESSION", "SESSION_STATUS"} <= set(ran)


async def test_a_page_of_501_is_a_validation_error_naming_the_argument_and_runs_no_sql(gql, db, workspace_id):
    cases = [
        (f'{{ tasks(workspaceId: "{workspace_id}", first: 501) {{ totalCount }} }}', {}, "first"),
        ("query($n: Int!) { tasks(workspaceId: $w, first: $n) { totalCount } }", {"n": 501}, "first"),
        ("query($n: Int = 501) { tasks(workspaceId: $w, first: $n) { totalCount } }", {}, "first"),
        ('{ session(id: "s") { messages(first: 501) { nodes { id } } } }', {}, "first"),
        ('{ session(id: "s") { messages(last: 501) { nodes { id } } } }', {}, "last"),
        ('{ task(id: "t") { children(first: 501) { id } } }', {}, "first"),
    ]
    for query, variables, field in cases:
        error = await refused(gql, db, query.replace("$w", f'"{workspace_id}"'), **variables)
        assert error.extensions == {"code": "VALIDATION", "field": field, "fields": {"field": field}}, query
        assert error.message == f"{field} must be between 0 and 500"


async def test_a_500_alias_query_is_refused_before_touching_the_database(
    gql, db, settings, bus, redis_url, principal, jobs
):
    query = "{ " + " ".join(f"a{i}: workspaces {{ id }}" for i in range(500)) + " }"
    error = await refused(gql, db, query)
    assert error.message == f"500 aliases found. Allowed: {MAX_ALIASES}"
    # The same over HTTP: the route answers without a statement either.
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as http:
        with sql_statements(db) as statements:
            response = await http.post("/graphql", json={"query": query})
        assert statements == []
    body = response.json()
    assert body["data"] is None
    assert body["errors"][0]["message"] == error.message


async def test_a_query_nested_deeper_than_the_limit_is_refused_before_any_sql(gql, db):
    nested = "id"
    for _ in range(MAX_DEPTH + 1):
        nested = f"parent {{ {nested} }}"
    error = await refused(gql, db, f'{{ task(id: "t") {{ {nested} }} }}')
    assert "exceeds maximum operation depth" in error.message


async def test_a_document_of_too_many_tokens_is_refused_before_any_sql(gql, db):
    error = await refused(gql, db, "{ workspaces { " + "id " * MAX_TOKENS + "} }")
    assert "more than" in error.message and str(MAX_TOKENS) in error.message
    assert error.extensions["code"] == "GRAPHQL_PARSE_FAILED"


async def test_a_page_nested_in_a_page_is_refused_as_too_expensive_before_any_sql(gql, db, workspace_id):
    query = f'{{ tasks(workspaceId: "{workspace_id}", first: 500) {{ nodes {{ children {{ id }} }} }} }}'
    error = await refused(gql, db, query)
    assert error.extensions == {"code": "QUERY_TOO_COMPLEX", "limit": MAX_COST}


async def test_a_fragment_bomb_is_refused_quickly_before_any_sql(gql, db):
    # Each fragment spreads the next one twice: 2**40 fields once expanded, in a few hundred tokens.
    levels = 40
    fragments = [f"fragment F{i} on Workspace {{ ...F{i + 1} ...F{i + 1} }}" for i in range(levels)]
    fragments.append(f"fragment F{levels} on Workspace {{ id name }}")
    started = time.monotonic()
    error = await refused(gql, db, "{ workspaces { ...F0 } } " + " ".join(fragments))
    assert time.monotonic() - started < 5
    assert error.extensions["code"] == "QUERY_TOO_COMPLEX"


async def test_introspection_as_graphiql_sends_it_stays_within_the_limits(gql):
    from graphql import get_introspection_query

    data = await gql(get_introspection_query(descriptions=True))
    assert data["__schema"]["queryType"]["name"] == "Query"
