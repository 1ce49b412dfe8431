// The automation pages: the sidebar list with a health dot, the /automations agenda (what fires next and
// every automation's recent runs), and /automations/<id>, one automation's conversation: the newest run's
// transcript with a reply box, its runs in a rail (a drawer on a phone), Stop, Run now, Export and the ack.
import { useEffect, useMemo, useRef, useState } from "react";
import { authHeaders } from "../api/auth";
import { errorText, gql, unwrap } from "../api/graphql";
import { REACK_AUTOMATION, RUN_AUTOMATION_NOW, STOP_RUN, WORKSPACE_RUNS } from "../api/automationOps";
import type { AutomationRow, RunRow } from "../api/automationOps";
import { TERMINAL_SESSION_STATES } from "../api/ops";
import type { WorkspaceRunsQuery } from "../gql/graphql";
import { useSession } from "../hooks/useSession";
import { useNow } from "../hooks/useNow";
import { useTaskDetail } from "../hooks/useTaskDetail";
import { linkClick, navigate } from "../router";
import { app } from "../state/app";
import {
  ackEventCount,
  automations,
  countdown,
  elapsed,
  health,
  isRunning,
  loadRuns,
  putAutomation,
  runStatusLabel,
  when,
} from "../state/automations";
import { useStore } from "../state/store";
import { toast } from "../state/toasts";
import { Checkouts } from "./Checkouts";
import { Composer } from "./Composer";
import { LoadState } from "./LoadState";
import { Transcript } from "./Transcript";
import { AutomationBudgetNotice } from "./usage/AutomationBudget";

export function automationPath(id: string, runId?: string): string {
  return `/automations/${encodeURIComponent(id)}${runId ? `?run=${encodeURIComponent(runId)}` : ""}`;
}

function byName(rows: Record<string, AutomationRow>): AutomationRow[] {
  return Object.values(rows).sort((a, b) => a.name.localeCompare(b.name));
}

export function HealthDot({ row }: { row: AutomationRow }) {
  const { tone, label } = health(row);
  return (
    <span className="auto-health" data-testid="automation-health" data-health={tone}>
      <span className={`auto-dot auto-dot-${tone}`} aria-hidden="true" />
      <span className="auto-health-label">{label}</span>
    </span>
  );
}

