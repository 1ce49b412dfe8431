// Public MCP Registry entries in the Marketplace view: publisher-supplied metadata (not a Kandev review), shown as
// plain text with how current the cache is; only active entries with an exact npm version or an http(s) remote can
// be added, and adding one makes a normal definition.
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { ADD_MCP_REGISTRY_ENTRY, MCP_REGISTRY, REFRESH_MCP_REGISTRY } from "../../api/mcpOps";
import type { McpRegistryFieldsFragment } from "../../gql/graphql";
import { FormError, useAction } from "./useAction";

type Entry = McpRegistryFieldsFragment["entries"][number];

const STATUS_TEXT: Record<McpRegistryFieldsFragment["status"], string> = {
  DISABLED: "No registry is configured (KANDEV_MCP_REGISTRY_URL).",
  FRESH: "Up to date",
  STALE: "Stale: the registry could not be reached; showing the last successful fetch",
  UNAVAILABLE: "Unavailable: the registry could not be reached and nothing is cached",
};

function when(at: string | null | undefined): string {
  return at ? new Date(at).toLocaleString() : "never";
}

export function McpRegistryList({ workspaceId, onAdded }: { workspaceId: string; onAdded: () => Promise<unknown> }) {
  const [registry, setRegistry] = useState<McpRegistryFieldsFragment | null>(null);
  const load = useAction();
  const reload = useCallback(() => load.run(async () => setRegistry((await gql(MCP_REGISTRY, { w: workspaceId })).mcpRegistry)), [workspaceId]);
  useEffect(() => void reload(), [reload]);
  const refresh = () => load.run(async () => setRegistry((await gql(REFRESH_MCP_REGISTRY, { w: workspaceId })).refreshMcpRegistry));
  if (!registry) return <FormError error={load.error} />;
  if (registry.status === "DISABLED") return <p className="muted" data-testid="mcp-registry-status" data-status="DISABLED">{STATUS_TEXT.DISABLED}</p>;
  return (
    <section data-testid="mcp-registry">
      <h3>MCP Registry</h3>
      <p className="muted">Publisher-supplied metadata, not a Kandev security review: check the publisher, the endpoint or exact version and the secrets before adding.</p>
      <p className={registry.status === "FRESH" ? "muted" : "notice"} data-testid="mcp-registry-status" data-status={registry.status}>
        {STATUS_TEXT[registry.status]} · fetched {when(registry.fetchedAt)}
        {registry.error && <> · {registry.error}</>}{" "}
        <button type="button" className="btn btn-small" onClick={() => void refresh()} disabled={load.busy} data-testid="refresh-mcp-registry">
          Refresh
        </button>
      </p>
      <FormError error={load.error} />
      <ul className="rows" data-testid="mcp-registry-entries">
        {registry.entries.map((e) => (
          <RegistryItem key={e.key} workspaceId={workspaceId} entry={e} onAdded={onAdded} />
        ))}
      </ul>
    </section>
  );
}

function RegistryItem({ workspaceId, entry, onAdded }: { workspaceId: string; entry: Entry; onAdded: () => Promise<unknown> }) {
  const action = useAction();
  const installable = entry.options.filter((o) => o.installable);
  const [option, setOption] = useState<number | null>(installable[0]?.index ?? null);
  const [name, setName] = useState(entry.suggestedName);
  const chosen = entry.options.find((o) => o.index === option);
  const add = () =>
    action.run(async () => {
      unwrap((await gql(ADD_MCP_REGISTRY_ENTRY, { i: { workspaceId, entryKey: entry.key, option, name } })).addMcpRegistryEntry);
      await onAdded();
    });
  return (
    <li className="row" data-testid="mcp-registry-entry" data-key={entry.key}>
      <span className="row-main">
        <strong>{entry.title}</strong> <span className="muted">{entry.publisher} · {entry.version} · publisher-supplied</span>
        <br />
        <span className="muted" data-testid="mcp-registry-description">{entry.description}</span>
        <ul className="muted">
          {entry.options.map((o) => (
            <li key={o.index}>
              {o.label}: {o.url ?? o.package ?? ""} {o.installable ? "" : <em data-testid="not-installable">not installable ({o.reason})</em>}
              {o.secrets.length > 0 && <> · secrets: {o.secrets.join(", ")}</>}
            </li>
          ))}
        </ul>
      </span>
      {entry.installable ? (
        <span className="field-inline">
          {installable.length > 1 && (
            <select className="input" value={option ?? ""} onChange={(e) => setOption(Number(e.target.value))} aria-label="Install option">
              {installable.map((o) => (
                <option key={o.index} value={o.index}>
                  {o.label}
                </option>
              ))}
            </select>
          )}
          <input className="input" value={name} onChange={(e) => setName(e.target.value)} aria-label="Name" data-testid="registry-name" />
          <button type="button" className="btn btn-small" disabled={action.busy || !chosen} onClick={() => void add()} data-testid="add-registry-entry">
            Add
          </button>
        </span>
      ) : (
        <span className="muted">not installable</span>
      )}
      <FormError error={action.error} />
    </li>
  );
}
