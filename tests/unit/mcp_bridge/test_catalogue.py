"""The catalogue is consistent with the GraphQL schema and the profiles."""

from __future__ import annotations

import pytest
from graphql import parse, validate

from kandev.domain.sessions.tool_profiles import CAPABILITY_TOOLS, SURFACE_TOOLS, Surface
from kandev.edge.mcp_bridge.catalogue import CATALOGUE
from kandev.edge.mcp_bridge.tool_surface import to_mcp_tool  # noqa: F401 - registers the tools
from kandev.graphql.root import schema


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_tool_operation_is_valid_against_the_schema(name):
    errors = validate(schema._schema, parse(CATALOGUE[name].document))
    assert errors == []


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_tool_schema_is_closed_and_described(name):
    spec = CATALOGUE[name]
    # The authoring surface's tools are named as the spec names them, without the suffix.
    assert name.endswith("_kandev") or name in SURFACE_TOOLS[Surface.AUTOMATION_AUTHORING]
    assert spec.input_schema["type"] == "object" and spec.input_schema["additionalProperties"] is False
    assert len(spec.description) > 20
    for hidden in [*spec.aliases, *spec.ignored]:
        assert hidden not in spec.input_schema["properties"], "aliases and ignored arguments are never advertised"


def test_every_tool_a_profile_names_is_in_the_catalogue():
    named = {n for names in SURFACE_TOOLS.values() for n in names} | {
        n for names in CAPABILITY_TOOLS.values() for n in names
    }
    assert named - set(CATALOGUE) == set()
