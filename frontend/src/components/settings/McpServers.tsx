// Workspace MCP servers: the Configured view (add, edit, delete) and the Marketplace view (Kandev-curated
// templates to review and add). Header and env values bind workspace secrets as ${secret:NAME}; saving starts nothing.
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import {
  CREATE_MCP_SERVER,
  DELETE_MCP_SERVER,
  MCP_SERVER_TEMPLATES,
  MCP_SERVERS,
  UPDATE_MCP_SERVER,
  type McpServerRow,
  type McpTemplateRow,
} from "../../api/mcpOps";
import type { McpServerKind } from "../../gql/graphql";
import { app } from "../../state/app";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";
import { McpRegistryList } from "./McpRegistryList";
import { useConfigChange } from "../../hooks/useConfigChange";

type Draft = { id: string | null; kind: McpServerKind; name: string; url: string; headers: string; pkg: string; command: string; args: string; env: string };

const EMPTY: Draft = { id: null, kind: "REMOTE", name: "", url: "", headers: "", pkg: "", command: "", args: "", env: "" };

function pairs(text: string, separator: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const at = line.indexOf(separator);
    if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + separator.length).trim();
  }
  return out;
}

function unpairs(values: unknown, separator: string): string {
  return Object.entries((values ?? {}) as Record<string, string>)
    .map(([k, v]) => `${k}${separator}${v}`)
    .join("\n");
}

function draftOf(s: McpServerRow): Draft {
  return {
    id: s.id,
    kind: s.kind,
    name: s.name,
    url: s.url ?? "",
    headers: unpairs(s.headers, ": "),
    pkg: s.package ?? "",
    command: s.command ?? "",
    args: s.args.join("\n"),
    env: unpairs(s.env, "="),
  };
}

function fromTemplate(t: McpTemplateRow): Draft {
  return { ...EMPTY, kind: t.kind, name: t.name, url: t.url ?? "", headers: unpairs(t.headers, ": "), pkg: t.package ?? "" };
}

function where(s: McpServerRow): string {
  return s.url ?? s.package ?? s.command ?? "";
}

export function McpServers() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const [servers, setServers] = useState<McpServerRow[] | null>(null);
  const [templates, setTemplates] = useState<McpTemplateRow[]>([]);
  const [view, setView] = useState<"configured" | "marketplace">("configured");
  // Each new draft (a template, an edit, a reset) remounts the form with it.
  const [draft, setDraftState] = useState<{ n: number; d: Draft }>({ n: 0, d: EMPTY });
  const setDraft = (d: Draft) => setDraftState((current) => ({ n: current.n + 1, d }));
  const load = useAction();
  const reload = useCallback(
    () => load.run(async () => setServers((await gql(MCP_SERVERS, { w: workspaceId })).mcpServers)),
    [workspaceId],
  );
  useEffect(() => void reload(), [reload]);
  useConfigChange(["MCP_SERVER"], reload);
  useEffect(() => void gql(MCP_SERVER_TEMPLATES, {}).then((r) => setTemplates(r.mcpServerTemplates)), []);

  return (
    <div className="settings-body">
      <p className="muted">
        MCP servers Kandev hands agents beside its own. Bind secrets as <code>{"${secret:NAME}"}</code>; saving starts, downloads and connects to nothing.
        Servers that run a local process (npm, executable) are for admins.
      </p>
      <nav className="tabs" aria-label="MCP server views">
        <button type="button" className={view === "configured" ? "tab tab-current" : "tab"} aria-pressed={view === "configured"} onClick={() => setView("configured")} data-testid="mcp-view-configured">
          Configured
        </button>
        <button type="button" className={view === "marketplace" ? "tab tab-current" : "tab"} aria-pressed={view === "marketplace"} onClick={() => setView("marketplace")} data-testid="mcp-view-marketplace">
          Marketplace
        </button>
      </nav>
      {view === "configured" ? (
        <div className="panel">
          <h2>Configured</h2>
          <FormError error={load.error} />
          {servers && servers.length === 0 && <p className="muted">No MCP servers yet.</p>}
          <ul className="rows" data-testid="mcp-servers">
            {servers?.map((s) => <McpServerItem key={s.id} server={s} onEdit={() => setDraft(draftOf(s))} onChange={reload} />)}
          </ul>
        </div>
      ) : (
        <div className="panel">
          <h2>Marketplace</h2>
          <p className="muted">Kandev-curated templates, and the MCP Registry's entries when one is configured; review the publisher, endpoint or exact version and the secrets before adding one.</p>
          <ul className="rows" data-testid="mcp-templates">
            {templates.map((t) => (
              <li className="row" key={t.key} data-testid="mcp-template" data-key={t.key}>
                <span className="row-main">
                  <strong>{t.title}</strong> <span className="muted">{t.publisher} · {t.kind.toLowerCase()} · {t.url ?? t.package}</span>
                  <br />
                  <span className="muted">{t.description}</span>
                </span>
                <button type="button" className="btn btn-small" onClick={() => (setDraft(fromTemplate(t)), setView("configured"))} data-testid="use-template">
                  Use
                </button>
              </li>
            ))}
          </ul>
          <McpRegistryList workspaceId={workspaceId} onAdded={reload} />
        </div>
      )}
      <McpServerForm key={draft.n} workspaceId={workspaceId} initial={draft.d} onDone={() => (setDraft(EMPTY), void reload())} />
    </div>
  );
}

