"""Names both sides of the agent protocol use: the stop reason of a finished turn and our MCP server's name."""

END_TURN = "end_turn"
MCP_SERVER_NAME = "kandev"
