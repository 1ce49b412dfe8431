// The workspace's automations, their newest runs and the agenda, kept live from automationEvents: the
// subscription starts first and every SUBSCRIBED message (again after a reconnect) reloads the snapshot,
// so nothing that happens while it loads is missed.
import { useEffect } from "react";
import { errorText, gql } from "../api/graphql";
import { subscribe } from "../api/live";
import { AGENDA, AUTOMATIONS, AUTOMATION_EVENTS, AUTOMATION_RUNS } from "../api/automationOps";
import type { Agenda, AutomationEvent, AutomationRow, RunRow } from "../api/automationOps";
import { createStore } from "./store";

export interface AutomationsState {
  workspaceId: string | null;
  load: "idle" | "loading" | "ready" | "error";
  error: string | null;
  byId: Record<string, AutomationRow>;
  agenda: Agenda | null;
  /** Each opened automation's runs, newest first (loaded by its page, then kept live). */
  runs: Record<string, RunRow[]>;
}

export const automations = createStore<AutomationsState>({
  workspaceId: null,
  load: "idle",
  error: null,
  byId: {},
  agenda: null,
  runs: {},
});

const OPEN_STATUSES = ["TRIGGERED", "TASK_CREATED"];

/** A run whose turn has not ended yet: it can be stopped and counts as Running. */
export function isRunning(run: RunRow): boolean {
  return OPEN_STATUSES.includes(run.status) && !run.stoppedAt;
}

function newestFirst(runs: RunRow[]): RunRow[] {
  return [...runs].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
}

function upsertRun(runs: readonly RunRow[], run: RunRow): RunRow[] {
  return newestFirst([run, ...runs.filter((r) => r.id !== run.id)]);
}

let snapshotTimer: ReturnType<typeof setTimeout> | null = null;
let agendaTimer: ReturnType<typeof setTimeout> | null = null;

async function loadSnapshot(workspaceId: string): Promise<void> {
  try {
    const [list, agenda] = await Promise.all([gql(AUTOMATIONS, { w: workspaceId }), gql(AGENDA, { w: workspaceId })]);
    if (automations.get().workspaceId !== workspaceId) return;
    automations.set({
      byId: Object.fromEntries(list.automations.map((a) => [a.id, a])),
      agenda: agenda.agenda,
      load: "ready",
      error: null,
    });
  } catch (err) {
    if (automations.get().workspaceId !== workspaceId) return;
    automations.set((s) => ({ error: errorText(err), load: s.load === "ready" ? "ready" : "error" }));
  }
}

/** Several events in a burst (a new automation, a schedule that moved) refetch once. */
function soon(kind: "snapshot" | "agenda", workspaceId: string): void {
  if (kind === "snapshot") {
    if (snapshotTimer) clearTimeout(snapshotTimer);
    snapshotTimer = setTimeout(() => void loadSnapshot(workspaceId), 150);
    return;
  }
  if (agendaTimer) clearTimeout(agendaTimer);
  agendaTimer = setTimeout(async () => {
    try {
      const data = await gql(AGENDA, { w: workspaceId });
      if (automations.get().workspaceId === workspaceId) automations.set({ agenda: data.agenda });
    } catch {
      /* the next event or reconnect refetches */
    }
  }, 150);
}

// ACK_CHANGED messages seen per automation: a re-ack's answer (PENDING) must not overwrite the verdict an
// event brought while the answer was on its way.
const ackEvents: Record<string, number> = {};

export function ackEventCount(automationId: string): number {
  return ackEvents[automationId] ?? 0;
}

