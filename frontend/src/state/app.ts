// Workspace-wide state: workspaces, workflows, agent profiles and the live task list.
import { ApiError, errorText, gql, unwrap } from "../api/graphql";
import { subscribe } from "../api/live";
import { BOOT, TASK_EVENTS, TASKS, WORKSPACE, MOVE_TASK } from "../api/ops";
import { notifyTaskChange } from "./browserNotify";
import type { AgentProfile, Task, TaskEvent, Workflow, Workspace } from "../api/ops";
import { WORKSPACE_EVENTS } from "../api/settingsOps";
import type { TasksQuery, WorkspaceEventKind } from "../gql/graphql";
import { createStore } from "./store";

export type Load = "idle" | "loading" | "ready" | "error";

/** Tasks per page, for the sidebar and for each board column. */
export const TASK_PAGE = 50;

/** Where a paged list of tasks stands. */
export interface Paging {
  endCursor: string | null;
  hasNextPage: boolean;
  loading: boolean;
}

export interface AppState {
  boot: Load;
  bootError: string | null;
  workspaces: Workspace[];
  workspaceId: string | null;
  workflows: Workflow[];
  profiles: AgentProfile[];
  /** The loaded tasks: the sidebar's pages and each shown column's, kept live by taskEvents. */
  tasks: Record<string, Task>;
  tasksLoad: Load;
  /** The sidebar's pages (every live task, newest first); null until the first one loaded. */
  sidebar: Paging | null;
  /** Each board column's pages, by workflow step id, once the column asked for its first one. */
  columns: Record<string, Paging>;
  tasksError: string | null;
  /** Bumped on every task event for a task id, so open task pages know to refetch details. */
  taskVersion: Record<string, number>;
  /** The server listens for this workspace's configuration changes (workspaceEvents said SUBSCRIBED). */
  configLive: boolean;
}

export const app = createStore<AppState>({
  boot: "idle",
  bootError: null,
  workspaces: [],
  workspaceId: null,
  workflows: [],
  profiles: [],
  tasks: {},
  tasksLoad: "idle",
  sidebar: null,
  columns: {},
  tasksError: null,
  taskVersion: {},
  configLive: false,
});

const WORKSPACE_KEY = "kandev.workspace";
let stopTaskEvents: (() => void) | null = null;
let stopWorkspaceEvents: (() => void) | null = null;

type ConfigListener = (kind: WorkspaceEventKind) => void;
const configListeners = new Set<ConfigListener>();
type TaskEventListener = (event: TaskEvent) => void;
const taskEventListeners = new Set<TaskEventListener>();

/** Hear every task event of the current workspace (an open Changes panel follows its task's CHANGES and
 *  REVIEW_THREAD events); SUBSCRIBED again after a reconnect. Returns the unsubscribe. */
export function onTaskEvent(listener: TaskEventListener): () => void {
  taskEventListeners.add(listener);
  return () => taskEventListeners.delete(listener);
}

/** Hear which part of the current workspace's configuration changed (in this tab or any other), and
 *  SUBSCRIBED again after a reconnect (anything may have changed meanwhile). Returns the unsubscribe. */
export function onConfigChange(listener: ConfigListener): () => void {
  configListeners.add(listener);
  return () => configListeners.delete(listener);
}

/** The workspace list (another tab may have created or renamed one). */
export async function refreshWorkspaces(): Promise<void> {
  const { workspaces } = await gql(BOOT);
  app.set({ workspaces });
}

async function refreshProfiles(): Promise<void> {
  const workspaceId = app.get().workspaceId;
  if (!workspaceId) return;
  const data = await gql(WORKSPACE, { w: workspaceId });
  if (app.get().workspaceId === workspaceId) app.set({ profiles: data.agentProfiles });
}

function listenToConfig(workspaceId: string): void {
  stopWorkspaceEvents?.();
  app.set({ configLive: false });
  let first = true;
  stopWorkspaceEvents = subscribe(WORKSPACE_EVENTS, { w: workspaceId }, (data) => {
    const { kind } = data.workspaceEvents;
    if (kind === "SUBSCRIBED") {
      // The first one only says the server listens (this tab just loaded); later ones follow a reconnect.
      if (first) {
        first = false;
        app.set({ configLive: true });
        return;
      }
      void Promise.all([refreshWorkspaces(), refreshWorkflows(), refreshProfiles()]).catch(() => {});
    } else if (kind === "WORKSPACE") void refreshWorkspaces().catch(() => {});
    else if (kind === "WORKFLOW") void refreshWorkflows().catch(() => {});
    else if (kind === "AGENT_PROFILE") void refreshProfiles().catch(() => {});
    configListeners.forEach((l) => l(kind));
  });
}

