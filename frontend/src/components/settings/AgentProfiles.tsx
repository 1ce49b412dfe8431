// Agent profiles: what each runs, whether it can run here (and what to do when not), and a form to add or
// change one. The command is one argument per line; the environment one NAME=value per line, where a value
// may reference a workspace secret as ${secret:NAME}. The server decides who may set kind, command and env.
import { lazy, Suspense, useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { AGENT_PROFILES, CREATE_AGENT_PROFILE, DELETE_AGENT_PROFILE, UPDATE_AGENT_PROFILE, type ProfileRow } from "../../api/settingsOps";
import type { AgentKind, PermissionPolicy } from "../../gql/graphql";
import { app } from "../../state/app";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";
import { McpSelector } from "./McpSelector";
import { useConfigChange } from "../../hooks/useConfigChange";
import type { CatalogueEntry } from "../../api/catalogueOps";
import { t } from "../../i18n";

// The catalogue is a chunk of its own: the profiles show at once, the catalogue a moment later.
const AgentCatalogue = lazy(() => import("./AgentCatalogue").then((m) => ({ default: m.AgentCatalogue })));

const KINDS: { value: AgentKind; label: string }[] = [
  { value: "ACP" as AgentKind, label: "ACP agent (a command to run)" },
  { value: "SCRIPTED" as AgentKind, label: "Scripted (built in, follows /say, /tool … directives)" },
];
const POLICIES: { value: PermissionPolicy; label: string }[] = [
  { value: "ASK" as PermissionPolicy, label: "Ask me" },
  { value: "ALLOW" as PermissionPolicy, label: "Allow everything" },
  { value: "DENY" as PermissionPolicy, label: "Deny everything" },
];

interface Draft {
  name: string;
  kind: AgentKind;
  command: string;
  env: string;
  supportsMcp: boolean;
  permissionPolicy: PermissionPolicy;
}

const EMPTY: Draft = { name: "", kind: "ACP" as AgentKind, command: "", env: "", supportsMcp: true, permissionPolicy: "ASK" as PermissionPolicy };

function draftOf(p: ProfileRow): Draft {
  const env = Object.entries((p.env ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`);
  return { name: p.name, kind: p.kind, command: p.command.join("\n"), env: env.join("\n"), supportsMcp: p.supportsMcp, permissionPolicy: p.permissionPolicy };
}

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

/** NAME=value lines as an object; a line without "=" is an error the form shows. */
function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of lines(text)) {
    const at = line.indexOf("=");
    if (at <= 0) throw new Error(`"${line}" is not NAME=value`);
    env[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return env;
}

/** A new profile that runs an installed catalogue agent, its environment keys taken from secrets of the same name;
 * named after the agent, or, when a profile has that name (the presets do), as the installed one. */
function draftFromCatalogue(entry: CatalogueEntry, profiles: ProfileRow[]): Draft {
  const env = entry.envKeys.map((key) => `${key}=\${secret:${key}}`).join("\n");
  const name = profiles.some((p) => p.name === entry.name) ? t("catalogueProfileName", { name: entry.name }) : entry.name;
  return { ...EMPTY, name, command: (entry.installedCommand ?? entry.command).join("\n"), env };
}

export function availability(p: ProfileRow): string {
  if (p.available) return "Available";
  return `Unavailable: '${p.missingCommand}' is not on the server's PATH. Install it there, or change the command.`;
}

export function AgentProfiles() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const [profiles, setProfiles] = useState<ProfileRow[] | null>(null);
  const [editing, setEditing] = useState<ProfileRow | Draft | "new" | null>(null);
  const load = useAction();
  const reload = useCallback(
    () =>
      load.run(async () => {
        const rows = (await gql(AGENT_PROFILES, { w: workspaceId })).agentProfiles;
        setProfiles(rows);
        app.set({ profiles: rows }); // the task forms' profile pickers
      }),
    [workspaceId],
  );
  useEffect(() => void reload(), [reload]);
  useConfigChange(["AGENT_PROFILE"], reload);

  return (
    <div className="settings-body">
      <div className="panel">
        <div className="panel-head">
          <h2>Agent profiles</h2>
          <button type="button" className="btn btn-small btn-primary" onClick={() => setEditing("new")} data-testid="new-profile">
            New profile
          </button>
        </div>
        <FormError error={load.error} />
        <ul className="rows" data-testid="profiles">
          {profiles?.map((p) => (
            <li key={p.id} className="row" data-testid="profile" data-name={p.name}>
              <div className="row-main">
                <strong>{p.name}</strong> <span className="muted">{p.kind === "SCRIPTED" ? "Scripted" : p.kind === "ACP" ? p.command.join(" ") : "Built-in authoring agent"}</span>
                <div className={p.available ? "muted" : "notice"} data-testid="profile-availability">
                  {availability(p)}
                  {p.serverWide && " · Server-wide"}
                </div>
              </div>
              <button type="button" className="btn btn-small" onClick={() => setEditing(p)} data-testid="edit-profile">
                Edit
              </button>
            </li>
          ))}
        </ul>
      </div>
      {editing && (
        <ProfileForm
          key={editing === "new" ? "new" : "id" in editing ? editing.id : `catalogue:${editing.name}`}
          workspaceId={workspaceId}
          profile={editing === "new" || !("id" in editing) ? null : editing}
          initial={editing !== "new" && !("id" in editing) ? editing : undefined}
          onDone={() => {
            setEditing(null);
            void reload();
          }}
        />
      )}
      <Suspense fallback={null}>
        <AgentCatalogue onUse={(entry) => setEditing(draftFromCatalogue(entry, profiles ?? []))} onInstalled={reload} />
      </Suspense>
    </div>
  );
}

function ProfileForm({ workspaceId, profile, initial, onDone }: { workspaceId: string; profile: ProfileRow | null; initial?: Draft; onDone: () => void }) {
  const [draft, setDraft] = useState<Draft>(profile ? draftOf(profile) : (initial ?? EMPTY));
  const save = useAction();
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const builtinProgram = draft.kind !== "ACP";

  const submit = () =>
    save.run(async () => {
      const env = parseEnv(draft.env);
      const fields = {
        name: draft.name,
        kind: draft.kind,
        command: builtinProgram ? [] : lines(draft.command),
        env,
        supportsMcp: draft.supportsMcp,
        permissionPolicy: draft.permissionPolicy,
      };
      if (profile) {
        // Unchanged kind, command and env are not sent: a non-admin may still rename and re-tune a profile.
        const before = draftOf(profile);
        const input = {
          agentProfileId: profile.id,
          name: fields.name,
          supportsMcp: fields.supportsMcp,
          permissionPolicy: fields.permissionPolicy,
          ...(draft.kind !== before.kind && { kind: fields.kind }),
          ...(draft.command !== before.command && { command: fields.command }),
          ...(draft.env !== before.env && { env: fields.env }),
        };
        unwrap((await gql(UPDATE_AGENT_PROFILE, { i: input })).updateAgentProfile);
      } else {
        unwrap((await gql(CREATE_AGENT_PROFILE, { i: { workspaceId, ...fields } })).createAgentProfile);
      }
      onDone();
    });
  const remove = () =>
    profile &&
    window.confirm(`Delete the agent profile ${profile.name}?`) &&
    save.run(async () => {
      unwrap((await gql(DELETE_AGENT_PROFILE, { id: profile.id })).deleteAgentProfile);
      onDone();
    });

  return (
    <form className="panel" onSubmit={(e) => (e.preventDefault(), void submit())} aria-label={profile ? `Edit ${profile.name}` : "New agent profile"} data-testid="profile-form">
      <h2>{profile ? `Edit ${profile.name}` : "New agent profile"}</h2>
      <div className="field-row">
        <label className="field">
          <span>Name</span>
          <input className="input" value={draft.name} onChange={(e) => set("name", e.target.value)} maxLength={200} required autoFocus={Boolean(initial)} data-testid="profile-name" />
        </label>
        {(draft.kind as string) !== "AUTHOR" && (
          <label className="field">
            <span>Kind</span>
            <select className="input" value={draft.kind} onChange={(e) => set("kind", e.target.value as AgentKind)} data-testid="profile-kind">
              {KINDS.map((k) => (
                <option key={k.value} value={k.value}>
                  {k.label}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {!builtinProgram && (
        <label className="field">
          <span>Command (one argument per line)</span>
          <textarea className="input mono" rows={3} value={draft.command} onChange={(e) => set("command", e.target.value)} placeholder={"claude-code-acp"} required data-testid="profile-command" />
        </label>
      )}
      <label className="field">
        <span>Environment (NAME=value per line; a secret as {"${secret:NAME}"})</span>
        <textarea className="input mono" rows={3} value={draft.env} onChange={(e) => set("env", e.target.value)} placeholder={"ANTHROPIC_API_KEY=${secret:ANTHROPIC_API_KEY}"} data-testid="profile-env" />
      </label>
      <div className="field-row">
        <label className="field">
          <span>When the agent asks for permission</span>
          <select className="input" value={draft.permissionPolicy} onChange={(e) => set("permissionPolicy", e.target.value as PermissionPolicy)} data-testid="profile-policy">
            {POLICIES.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field-inline">
          <input type="checkbox" checked={draft.supportsMcp} onChange={(e) => set("supportsMcp", e.target.checked)} data-testid="profile-mcp" />
          Give the agent Kandev's MCP tools (needed for autopilot)
        </label>
      </div>
      {profile && <McpSelector workspaceId={workspaceId} scope="PROFILE" targetId={profile.id} />}
      <FormError error={save.error} testId="profile-error" />
      <div className="field-row">
        <button className="btn btn-primary" disabled={save.busy || !draft.name.trim()} data-testid="save-profile">
          {profile ? "Save" : "Create"}
        </button>
        <button type="button" className="btn" onClick={onDone}>
          Cancel
        </button>
        {profile && (
          <button type="button" className="btn btn-danger" onClick={() => void remove()} data-testid="delete-profile">
            Delete
          </button>
        )}
      </div>
    </form>
  );
}
