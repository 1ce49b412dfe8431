"""Workspaces (list, create), workflows and their steps, agent profiles."""

from __future__ import annotations

from kandev.edge.mcp_bridge.catalogue import ToolCall, ToolSpec, command_tool, obj, register, string
from kandev.edge.mcp_bridge.tools.fields import STEP, WORKSPACE_ID, workspace_of


async def _workspace(call: ToolCall) -> dict[str, object]:
    return {"ws": workspace_of(call)}


# Shared with the authoring chat's surface (kandev.edge.mcp_bridge.tools.automation_authoring).
LIST_AGENTS = ToolSpec(
    name="list_agents_kandev",
    description=(
        "List the agent profiles of a workspace, its own and the server-wide ones (`server_wide`); "
        "`available` is false while an agent's command is not installed."
    ),
    input_schema=obj({"workspace_id": WORKSPACE_ID}),
    document="""query($ws: ID!) { agentProfiles(workspaceId: $ws) {
      id name kind available builtin supports_mcp: supportsMcp permission_policy: permissionPolicy
      missing_command: missingCommand server_wide: serverWide } }""",
    variables=_workspace,
    result=lambda data: {"agents": data["agentProfiles"]},
)


register(
    ToolSpec(
        name="list_workspaces_kandev",
        description="List the workspaces you can see, with each one's default workflow id.",
        input_schema=obj({}),
        document="{ workspaces { id name default_workflow_id: defaultWorkflowId } }",
        variables=lambda call: {},
        result=lambda data: {"workspaces": data["workspaces"]},
    ),
    command_tool(
        "create_workspace_kandev",
        "createWorkspace",
        "Create a workspace of your own, ready to use: the default Kanban workflow and the built-in agent "
        "profiles. Answers the workspace with its id and default_workflow_id.",
        "... on WorkspacePayload { workspace { id name default_workflow_id: defaultWorkflowId } }",
        lambda payload: payload["workspace"],
    ),
    ToolSpec(
        name="list_workflows_kandev",
        description="List a workspace's workflows with their ordered steps (ids, names, start/final flags).",
        input_schema=obj({"workspace_id": WORKSPACE_ID}),
        document=f"query($ws: ID!) {{ workflows(workspaceId: $ws) {{ id name steps {{ {STEP} }} }} }}",
        variables=_workspace,
        result=lambda data: {"workflows": data["workflows"]},
    ),
    ToolSpec(
        name="list_workflow_steps_kandev",
        description=(
            "List a workflow's steps in order, every field explicit, including auto_advance_requires_signal "
            "(true: the step advances only after step_complete_kandev)."
        ),
        input_schema=obj({"workflow_id": string("The workflow's id.", minLength=1)}, ("workflow_id",)),
        document=f"query($id: ID!) {{ workflow(id: $id) {{ steps {{ {STEP} }} }} }}",
        variables=lambda call: {"id": call.arguments["workflow_id"]},
        result=lambda data: {"steps": data["workflow"]["steps"]},
    ),
    LIST_AGENTS,
)
