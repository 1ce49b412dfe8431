"""The GraphQL schema's parts: types, inputs, enums and payload unions (the root schema is kandev.graphql.root)."""
