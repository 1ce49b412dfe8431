"""The GraphQL masking seam, on a tiny schema with Kandev's error extension: incidents masked, domain errors coded."""

from __future__ import annotations

import strawberry

from kandev.domain.errors import NotFoundError, ValidationError
from kandev.graphql.schema.error_codes import CodedMaskErrors

LEAK = "connection to postgres://kandev:hunter2@db failed"


@strawberry.type
class Query:
    @strawberry.field
    def broken(self) -> str:
        raise RuntimeError(LEAK)

    @strawberry.field
    def maybe(self) -> str | None:
        raise RuntimeError(LEAK)

    @strawberry.field
    def missing(self) -> str:
        raise NotFoundError("Task", "t-1")

    @strawberry.field
    def invalid(self) -> str:
        raise ValidationError("the title must not be empty", field="title")

    @strawberry.field
    def fine(self) -> str:
        return "ok"


tiny = strawberry.Schema(query=Query, extensions=[CodedMaskErrors])


async def test_an_unexpected_exception_in_a_resolver_is_masked_with_code_internal_and_no_exception_text() -> None:
    result = await tiny.execute("{ broken }")
    [error] = result.errors or []
    assert error.extensions == {"code": "INTERNAL"}
    assert LEAK not in error.message and "hunter2" not in str(error.formatted)
    assert error.path == ["broken"]


async def test_a_masked_error_leaves_the_other_fields_of_the_answer_intact() -> None:
    result = await tiny.execute("{ fine maybe }")
    assert result.data == {"fine": "ok", "maybe": None}
    [error] = result.errors or []
    assert error.extensions == {"code": "INTERNAL"} and "hunter2" not in str(error.formatted)


async def test_a_domain_error_keeps_its_message_and_carries_its_code() -> None:
    result = await tiny.execute("{ missing }")
    [error] = result.errors or []
    assert error.message == "Task not found"
    assert error.extensions is not None and error.extensions["code"] == "NOT_FOUND"


async def test_a_validation_error_names_its_field() -> None:
    result = await tiny.execute("{ invalid }")
    [error] = result.errors or []
    assert error.extensions is not None
    assert error.extensions["code"] == "VALIDATION" and error.extensions["field"] == "title"


async def test_a_query_the_schema_rejects_is_the_callers_mistake_not_an_incident() -> None:
    result = await tiny.execute("{ nope }")
    [error] = result.errors or []
    assert "nope" in error.message
    assert error.extensions is not None and error.extensions["code"] == "GRAPHQL_VALIDATION_FAILED"