export async function boot(): Promise<void> {
  app.set({ boot: "loading", bootError: null });
  try {
    const { workspaces } = await gql(BOOT);
    app.set({ workspaces });
    if (!workspaces.length) {
      app.set({ boot: "ready", workspaceId: null });
      return;
    }
    const saved = localStorage.getItem(WORKSPACE_KEY);
    const chosen = workspaces.find((w) => w.id === saved) ?? workspaces[0];
    await selectWorkspace(chosen.id);
    app.set({ boot: "ready" });
  } catch (error) {
    app.set({ boot: "error", bootError: errorText(error) });
  }
}

export async function selectWorkspace(workspaceId: string): Promise<void> {
  try {
    localStorage.setItem(WORKSPACE_KEY, workspaceId);
  } catch {
    /* storage unavailable */
  }
  app.set({ workspaceId, tasks: {}, tasksLoad: "loading", sidebar: null, columns: {} });
  const data = await gql(WORKSPACE, { w: workspaceId });
  app.set({ workflows: sortedSteps(data.workflows), profiles: data.agentProfiles });
  listenToConfig(workspaceId);
  stopTaskEvents?.();
  // Live first, then the list: it loads when the server says it listens (SUBSCRIBED, which comes again
  // after every reconnect), so an event that lands during the load is not lost.
  stopTaskEvents = subscribe(
    TASK_EVENTS,
    { w: workspaceId },
    (data) => {
      if (data.taskEvents.kind === "SUBSCRIBED") void refetchTasks();
      else applyTaskEvent(data.taskEvents);
      taskEventListeners.forEach((l) => l(data.taskEvents));
    },
    (message) => {
      void refetchTasks().then(() => app.set({ tasksError: `Live task updates failed: ${message}` }));
    },
  );
}

function sortedSteps(workflows: Workflow[]): Workflow[] {
  return workflows.map((w) => ({ ...w, steps: [...w.steps].sort((a, b) => a.position - b.position) }));
}

/** Reload the workspace's workflows after an edit, so the board shows added, renamed and reordered steps. */
export async function refreshWorkflows(): Promise<void> {
  const workspaceId = app.get().workspaceId;
  if (!workspaceId) return;
  const data = await gql(WORKSPACE, { w: workspaceId });
  if (app.get().workspaceId === workspaceId) app.set({ workflows: sortedSteps(data.workflows) });
}

// Task events seen while the lists reload: they may be newer than the pages (null: the task went away).
let changedDuringLoad: Map<string, Task | null> | null = null;
// Tasks deleted or archived live: a page read before that must not bring them back.
const gone = new Set<string>();

/** (Re)load the first page of the sidebar and of every column shown: after the server confirmed taskEvents
 * listens (first, and after each reconnect), so nothing that changes meanwhile is missed. */
export async function refetchTasks(): Promise<void> {
  const workspaceId = app.get().workspaceId;
  if (!workspaceId) return;
  if (app.get().tasksLoad !== "ready") app.set({ tasksLoad: "loading" });
  const changed = new Map<string, Task | null>();
  changedDuringLoad = changed;
  try {
    const steps = Object.keys(app.get().columns);
    const [sidebar, ...columns] = await Promise.all([null, ...steps].map((step) => taskPage(workspaceId, step, null)));
    if (app.get().workspaceId !== workspaceId) return;
    const tasks: Record<string, Task> = {};
    for (const data of [sidebar, ...columns]) for (const task of data.tasks.nodes) tasks[task.id] = task;
    for (const [id, task] of changed) {
      if (task === null) delete tasks[id];
      else if (newer(tasks[id], task)) tasks[id] = task;
    }
    gone.clear();
    app.set((s) => ({
      tasks,
      tasksLoad: "ready",
      tasksError: null,
      sidebar: paging(sidebar),
      columns: Object.fromEntries(steps.map((step, i) => [step, paging(columns[i])])),
      taskVersion: bumpAll(s.taskVersion, Object.keys(tasks)),
    }));
  } catch (error) {
    app.set({ tasksLoad: "error", tasksError: errorText(error) });
  } finally {
    if (changedDuringLoad === changed) changedDuringLoad = null;
  }
}

