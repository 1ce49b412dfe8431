// The shell: header with the connection state, the sidebar / mobile switcher, and the routed page.
import { lazy, Suspense, useEffect, useState, useSyncExternalStore } from "react";
import { onAuthChange, setToken, tokenNeeded, tokenWasRejected } from "../api/auth";
import { errorText, gql, unwrap } from "../api/graphql";
import { CREATE_WORKSPACE } from "../api/ops";
import { LIMITS } from "../api/limits";
import { linkState, onLinkState } from "../api/live";
import { app, boot, selectWorkspace } from "../state/app";
import { useStore } from "../state/store";
import { dismiss, toasts } from "../state/toasts";
import { t } from "../i18n";
import { linkClick, useRoute } from "../router";
import { useAutomationsLive } from "../state/automations";
import { AgendaPage, AutomationList, AutomationPage, RunRedirect } from "./Automations";
import { Board } from "./Board";
import { Dialog } from "./Dialog";
import { MenuGlyph } from "./Icons";
import { LoadState } from "./LoadState";
import { Settings } from "./settings/Settings";
import { TaskPage } from "./TaskPage";
import { TaskSwitcher } from "./TaskSwitcher";

// Loaded when first opened: most visits never edit an automation.
const AutomationEditor = lazy(() => import("./automations/AutomationEditor").then((m) => ({ default: m.AutomationEditor })));
const AuthoringChat = lazy(() => import("./automations/AuthoringChat").then((m) => ({ default: m.AuthoringChat })));
const StatsPage = lazy(() => import("./usage/StatsPage"));

function useTokenNeeded(): boolean {
  return useSyncExternalStore(onAuthChange, tokenNeeded);
}

export function App() {
  const needToken = useTokenNeeded();
  const bootState = useStore(app, (s) => s.boot);
  const bootError = useStore(app, (s) => s.bootError);
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const route = useRoute();
  const [switcherOpen, setSwitcherOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);

  useEffect(() => {
    void boot();
  }, []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "?" || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      e.preventDefault();
      setHelpOpen(true);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  useEffect(() => setSwitcherOpen(false), [route]);
  useAutomationsLive(bootState === "ready" ? workspaceId : null);
  const automationId = route.name === "automation" ? route.automationId : null;

  if (needToken) return <TokenForm />;

  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <Header onOpenSwitcher={() => setSwitcherOpen(true)} onOpenHelp={() => setHelpOpen(true)} />
      {bootState === "error" ? (
        <main id="main" className="pad">
          <LoadState state="error" what="Kandev" error={bootError} onRetry={() => void boot()} />
        </main>
      ) : bootState !== "ready" ? (
        <main id="main" className="pad">
          <LoadState state="loading" what="your workspace" />
        </main>
      ) : !workspaceId ? (
        <main id="main" className="pad">
          <NewWorkspaceForm />
        </main>
      ) : (
        <div className="frame">
          <aside className="sidebar" aria-label="Task list">
            {/* Above the tasks: the task list pages in as it scrolls, so below it automations would be out of reach. */}
            <AutomationList currentId={automationId} />
            <TaskSwitcher testId="sidebar" />
          </aside>
          <main id="main" className="main" tabIndex={-1}>
            {route.name === "task" ? (
              <TaskPage taskId={route.taskId} />
            ) : route.name === "settings" ? (
              <Settings section={route.section} />
            ) : route.name === "automationEditor" ? (
              <Suspense fallback={<LoadState state="loading" what="the editor" />}>
                <AutomationEditor automationId={route.automationId} />
              </Suspense>
            ) : route.name === "authoring" ? (
              <Suspense fallback={<LoadState state="loading" what="the chat" />}>
                <AuthoringChat taskId={route.taskId} />
              </Suspense>
            ) : route.name === "stats" ? (
              <Suspense fallback={<LoadState state="loading" what={t("stats")} />}>
                <StatsPage />
              </Suspense>
            ) : route.name === "agenda" ? (
              <AgendaPage />
            ) : route.name === "automation" ? (
              <AutomationPage automationId={route.automationId} />
            ) : route.name === "run" ? (
              <RunRedirect runId={route.runId} />
            ) : (
              <Board />
            )}
          </main>
        </div>
      )}
      {switcherOpen && <MobileSwitcher onClose={() => setSwitcherOpen(false)} />}
      <Toasts />
      <ShortcutsDialog open={helpOpen} onClose={() => setHelpOpen(false)} />
    </div>
  );
}

/** Whether a key press goes into a field (where "?" is text, not a shortcut). */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

const SHORTCUTS: { keys: string[]; what: Parameters<typeof t>[0] }[] = [
  { keys: ["?"], what: "shortcutHelp" },
  { keys: ["Alt", "←"], what: "shortcutMoveCard" },
  { keys: ["Alt", "→"], what: "shortcutMoveCard" },
  { keys: ["Ctrl", "Enter"], what: "shortcutSend" },
  { keys: ["Esc"], what: "shortcutClose" },
];

function ShortcutsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Dialog open={open} title={t("shortcuts")} onClose={onClose} testId="shortcuts">
      <dl className="shortcut-list">
        {SHORTCUTS.map((s) => (
          <div key={s.keys.join("+")} style={{ display: "contents" }}>
            <dt>
              {s.keys.map((k, i) => (
                <span key={k}>
                  {i > 0 && " + "}
                  <kbd>{k}</kbd>
                </span>
              ))}
            </dt>
            <dd>{t(s.what)}</dd>
          </div>
        ))}
      </dl>
      <div className="form-actions">
        <button type="button" className="btn" onClick={onClose} data-testid="shortcuts-close">
          {t("close")}
        </button>
      </div>
    </Dialog>
  );
}

