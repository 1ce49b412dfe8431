"""GraphQL input errors keep what is wrong and where, but never the submitted values."""

from __future__ import annotations

from kandev.graphql.schema.error_text import value_free


def test_an_echoed_input_object_is_cut_from_a_coercion_message() -> None:
    message = (
        "Variable '$i' has invalid value: Expected value of type 'CreateSecretInput' to include required"
        " field 'name', found: {'workspaceId': 'w', 'value': 'sk-123456'}."
    )
    assert value_free(message) == (
        "Variable '$i' has invalid value: Expected value of type 'CreateSecretInput' to include required field 'name'."
    )


def test_a_scalar_that_cannot_represent_a_value_does_not_echo_it() -> None:
    message = "Variable '$i' has invalid value at 'i.name': String cannot represent a non string value: ['sk-1']"
    assert (
        value_free(message)
        == "Variable '$i' has invalid value at 'i.name': String cannot represent a non string value."
    )


def test_a_message_without_values_is_unchanged() -> None:
    assert value_free("Cannot query field 'nope' on type 'Query'.") == "Cannot query field 'nope' on type 'Query'."
