"""The GraphQL schema: types, inputs, payload unions and the root operation types."""