/** The next page of the sidebar (`step` null) or of a board column (its first, when it has none yet). */
export async function loadMoreTasks(step: string | null): Promise<void> {
  const { workspaceId, tasksLoad, sidebar, columns } = app.get();
  const current = step === null ? sidebar : columns[step];
  if (!workspaceId || tasksLoad !== "ready" || current?.loading || current?.hasNextPage === false) return;
  if (step === null && !current) return; // the sidebar's first page comes with refetchTasks
  const before: Paging = current ?? { endCursor: null, hasNextPage: true, loading: false };
  app.set((s) => withPaging(s, step, { ...before, loading: true }));
  try {
    const data = await taskPage(workspaceId, step, before.endCursor);
    if (app.get().workspaceId !== workspaceId) return;
    app.set((s) => {
      const tasks = { ...s.tasks };
      for (const task of data.tasks.nodes) if (!gone.has(task.id) && newerPage(tasks[task.id], task)) tasks[task.id] = task;
      return { tasks, ...withPaging(s, step, paging(data)) };
    });
  } catch (error) {
    app.set((s) => ({ ...withPaging(s, step, before), tasksError: `Could not load more tasks: ${errorText(error)}` }));
  }
}

function taskPage(workspaceId: string, step: string | null, after: string | null): Promise<TasksQuery> {
  return gql(TASKS, { w: workspaceId, step, first: TASK_PAGE, after });
}

function paging(data: TasksQuery): Paging {
  return { endCursor: data.tasks.pageInfo.endCursor ?? null, hasNextPage: data.tasks.pageInfo.hasNextPage, loading: false };
}

function withPaging(s: AppState, step: string | null, next: Paging): Partial<AppState> {
  return step === null ? { sidebar: next } : { columns: { ...s.columns, [step]: next } };
}

function bumpAll(versions: Record<string, number>, ids: string[]): Record<string, number> {
  const next = { ...versions };
  for (const id of ids) next[id] = (next[id] ?? 0) + 1;
  return next;
}

/** Newer wins: an event or a response older than what we hold does not roll a task back. */
function newer(current: Task | undefined, incoming: Task): boolean {
  return !current || incoming.updatedAt >= current.updatedAt;
}

/** A page replaces what we hold only when strictly newer. An event can carry a change without a newer
 * updatedAt (the change stats are measured apart from the task's own edits), so on a tie the copy we hold,
 * which may be that event's, is at least as new as a page read before it. */
function newerPage(current: Task | undefined, incoming: Task): boolean {
  return !current || incoming.updatedAt > current.updatedAt;
}

export function applyTaskEvent(event: TaskEvent): void {
  const { task } = event;
  if (!task) return;
  if (event.kind === "UPDATED") notifyTaskChange(app.get().tasks[task.id], task);
  const removed = event.kind === "DELETED" || event.kind === "ARCHIVED" || Boolean(task.archivedAt);
  changedDuringLoad?.set(task.id, removed ? null : task);
  if (removed) gone.add(task.id);
  app.set((s) => {
    const tasks = { ...s.tasks };
    if (removed) delete tasks[task.id];
    else if (newer(tasks[task.id], task)) tasks[task.id] = task;
    return { tasks, taskVersion: bumpAll(s.taskVersion, [task.id]) };
  });
}

/** A mutation's answer carries the task as it is now: show it before the event arrives. */
export function applyTask(task: Task): void {
  app.set((s) => {
    const tasks = { ...s.tasks };
    if (task.archivedAt) delete tasks[task.id];
    else if (newer(tasks[task.id], task)) tasks[task.id] = task;
    return { tasks };
  });
}

export async function moveTask(taskId: string, workflowStepId: string): Promise<void> {
  const before = app.get().tasks[taskId];
  if (!before || before.workflowStepId === workflowStepId) return;
  // Optimistic: the card moves now; the answer (or the error) settles it.
  app.set((s) => ({ tasks: { ...s.tasks, [taskId]: { ...before, workflowStepId } } }));
  try {
    const data = await gql(MOVE_TASK, {
      i: { taskId, workflowStepId },
    });
    const payload = unwrap(data.moveTask);
    if (payload.task) {
      const moved = payload.task;
      app.set((s) => ({ tasks: { ...s.tasks, [taskId]: moved } }));
    }
  } catch (error) {
    app.set((s) => ({ tasks: { ...s.tasks, [taskId]: before } }));
    throw error instanceof ApiError ? error : new ApiError(errorText(error), "network");
  }
}