function McpServerItem({ server, onEdit, onChange }: { server: McpServerRow; onEdit: () => void; onChange: () => Promise<unknown> }) {
  const action = useAction();
  const remove = () =>
    window.confirm(`Delete the MCP server ${server.name}? Sessions that use it lose it at their next start.`) &&
    action.run(async () => {
      unwrap((await gql(DELETE_MCP_SERVER, { id: server.id })).deleteMcpServer);
      await onChange();
    });
  return (
    <li className="row" data-testid="mcp-server" data-name={server.name}>
      <span className="row-main">
        <code>{server.name}</code> <span className="muted">{server.kind.toLowerCase()} · {where(server)}</span>
        {server.serverWide && <span className="badge">server-wide</span>}
      </span>
      <button type="button" className="btn btn-small" onClick={onEdit} data-testid="edit-mcp-server">
        Edit
      </button>
      <button type="button" className="btn btn-small btn-danger" onClick={() => void remove()} data-testid="delete-mcp-server">
        Delete
      </button>
      <FormError error={action.error} />
    </li>
  );
}

function McpServerForm({ workspaceId, initial, onDone }: { workspaceId: string; initial: Draft; onDone: () => void }) {
  const [d, setD] = useState<Draft>(initial);
  const save = useAction();
  const set = (field: keyof Draft) => (e: { target: { value: string } }) => setD({ ...d, [field]: e.target.value });
  const submit = () =>
    save.run(async () => {
      const remote = d.kind === "REMOTE";
      const local = {
        args: remote ? undefined : d.args.split("\n").map((a) => a.trim()).filter(Boolean),
        env: remote ? undefined : pairs(d.env, "="),
      };
      const common = {
        name: d.name,
        url: remote ? d.url : undefined,
        headers: remote ? pairs(d.headers, ":") : undefined,
        package: d.kind === "NPM" ? d.pkg : undefined,
        command: d.kind === "EXECUTABLE" ? d.command : undefined,
        ...local,
      };
      if (d.id) unwrap((await gql(UPDATE_MCP_SERVER, { i: { mcpServerId: d.id, ...common } })).updateMcpServer);
      else unwrap((await gql(CREATE_MCP_SERVER, { i: { workspaceId, kind: d.kind, ...common } })).createMcpServer);
      onDone();
    });
  return (
    <form className="panel" onSubmit={(e) => (e.preventDefault(), void submit())} data-testid="mcp-server-form">
      <h2>{d.id ? `Edit ${initial.name}` : "Add an MCP server"}</h2>
      <div className="field-row">
        <label className="field">
          <span>Kind</span>
          <select className="input" value={d.kind} onChange={(e) => setD({ ...d, kind: e.target.value as McpServerKind })} disabled={!!d.id} data-testid="mcp-kind">
            <option value={"REMOTE"}>Remote endpoint</option>
            <option value={"NPM"}>npm package (exact version)</option>
            <option value={"EXECUTABLE"}>Executable</option>
          </select>
        </label>
        <label className="field">
          <span>Name</span>
          <input className="input" value={d.name} onChange={set("name")} required pattern="[A-Za-z0-9][A-Za-z0-9_\-]*" data-testid="mcp-name" />
        </label>
      </div>
      {d.kind === "REMOTE" && (
        <>
          <label className="field">
            <span>URL</span>
            <input className="input" value={d.url} onChange={set("url")} placeholder="https://mcp.example.com/mcp" required data-testid="mcp-url" />
          </label>
          <label className="field">
            <span>Headers (one per line, Name: Bearer {"${secret:NAME}"})</span>
            <textarea className="input" value={d.headers} onChange={set("headers")} rows={2} data-testid="mcp-headers" />
          </label>
        </>
      )}
      {d.kind === "NPM" && (
        <label className="field">
          <span>Package (name@x.y.z)</span>
          <input className="input" value={d.pkg} onChange={set("pkg")} placeholder="@scope/server@1.2.3" required data-testid="mcp-package" />
        </label>
      )}
      {d.kind === "EXECUTABLE" && (
        <label className="field">
          <span>Command (absolute path)</span>
          <input className="input" value={d.command} onChange={set("command")} required data-testid="mcp-command" />
        </label>
      )}
      {d.kind !== "REMOTE" && (
        <div className="field-row">
          <label className="field">
            <span>Arguments (one per line)</span>
            <textarea className="input" value={d.args} onChange={set("args")} rows={2} data-testid="mcp-args" />
          </label>
          <label className="field">
            <span>Environment (NAME=value or {"${secret:NAME}"})</span>
            <textarea className="input" value={d.env} onChange={set("env")} rows={2} data-testid="mcp-env" />
          </label>
        </div>
      )}
      <div className="field-row">
        <button className="btn btn-primary" disabled={save.busy || !d.name} data-testid="save-mcp-server">
          {d.id ? "Save" : "Add"}
        </button>
        {d.id && (
          <button type="button" className="btn" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
      <FormError error={save.error} testId="mcp-error" />
    </form>
  );
}
