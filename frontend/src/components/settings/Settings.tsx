// /settings/<section>: the workspace, its workflows, agent and executor profiles, repositories, secrets, MCP servers,
// code-host connections, automations, notifications and the user's access tokens.
import { lazy, Suspense } from "react";
import { linkClick } from "../../router";
import { AgentProfiles } from "./AgentProfiles";
import { AccessTokens } from "./AccessTokens";
import { AutomationsSettings } from "./AutomationsSettings";
import { Connections } from "./Connections";
import { Executors } from "./Executors";
import { McpServers } from "./McpServers";
import { Notifications } from "./Notifications";
import { Repositories } from "./Repositories";
import { Secrets } from "./Secrets";
import { Workspaces } from "./Workspaces";

// The editor is the largest section and seldom opened: its own chunk, loaded on first visit.
const Workflows = lazy(() => import("./Workflows").then((m) => ({ default: m.Workflows })));

export const SECTIONS = [
  { id: "workspace", label: "Workspace", view: Workspaces },
  { id: "workflows", label: "Workflows", view: Workflows },
  { id: "agents", label: "Agent profiles", view: AgentProfiles },
  { id: "executors", label: "Executors", view: Executors },
  { id: "repositories", label: "Repositories", view: Repositories },
  { id: "secrets", label: "Secrets", view: Secrets },
  { id: "connections", label: "Code hosts", view: Connections },
  { id: "mcp", label: "MCP servers", view: McpServers },
  { id: "automations", label: "Automations", view: AutomationsSettings },
  { id: "notifications", label: "Notifications", view: Notifications },
  { id: "tokens", label: "Access tokens", view: AccessTokens },
] as const;

export type SectionId = (typeof SECTIONS)[number]["id"];

export function Settings({ section }: { section: string }) {
  const current = SECTIONS.find((s) => s.id === section) ?? SECTIONS[0];
  const View = current.view;
  return (
    <section className="settings pad" aria-labelledby="settings-title" data-testid="settings">
      <h1 id="settings-title" className="page-title">
        Settings
      </h1>
      <nav className="tabs" aria-label="Settings sections">
        {SECTIONS.map((s) => (
          <a
            key={s.id}
            href={`/settings/${s.id}`}
            onClick={linkClick(`/settings/${s.id}`)}
            className={s.id === current.id ? "tab tab-current" : "tab"}
            aria-current={s.id === current.id ? "page" : undefined}
            data-testid={`settings-tab-${s.id}`}
          >
            {s.label}
          </a>
        ))}
      </nav>
      <Suspense fallback={<p className="muted">Loading…</p>}>
        <View />
      </Suspense>
    </section>
  );
}
