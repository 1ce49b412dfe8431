"""Plain fields are read straight off their objects, with the same answers and errors as graphql-core's."""

from __future__ import annotations

from enum import Enum

import strawberry
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from kandev.graphql.schema.plain_fields import PlainFieldExecutor, held_in, plain_field

calls: list[str] = []


@strawberry.enum
class Mood(Enum):
    CALM = "calm"
    BUSY = "busy"


@strawberry.type
class Item:
    name: str
    count: int | None
    mood: Mood
    held: strawberry.Private[Mood | None] = None

    @strawberry.field
    @held_in("held")
    def computed(self) -> Mood:
        calls.append("computed")
        return self.held if self.held is not None else Mood.BUSY

    @strawberry.field
    @held_in("held")
    def maybe(self) -> Mood | None:
        calls.append("maybe")
        return self.held

    @strawberry.field
    def shout(self, times: int = 1) -> str:
        return self.name.upper() * times


@strawberry.type
class Query:
    @strawberry.field
    def items(self) -> list[Item]:
        return [Item(name="a", count=None, mood=Mood.CALM, held=Mood.CALM), Item(name="b", count=2, mood=Mood.BUSY)]

    @strawberry.field
    def broken(self) -> Item:
        return Item(name=None, count=1, mood=Mood.CALM)  # type: ignore[arg-type]  # a resolver bug, on purpose


fast = strawberry.Schema(query=Query, execution_context_class=PlainFieldExecutor)
slow = strawberry.Schema(query=Query)
full_paths: list[str] = []


class _CountingFullPath(StrawberryGraphQLCoreExecutionContext):
    def execute_field(self, parent_type, source, field_details_list, path, position_context):  # noqa: ANN001, ANN201
        full_paths.append(f"{parent_type.name}.{field_details_list[0].node.name.value}")
        return super().execute_field(parent_type, source, field_details_list, path, position_context)


class _CountedPlainFieldExecutor(PlainFieldExecutor, _CountingFullPath):
    pass


counted = strawberry.Schema(query=Query, execution_context_class=_CountedPlainFieldExecutor)


def test_plain_and_held_fields_answer_as_graphql_core_does():
    query = "{ items { name count mood computed shout(times: 2) } }"
    calls.clear()
    expected = slow.execute_sync(query)
    calls_without_shortcut = len(calls)
    calls.clear()
    answered = fast.execute_sync(query)
    assert answered.errors is None and answered.data == expected.data
    assert answered.data["items"][0] == {"name": "a", "count": None, "mood": "CALM", "computed": "CALM", "shout": "AA"}
    # The first item held its answer, the second did not: only the second called the resolver.
    assert (calls_without_shortcut, len(calls)) == (2, 1)


def test_a_null_in_a_nullable_plain_field_answers_null_without_the_full_path():
    full_paths.clear()
    answered = counted.execute_sync("{ items { name count } }")
    assert answered.errors is None
    assert answered.data == {"items": [{"name": "a", "count": None}, {"name": "b", "count": 2}]}
    assert full_paths == ["Query.items"]


def test_a_held_field_holding_none_still_asks_its_resolver():
    calls.clear()
    full_paths.clear()
    answered = counted.execute_sync("{ items { maybe } }")
    assert answered.errors is None and answered.data == {"items": [{"maybe": "CALM"}, {"maybe": None}]}
    assert calls == ["maybe"] and full_paths == ["Query.items", "Item.maybe"]


def test_a_null_in_a_non_null_plain_field_is_still_an_error_at_its_path():
    answered = fast.execute_sync("{ broken { name } }")
    expected = slow.execute_sync("{ broken { name } }")
    assert answered.data is None and expected.data is None
    assert [e.path for e in answered.errors] == [e.path for e in expected.errors] == [["broken", "name"]]
    assert answered.errors[0].message == expected.errors[0].message


def test_only_fields_without_arguments_or_unmarked_resolvers_are_plain():
    fields = fast._schema.type_map["Item"].fields
    assert plain_field(fields["name"]) == ("name", fast._schema.type_map["String"], False)
    assert plain_field(fields["count"]) == ("count", fast._schema.type_map["Int"], True)
    assert plain_field(fields["maybe"]) == ("held", fast._schema.type_map["Mood"], False)
    assert plain_field(fields["computed"])[0] == "held"
    assert plain_field(fields["shout"]) is None
    assert plain_field(fast._schema.type_map["Query"].fields["items"]) is None


def test_a_list_of_objects_with_only_plain_fields_is_answered_whole_with_the_same_answers():
    full_paths.clear()
    query = "{ items { name count mood } }"
    answered = counted.execute_sync(query)
    assert answered.errors is None and answered.data == slow.execute_sync(query).data
    assert full_paths == ["Query.items"]  # no field of any item took graphql-core's path


def test_an_object_needing_the_full_path_is_answered_by_it_with_the_same_error():
    @strawberry.type
    class Lists:
        @strawberry.field
        def items(self) -> list[Item]:
            return [Item(name="a", count=1, mood=Mood.CALM), Item(name=None, count=2, mood=Mood.BUSY)]  # type: ignore[arg-type]

    quick = strawberry.Schema(query=Lists, execution_context_class=PlainFieldExecutor)
    plain = strawberry.Schema(query=Lists)
    answered, expected = quick.execute_sync("{ items { name mood } }"), plain.execute_sync("{ items { name mood } }")
    assert answered.data == expected.data
    assert [e.path for e in answered.errors] == [e.path for e in expected.errors] == [["items", 1, "name"]]