export function applyAutomationEvent(workspaceId: string, event: AutomationEvent): void {
  if (event.kind === "SUBSCRIBED") {
    void loadSnapshot(workspaceId);
    // After a reconnect, the runs of every opened automation may have moved meanwhile.
    for (const automationId of Object.keys(automations.get().runs)) void loadRuns(automationId).catch(() => {});
    return;
  }
  const id = event.automationId;
  if (!id) return;
  if (event.kind === "ACK_CHANGED") ackEvents[id] = ackEventCount(id) + 1;
  const known = automations.get().byId[id];
  if (!known) {
    // An automation made since the list loaded (or in another tab): fetch it with the list.
    soon("snapshot", workspaceId);
    return;
  }
  automations.set((s) => {
    let row: AutomationRow = event.nextRun ? { ...known, nextRun: event.nextRun } : known;
    let agenda = s.agenda;
    let runs = s.runs;
    const run = event.run;
    if (event.kind === "ACK_CHANGED") row = { ...row, lastAck: event.ack ?? null };
    if (event.kind === "NEXT_FIRE_CHANGED") row = { ...row, nextFire: event.nextFire ?? null };
    if (run && event.kind === "RUN_DELETED") {
      row = { ...row, runs: { nodes: row.runs.nodes.filter((r) => r.id !== run.id) } };
      if (agenda) agenda = { ...agenda, recent: agenda.recent.filter((r) => r.id !== run.id) };
      if (runs[id]) runs = { ...runs, [id]: runs[id].filter((r) => r.id !== run.id) };
    } else if (run) {
      const latest = row.runs.nodes[0];
      if (!latest || latest.id === run.id || latest.createdAt <= run.createdAt) row = { ...row, runs: { nodes: [run] } };
      if (agenda) agenda = { ...agenda, recent: upsertRun(agenda.recent, run).slice(0, 50) };
      if (runs[id]) runs = { ...runs, [id]: upsertRun(runs[id], run) };
    }
    return { byId: { ...s.byId, [id]: row }, agenda, runs };
  });
  if (event.kind === "NEXT_FIRE_CHANGED" || event.kind === "RUN_DELETED") soon("agenda", workspaceId);
}

/** Keep the workspace's automations live while the app shows the workspace. */
export function useAutomationsLive(workspaceId: string | null): void {
  useEffect(() => {
    automations.set({ workspaceId, load: workspaceId ? "loading" : "idle", error: null, byId: {}, agenda: null, runs: {} });
    if (!workspaceId) return;
    return subscribe(
      AUTOMATION_EVENTS,
      { w: workspaceId },
      ({ automationEvents: event }) => applyAutomationEvent(workspaceId, event),
      (message) => {
        automations.set((s) => ({ error: `Live automation updates stopped: ${message}`, load: s.load === "ready" ? "ready" : "error" }));
        void loadSnapshot(workspaceId);
      },
    );
  }, [workspaceId]);
}

/** Load one automation's runs into the store; events keep them current afterwards. */
export async function loadRuns(automationId: string): Promise<void> {
  const data = await gql(AUTOMATION_RUNS, { id: automationId });
  automations.set((s) => {
    // Events that arrived while the page loaded are at least as new as the page.
    const held = s.runs[automationId] ?? [];
    let merged = newestFirst(data.automationRuns.nodes);
    for (const run of held) merged = upsertRun(merged, run);
    return { runs: { ...s.runs, [automationId]: merged } };
  });
}

export function refreshAutomations(): void {
  const workspaceId = automations.get().workspaceId;
  if (workspaceId) void loadSnapshot(workspaceId);
}

export function putAutomation(row: AutomationRow): void {
  automations.set((s) => ({ byId: { ...s.byId, [row.id]: row } }));
}

export type Health = "ok" | "running" | "warn" | "failing" | "pending" | "disabled" | "idle";

/** The sidebar's health dot and its words, from the newest run and the pre-flight acknowledgement. */
export function health(row: AutomationRow): { tone: Health; label: string } {
  const latest = row.runs.nodes[0];
  const ack = row.lastAck?.status;
  if (!row.enabled) return { tone: "disabled", label: "Disabled" };
  if (latest && isRunning(latest)) return { tone: "running", label: "Running" };
  if (ack === "FAILED") return { tone: "failing", label: "Ack failed" };
  if (latest?.status === "FAILED") return { tone: "failing", label: "Last run failed" };
  if (ack === "WARN") return { tone: "warn", label: "Ack warning" };
  if (latest?.status === "SKIPPED") return { tone: "warn", label: "Last run skipped" };
  if (ack === "PENDING") return { tone: "pending", label: "Checking" };
  if (latest?.status === "SUCCEEDED") return { tone: "ok", label: "Last run succeeded" };
  if (latest) return { tone: "ok", label: `Last run ${latest.status.toLowerCase()}` };
  return { tone: "idle", label: "No runs yet" };
}

function span(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h${m % 60 ? ` ${m % 60} min` : ""}`;
  return `${Math.floor(h / 24)} days`;
}

/** "in 4 min" (or "now" once due). */
export function countdown(at: string, now: number): string {
  const seconds = (new Date(at).getTime() - now) / 1000;
  return seconds <= 0 ? "now" : `in ${span(seconds)}`;
}

/** "3 min" since `since`. */
export function elapsed(since: string, now: number): string {
  return span((now - new Date(since).getTime()) / 1000);
}

export function runStatusLabel(run: RunRow): string {
  if (isRunning(run)) return "Running";
  return run.status.charAt(0) + run.status.slice(1).toLowerCase().replace("_", " ");
}

export function when(at: string): string {
  return new Date(at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
