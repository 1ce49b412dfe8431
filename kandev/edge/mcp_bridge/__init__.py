"""The MCP server: backend-owned tool profiles, each tool a GraphQL operation, list_changed fan-out."""
