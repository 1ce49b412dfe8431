// A session's effective MCP servers with where each comes from (profile, repository, task, session), collapsed by
// default. Servers can be added at the session scope and a session-scope selection removed; inherited ones stay
// (a narrower scope only adds). Changes apply when the session's turn is idle.
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../api/graphql";
import { DESELECT_MCP_SERVER, MCP_SERVERS, SELECT_MCP_SERVER, SESSION_MCP_SERVERS, type McpServerRow } from "../api/mcpOps";
import type { SessionMcpServersQuery } from "../gql/graphql";
import { FormError, useAction } from "./settings/useAction";
import { useConfigChange } from "../hooks/useConfigChange";

type Effective = SessionMcpServersQuery["sessionMcpServers"];

const SCOPE_TEXT = { PROFILE: "agent profile", REPOSITORY: "repository", TASK: "task", SESSION: "session" } as const;

export function SessionMcpServers({ workspaceId, sessionId }: { workspaceId: string; sessionId: string }) {
  const [effective, setEffective] = useState<Effective | null>(null);
  const [servers, setServers] = useState<McpServerRow[]>([]);
  const [adding, setAdding] = useState("");
  const action = useAction();
  const reload = useCallback(
    () =>
      action.run(async () => {
        const [mine, all] = await Promise.all([gql(SESSION_MCP_SERVERS, { s: sessionId }), gql(MCP_SERVERS, { w: workspaceId })]);
        setEffective(mine.sessionMcpServers);
        setServers(all.mcpServers);
      }),
    [workspaceId, sessionId],
  );
  useEffect(() => void reload(), [reload]);
  // Selected or deselected elsewhere (another tab, or at a scope this one inherits from): the server says MCP_SERVER.
  useConfigChange(["MCP_SERVER"], reload);
  const change = (serverId: string, on: boolean) =>
    action.run(async () => {
      const i = { mcpServerId: serverId, scope: "SESSION" as const, targetId: sessionId };
      if (on) unwrap((await gql(SELECT_MCP_SERVER, { i })).selectMcpServer);
      else unwrap((await gql(DESELECT_MCP_SERVER, { i })).deselectMcpServer);
      setAdding("");
      await reload();
    });
  const present = new Set(effective?.servers.map((s) => s.id));
  const addable = servers.filter((s) => !present.has(s.id));
  return (
    <details className="session-mcp" data-testid="session-mcp">
      <summary>MCP servers ({effective?.servers.length ?? "…"})</summary>
      {effective && effective.servers.length === 0 && <p className="muted">No workspace MCP servers for this session.</p>}
      <ul className="rows">
        {effective?.servers.map((s) => {
          const sessionOnly = s.origins.every((o) => o.scope === "SESSION");
          return (
            <li key={s.id} className="row" data-testid="session-mcp-server" data-name={s.name}>
              <span className="row-main">
                <code>{s.name}</code>{" "}
                <span className="muted" data-testid="session-mcp-origins">
                  from {s.origins.map((o) => SCOPE_TEXT[o.scope]).join(", ")}
                </span>
              </span>
              {sessionOnly && (
                <button type="button" className="btn btn-small" disabled={action.busy} onClick={() => void change(s.id, false)} data-testid="session-mcp-remove">
                  Remove
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {addable.length > 0 && (
        <span className="field-inline">
          <select className="input" value={adding} onChange={(e) => setAdding(e.target.value)} aria-label="Add an MCP server to this session" data-testid="session-mcp-choice">
            <option value="">Add an MCP server…</option>
            {addable.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
          <button type="button" className="btn btn-small" disabled={!adding || action.busy} onClick={() => void change(adding, true)} data-testid="session-mcp-add">
            Add
          </button>
        </span>
      )}
      {effective && effective.desiredRevision !== effective.appliedRevision && (
        <p className="muted" data-testid="session-mcp-pending">Changes apply when the current turn is idle.</p>
      )}
      <FormError error={action.error} />
    </details>
  );
}