function Header({ onOpenSwitcher, onOpenHelp }: { onOpenSwitcher: () => void; onOpenHelp: () => void }) {
  const workspaces = useStore(app, (s) => s.workspaces);
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const attention = useStore(app, (s) => Object.values(s.tasks).filter((x) => x.pendingAction !== "NONE").length);
  return (
    <header className="topbar">
      <button type="button" className="icon-btn only-mobile" onClick={onOpenSwitcher} aria-label="Open the task switcher" data-testid="open-switcher">
        <MenuGlyph />
        {attention > 0 && <span className="badge" aria-label={`${attention} tasks need attention`}>{attention}</span>}
      </button>
      <a className="brand" href="/" onClick={linkClick("/")}>
        Kandev
      </a>
      {workspaces.length > 1 ? (
        <label className="field-inline">
          <span className="sr-only">Workspace</span>
          <select className="input input-small" value={workspaceId ?? ""} onChange={(e) => void selectWorkspace(e.target.value)}>
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
      ) : (
        workspaces[0] && <span className="workspace-name">{workspaces[0].name}</span>
      )}
      <span className="spacer" />
      <button type="button" className="btn btn-small" onClick={onOpenHelp} aria-label={t("shortcuts")} title={t("shortcuts")} aria-keyshortcuts="?" data-testid="open-shortcuts">
        ?
      </button>
      <a className="btn btn-small" href="/stats" onClick={linkClick("/stats")} data-testid="open-stats">
        {t("stats")}
      </a>
      <a className="btn btn-small" href="/settings" onClick={linkClick("/settings")} data-testid="open-settings">
        Settings
      </a>
      <ConnectionBadge />
    </header>
  );
}

function ConnectionBadge() {
  const state = useSyncExternalStore(onLinkState, linkState);
  // The task list loads once the server confirms taskEvents listens: "ready" means loaded and live.
  const tasks = useStore(app, (s) => s.tasksLoad);
  // "live" once the server confirmed workspaceEvents listens: settings changes elsewhere now reach this tab.
  const config = useStore(app, (s) => (s.configLive ? "live" : "waiting"));
  const label =
    state === "connected" ? t("live") : state === "reconnecting" ? t("reconnecting") : state === "connecting" ? t("connecting") : t("signedOut");
  return (
    <span className={`conn conn-${state}`} role="status" aria-live="polite" data-testid="connection" data-state={state} data-tasks={tasks} data-config={config}>
      <span className="conn-dot" aria-hidden="true" />
      {label}
    </span>
  );
}

function MobileSwitcher({ onClose }: { onClose: () => void }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    window.addEventListener("keydown", onKey);
    const first = document.querySelector<HTMLElement>(".sheet input, .sheet a");
    first?.focus();
    return () => window.removeEventListener("keydown", onKey);
  }, [onClose]);
  return (
    <div className="sheet-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div className="sheet" role="dialog" aria-modal="true" aria-label="Tasks" data-testid="mobile-switcher">
        <div className="sheet-head">
          <h2>Tasks</h2>
          <button type="button" className="btn btn-small" onClick={onClose}>
            Close
          </button>
        </div>
        <TaskSwitcher testId="switcher" onNavigate={onClose} />
        <AutomationList currentId={null} onNavigate={onClose} />
      </div>
    </div>
  );
}

function Toasts() {
  const items = useStore(toasts, (s) => s.items);
  return (
    <div className="toasts" role="status" aria-live="polite">
      {items.map((item) => (
        <div key={item.id} className={`toast toast-${item.tone}`}>
          <span>{item.text}</span>
          <button type="button" className="icon-btn" aria-label="Dismiss" onClick={() => dismiss(item.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/** A user without a workspace (a new user on a shared server) creates their first one here. */
function NewWorkspaceForm() {
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const data = await gql(CREATE_WORKSPACE, { name: name.trim() });
      unwrap(data.createWorkspace);
      await boot();
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  return (
    <form
      className="token-card"
      data-testid="new-workspace"
      onSubmit={(e) => {
        e.preventDefault();
        if (name.trim() && !busy) void submit();
      }}
    >
      <h1>Create your first workspace</h1>
      <p>You have no workspace yet. A new one comes with the default Kanban workflow and the built-in agent profiles.</p>
      {error && (
        <p className="inline-error" role="alert">
          {error}
        </p>
      )}
      <label className="field">
        <span>Workspace name</span>
        <input className="input" value={name} maxLength={LIMITS.CreateWorkspaceInput.name.maxLength} onChange={(e) => setName(e.target.value)} autoFocus name="workspace-name" />
      </label>
      <button type="submit" className="btn btn-primary" disabled={busy || !name.trim()}>
        Create workspace
      </button>
    </form>
  );
}

function TokenForm() {
  const [value, setValue] = useState("");
  return (
    <main className="token-page">
      <form
        className="token-card"
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) {
            setToken(value.trim());
            void boot();
          }
        }}
        data-testid="token-form"
      >
        <h1>Sign in to Kandev</h1>
        <p>
          This server requires a personal access token. Create one with <code>kandev token create --name web --user LOGIN</code> and
          paste it here. It is kept in this browser only.
        </p>
        {tokenWasRejected() && (
          <p className="inline-error" role="alert">
            That token was not accepted. Check it, or create a new one.
          </p>
        )}
        <label className="field">
          <span>Personal access token</span>
          <input className="input" type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} autoFocus name="token" />
        </label>
        <button type="submit" className="btn btn-primary">
          Sign in
        </button>
      </form>
    </main>
  );
}
