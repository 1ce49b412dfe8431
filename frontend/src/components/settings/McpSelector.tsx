// The MCP servers selected at one scope (an agent profile, a repository), collapsed by default; a toggle selects
// or deselects at once, and sessions pick the change up when their turn is idle.
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { DESELECT_MCP_SERVER, MCP_SERVERS, SELECT_MCP_SERVER, SELECTED_MCP_SERVERS, type McpServerRow } from "../../api/mcpOps";
import type { McpScope } from "../../gql/graphql";
import { FormError, useAction } from "./useAction";
import { useConfigChange } from "../../hooks/useConfigChange";

export function McpSelector({ workspaceId, scope, targetId }: { workspaceId: string; scope: McpScope; targetId: string }) {
  const [servers, setServers] = useState<McpServerRow[]>([]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const action = useAction();
  const reload = useCallback(
    () =>
      action.run(async () => {
        const [all, chosen] = await Promise.all([gql(MCP_SERVERS, { w: workspaceId }), gql(SELECTED_MCP_SERVERS, { s: scope, t: targetId })]);
        setServers(all.mcpServers);
        setSelected(new Set(chosen.selectedMcpServers.map((s) => s.id)));
      }),
    [workspaceId, scope, targetId],
  );
  useEffect(() => void reload(), [reload]);
  // Selected or deselected elsewhere (another tab, or at a scope this one inherits from): the server says MCP_SERVER.
  useConfigChange(["MCP_SERVER"], reload);
  const toggle = (server: McpServerRow, on: boolean) =>
    action.run(async () => {
      const i = { mcpServerId: server.id, scope, targetId };
      if (on) unwrap((await gql(SELECT_MCP_SERVER, { i })).selectMcpServer);
      else unwrap((await gql(DESELECT_MCP_SERVER, { i })).deselectMcpServer);
      await reload();
    });
  return (
    <details className="field" data-testid="mcp-selector">
      <summary>MCP servers ({selected.size})</summary>
      {servers.length === 0 && <p className="muted">No MCP servers are configured (Settings → MCP servers).</p>}
      {servers.map((s) => (
        <label key={s.id} className="field-inline">
          <input type="checkbox" checked={selected.has(s.id)} disabled={action.busy} onChange={(e) => void toggle(s, e.target.checked)} data-testid="mcp-select" data-name={s.name} />
          <code>{s.name}</code>
        </label>
      ))}
      <FormError error={action.error} />
    </details>
  );
}