/** The sidebar section: every automation of the workspace with its health, and the agenda link. */
export function AutomationList({ currentId, onNavigate }: { currentId: string | null; onNavigate?: () => void }) {
  const byId = useStore(automations, (s) => s.byId);
  const load = useStore(automations, (s) => s.load);
  const rows = useMemo(() => byName(byId), [byId]);
  const go = (path: string) => (e: React.MouseEvent) => {
    linkClick(path)(e);
    onNavigate?.();
  };
  return (
    <nav className="auto-list" aria-label="Automations" data-testid="automation-list" data-load={load}>
      <h2 className="auto-list-head">
        <a href="/automations" onClick={go("/automations")} data-testid="open-agenda">
          Automations
        </a>
      </h2>
      {load === "ready" && rows.length === 0 && <p className="muted small auto-empty">No automations yet.</p>}
      <ul>
        {rows.map((row) => (
          <li key={row.id} data-testid="automation-row" data-automation-id={row.id}>
            <a
              className={`auto-link${row.id === currentId ? " is-current" : ""}`}
              href={automationPath(row.id)}
              aria-current={row.id === currentId ? "page" : undefined}
              onClick={go(automationPath(row.id))}
            >
              <span className="auto-name">{row.name}</span>
              <HealthDot row={row} />
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function RunLine({ run, names, now }: { run: RunRow; names: Record<string, AutomationRow>; now: number }) {
  const name = names[run.automationId]?.name ?? "Automation";
  const path = automationPath(run.automationId, run.taskId ? run.id : undefined);
  return (
    <li className="agenda-run" data-testid="agenda-run" data-run-id={run.id} data-status={run.status}>
      <a href={path} onClick={linkClick(path)}>
        <span className="agenda-title">{run.titleSnapshot || name}</span>
        <span className="muted small">
          {name} · {run.triggerType.toLowerCase()} · <span data-testid="run-status">{runStatusLabel(run)}</span>
          {isRunning(run) ? ` for ${elapsed(run.createdAt, now)}` : ` · ${when(run.createdAt)}`}
        </span>
        {run.reason && <span className="muted small">{run.reason}</span>}
      </a>
    </li>
  );
}

/** /automations: what fires next, with a live countdown, and the recent runs of every automation. */
export function AgendaPage() {
  const agenda = useStore(automations, (s) => s.agenda);
  const load = useStore(automations, (s) => s.load);
  const error = useStore(automations, (s) => s.error);
  const byId = useStore(automations, (s) => s.byId);
  const now = useNow(1000);
  useEffect(() => {
    // /runs is an older link to the agenda.
    if (window.location.pathname.startsWith("/runs")) navigate("/automations", { replace: true });
  }, []);
  return (
    <section className="pad agenda" aria-labelledby="agenda-title" data-testid="agenda">
      <div className="toolbar">
        <h1 id="agenda-title" className="page-title">
          Automations
        </h1>
        <span className="spacer" />
        <a className="btn btn-small" href="/automations/describe" onClick={linkClick("/automations/describe")} data-testid="describe-automation">
          Describe one
        </a>
        <a className="btn btn-small btn-primary" href="/automations/new" onClick={linkClick("/automations/new")} data-testid="new-automation">
          New automation
        </a>
      </div>
      {error && <p className="inline-error" role="alert">{error}</p>}
      {!agenda ? (
        <LoadState state={load === "error" ? "error" : "loading"} what="the agenda" error={error} />
      ) : (
        <>
          <h2>Fires next</h2>
          {agenda.upcoming.length === 0 ? (
            <p className="muted">Nothing is scheduled. Webhook and GitHub automations fire when something arrives.</p>
          ) : (
            <ul className="agenda-list" data-testid="agenda-upcoming">
              {agenda.upcoming.map((item) => (
                <li key={item.trigger.id} className="agenda-next" data-testid="agenda-next" data-automation-id={item.automation.id}>
                  <a href={automationPath(item.automation.id)} onClick={linkClick(automationPath(item.automation.id))}>
                    <span className="agenda-title">{item.automation.name}</span>
                    <span className="muted small">
                      <span data-testid="countdown">{countdown(item.nextFire, now)}</span> · {when(item.nextFire)}
                      {item.trigger.expression ? ` · ${item.trigger.expression}` : ""}
                    </span>
                  </a>
                </li>
              ))}
            </ul>
          )}
          <h2>Recent runs</h2>
          {agenda.recent.length === 0 ? (
            <p className="muted">No runs yet.</p>
          ) : (
            <ul className="agenda-list" data-testid="agenda-recent">
              {agenda.recent.map((run) => (
                <RunLine key={run.id} run={run} names={byId} now={now} />
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

/** Download the workspace's automations: one YAML document, or a zip of one YAML file each (empty: an empty
 * document or zip, never an error). */
export async function downloadExport(workspaceId: string, kind: "yaml" | "zip" = "zip"): Promise<void> {
  const path = `/api/v1/workspaces/${encodeURIComponent(workspaceId)}/automations/export${kind === "zip" ? "/zip" : ""}`;
  const response = await fetch(path, { headers: { ...authHeaders() } });
  if (!response.ok) throw new Error(`The export failed (${response.status}).`);
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = kind === "zip" ? "automations.zip" : "automations.yaml";
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const ACK_LABEL: Record<string, string> = { OK: "Ack OK", WARN: "Ack warn", FAILED: "Ack failed", PENDING: "Ack pending" };

export function AckBadge({ row }: { row: AutomationRow }) {
  const [busy, setBusy] = useState(false);
  const status = row.lastAck?.status ?? null;
  const reack = async () => {
    setBusy(true);
    try {
      const seen = ackEventCount(row.id);
      const data = await gql(REACK_AUTOMATION, { i: { automationId: row.id } });
      const answer = unwrap(data.reackAutomation).automation;
      if (ackEventCount(row.id) === seen) putAutomation(answer);
    } catch (err) {
      toast(`Could not check again: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="auto-ack">
      <span
        className={`ack-badge ack-${(status ?? "none").toLowerCase()}`}
        data-testid="ack-badge"
        data-status={status ?? "NONE"}
        title={row.lastAck?.detail ?? row.lastAck?.summary ?? undefined}
      >
        {status ? ACK_LABEL[status] : "Not checked"}
      </span>
      <button type="button" className="btn btn-small" onClick={() => void reack()} disabled={busy || status === "PENDING"} data-testid="reack">
        Re-ack
      </button>
    </span>
  );
}

function NextRun({ row, now }: { row: AutomationRow; now: number }) {
  const next = row.nextRun;
  let text = next.label;
  if (next.state === "SCHEDULED" && next.at) text = `Next run ${countdown(next.at, now)} · ${when(next.at)}`;
  if (next.state === "RUNNING" && next.runningSince) {
    const seconds = (now - new Date(next.runningSince).getTime()) / 1000;
    text = `Running for ${elapsed(next.runningSince, now)}${next.slow || seconds > next.slowAfterSeconds ? " · taking longer than usual" : ""}`;
  }
  return (
    <p className="muted small auto-next" data-testid="next-run" data-state={next.state}>
      {text}
    </p>
  );
}

function RunRail({ runs, selectedId, onPick, now }: { runs: RunRow[]; selectedId: string | null; onPick: (id: string) => void; now: number }) {
  const running = runs.filter(isRunning);
  const completed = runs.filter((r) => !isRunning(r));
  const group = (title: string, list: RunRow[], testId: string) => (
    <div className="rail-group" data-testid={testId}>
      <h3>
        {title} <span className="muted">({list.length})</span>
      </h3>
      {list.length === 0 ? (
        <p className="muted small">None.</p>
      ) : (
        <ul>
          {list.map((run) => (
            <li key={run.id}>
              <button
                type="button"
                className={`rail-run${run.id === selectedId ? " is-current" : ""}`}
                aria-current={run.id === selectedId ? "true" : undefined}
                onClick={() => onPick(run.id)}
                disabled={!run.taskId}
                data-testid="rail-run"
                data-run-id={run.id}
                data-status={run.status}
              >
                <span className="rail-title">{run.titleSnapshot || "Run"}</span>
                <span className="muted small">
                  {runStatusLabel(run)}
                  {isRunning(run) ? ` for ${elapsed(run.createdAt, now)}` : ` · ${when(run.createdAt)}`}
                  {run.reason ? ` · ${run.reason}` : ""}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
  return (
    <>
      {group("Running", running, "rail-running")}
      {group("Completed", completed, "rail-completed")}
    </>
  );
}

/** One run's conversation: its task's transcript and a reply box. */
function RunConversation({ run }: { run: RunRow }) {
  const { detail, load, error, reload } = useTaskDetail(run.taskId ?? "");
  const sessions = detail?.sessions ?? [];
  const session = sessions.find((s) => s.id === run.sessionId) ?? sessions[0];
  const view = useSession(session?.id ?? null);
  const state = view.state ?? session?.state ?? null;
  const live = session && !TERMINAL_SESSION_STATES.includes(state ?? session.state) ? session : undefined;
  if (!detail) return load === "error" ? <LoadState state="error" what="the run" error={error} onRetry={reload} /> : <LoadState state="loading" what="the run" />;
  return (
    <div className="run-conversation" data-testid="run-conversation" data-run-id={run.id}>
      <Checkouts repositories={detail.repositories} />
      {view.load === "error" ? (
        <LoadState state="error" what="the transcript" error={view.error} onRetry={view.reload} />
      ) : view.load === "loading" && view.messages.length === 0 && session ? (
        <div className="transcript">
          <LoadState state="loading" what="the transcript" />
        </div>
      ) : (
        <Transcript messages={view.messages} state={state} hasOlder={view.hasOlder} loadingOlder={view.loadingOlder} onLoadOlder={() => void view.loadOlder()} />
      )}
      <div className="dock">
        <Composer task={detail} session={live ?? session} sessionState={state} onStarted={() => reload()} onSent={() => view.refreshStatus()} />
      </div>
    </div>
  );
}

function chosenRun(): string | null {
  return new URLSearchParams(window.location.search).get("run");
}

/** Run now (a manual firing): the run it admitted, or null with a toast saying why nothing runs. */
export async function runAutomationNow(automationId: string): Promise<RunRow | null> {
  const data = await gql(RUN_AUTOMATION_NOW, { i: { automationId } });
  const payload = unwrap(data.runAutomationNow);
  if (payload.admission !== "FIRED") toast(`Not run: ${payload.reason ?? payload.admission.toLowerCase()}`, "info");
  const run = payload.run;
  if (!run) return null;
  // The answer is the run as it was admitted: an event may already have brought it further (its task).
  automations.set((s) => {
    const held = s.runs[automationId] ?? [];
    return held.some((r) => r.id === run.id) ? {} : { runs: { ...s.runs, [automationId]: [run, ...held] } };
  });
  return payload.admission === "FIRED" ? run : null;
}

/** /automations/<id>: the automation's conversation, opening on its newest run. */
export function AutomationPage({ automationId }: { automationId: string }) {
  const row = useStore(automations, (s) => s.byId[automationId]);
  const load = useStore(automations, (s) => s.load);
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const runs = useStore(automations, (s) => s.runs[automationId]);
  const [picked, setPicked] = useState<string | null>(chosenRun);
  const [runsError, setRunsError] = useState<string | null>(null);
  const [drawer, setDrawer] = useState(false);
  const [busy, setBusy] = useState(false);
  const now = useNow(1000);
  const closeDrawer = useRef<HTMLButtonElement | null>(null);

  useEffect(() => {
    if (!drawer) return;
    closeDrawer.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && setDrawer(false);
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [drawer]);

  useEffect(() => {
    setPicked(chosenRun());
    setRunsError(null);
    loadRuns(automationId).catch((err) => setRunsError(errorText(err)));
  }, [automationId]);

  const list = runs ?? [];
  const withTask = list.filter((r) => r.taskId);
  const selected = list.find((r) => r.id === picked && r.taskId) ?? withTask[0] ?? null;

  if (!row) {
    if (load === "ready")
      return (
        <div className="pad" role="alert">
          <h1 className="page-title">Automation not found</h1>
          <p>It may have been deleted, or it belongs to a workspace you can't see.</p>
          <a href="/automations" onClick={linkClick("/automations")}>
            Back to the agenda
          </a>
        </div>
      );
    return <LoadState state="loading" what="the automation" />;
  }

  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    try {
      await what();
    } catch (err) {
      toast(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const runNow = () =>
    act(async () => {
      const fired = await runAutomationNow(automationId);
      if (fired) setPicked(fired.id);
    });
  const stop = (run: RunRow) =>
    act(async () => {
      const data = await gql(STOP_RUN, { i: { runId: run.id } });
      unwrap(data.stopRun);
      toast("Run stopped", "info");
    });
  const exportAll = () => act(() => downloadExport(workspaceId ?? row.id));
  const pick = (id: string) => {
    setPicked(id);
    setDrawer(false);
    window.history.replaceState(null, "", automationPath(automationId, id));
  };

  return (
    <section className="auto-page" aria-labelledby="automation-title" data-testid="automation-page" data-automation-id={row.id}>
      <header className="auto-head">
        <nav className="crumbs" aria-label="Breadcrumb">
          <a href="/automations" onClick={linkClick("/automations")}>
            Automations
          </a>
        </nav>
        <div className="task-title-row">
          <h1 id="automation-title" className="page-title">
            {row.name}
          </h1>
          <HealthDot row={row} />
        </div>
        <NextRun row={row} now={now} />
        <AutomationBudgetNotice automationId={row.id} refresh={list.length - list.filter(isRunning).length} />
        <div className="auto-actions">
          <AckBadge row={row} />
          <span className="spacer" />
          <button type="button" className="btn btn-small only-mobile" onClick={() => setDrawer(true)} data-testid="open-runs">
            Runs ({list.length})
          </button>
          <a className="btn btn-small" href={`${automationPath(row.id)}/edit`} onClick={linkClick(`${automationPath(row.id)}/edit`)} data-testid="edit-automation">
            Details
          </a>
          <button type="button" className="btn btn-small" onClick={() => void exportAll()} disabled={busy} data-testid="export-automations">
            Export
          </button>
          <button type="button" className="btn btn-small btn-primary" onClick={() => void runNow()} disabled={busy || !row.enabled} data-testid="run-now">
            Run now
          </button>
        </div>
      </header>
      <div className="auto-body">
        <div className="auto-main">
          {selected ? (
            <>
              <div className="run-head" data-testid="run-head">
                <h2 className="run-title" data-testid="run-title">
                  {selected.titleSnapshot || "Run"}
                </h2>
                <span className="muted small" data-testid="run-state">
                  {runStatusLabel(selected)}
                  {isRunning(selected) ? ` for ${elapsed(selected.createdAt, now)}` : ` · ${when(selected.createdAt)}`}
                </span>
                {isRunning(selected) && (
                  <button type="button" className="btn btn-small btn-danger" onClick={() => void stop(selected)} disabled={busy} data-testid="stop-run">
                    Stop current run
                  </button>
                )}
              </div>
              <RunConversation key={selected.id} run={selected} />
            </>
          ) : runsError ? (
            <LoadState state="error" what="the runs" error={runsError} onRetry={() => void loadRuns(automationId).catch((e) => setRunsError(errorText(e)))} />
          ) : !runs ? (
            <LoadState state="loading" what="the runs" />
          ) : (
            <p className="muted pad" data-testid="no-runs">
              No run has produced a conversation yet. Run now fires it once.
            </p>
          )}
        </div>
        <aside className={`auto-rail${drawer ? " is-open" : ""}`} aria-label="Runs" data-testid="run-rail">
          <div className="rail-head only-mobile">
            <h2>Runs</h2>
            <button type="button" className="btn btn-small" onClick={() => setDrawer(false)} ref={closeDrawer} data-testid="close-runs">
              Close
            </button>
          </div>
          <RunRail runs={list} selectedId={selected?.id ?? null} onPick={pick} now={now} />
        </aside>
      </div>
    </section>
  );
}

/** /runs/<id>: an older link to a run, answered with the run's automation. */
export function RunRedirect({ runId }: { runId: string }) {
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const [missing, setMissing] = useState(false);
  useEffect(() => {
    if (!workspaceId) return;
    let cancelled = false;
    (async () => {
      let after: string | null = null;
      // Bounded: at most 20 pages of 100 runs, newest first.
      for (let page = 0; page < 20 && !cancelled; page++) {
        const data: WorkspaceRunsQuery = await gql(WORKSPACE_RUNS, { w: workspaceId, after });
        const hit = data.runs.nodes.find((r) => r.id === runId);
        if (hit) {
          if (!cancelled) navigate(automationPath(hit.automationId, runId), { replace: true });
          return;
        }
        if (!data.runs.pageInfo.hasNextPage) break;
        after = data.runs.pageInfo.endCursor ?? null;
      }
      if (!cancelled) setMissing(true);
    })().catch(() => !cancelled && setMissing(true));
    return () => {
      cancelled = true;
    };
  }, [workspaceId, runId]);
  if (!missing) return <LoadState state="loading" what="the run" />;
  return (
    <div className="pad" role="alert">
      <h1 className="page-title">Run not found</h1>
      <a href="/automations" onClick={linkClick("/automations")}>
        Back to the agenda
      </a>
    </div>
  );
}
