// Workspace-wide state: workspaces, workflows, agent profiles and the live task list.
import { ApiError, errorText, gql, unwrap } from "../api/graphql";
import { subscribe } from "../api/live";
import { BOOT, TASK_EVENTS, TASKS, WORKSPACE, MOVE_TASK } from "../api/ops";
import type { AgentProfile, Task, TaskEvent, Workflow, Workspace } from "../api/ops";
import type { TasksQuery } from "../gql/graphql";
import { createStore } from "./store";

export type Load = "idle" | "loading" | "ready" | "error";

export interface AppState {
  boot: Load;
  bootError: string | null;
  workspaces: Workspace[];
  workspaceId: string | null;
  workflows: Workflow[];
  profiles: AgentProfile[];
  tasks: Record<string, Task>;
  tasksLoad: Load;
  tasksError: string | null;
  /** Bumped on every task event for a task id, so open task pages know to refetch details. */
  taskVersion: Record<string, number>;
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
  tasksError: null,
  taskVersion: {},
});

const WORKSPACE_KEY = "kandev.workspace";
let stopTaskEvents: (() => void) | null = null;

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
  app.set({ workspaceId, tasks: {}, tasksLoad: "loading" });
  const data = await gql(WORKSPACE, { w: workspaceId });
  const workflows = data.workflows.map((w) => ({ ...w, steps: [...w.steps].sort((a, b) => a.position - b.position) }));
  app.set({ workflows, profiles: data.agentProfiles });
  stopTaskEvents?.();
  // Live first, then the list: it loads when the server says it listens (SUBSCRIBED, which comes again
  // after every reconnect), so an event that lands during the load is not lost.
  stopTaskEvents = subscribe(
    TASK_EVENTS,
    { w: workspaceId },
    (data) => {
      if (data.taskEvents.kind === "SUBSCRIBED") void refetchTasks();
      else applyTaskEvent(data.taskEvents);
    },
    (message) => {
      void refetchTasks().then(() => app.set({ tasksError: `Live task updates failed: ${message}` }));
    },
  );
}

export async function refetchTasks(): Promise<void> {
  const workspaceId = app.get().workspaceId;
  if (!workspaceId) return;
  if (app.get().tasksLoad !== "ready") app.set({ tasksLoad: "loading" });
  try {
    const tasks: Record<string, Task> = {};
    let after: string | null = null;
    for (let page = 0; page < 50; page++) {
      const data: TasksQuery = await gql(TASKS, { w: workspaceId, after });
      for (const task of data.tasks.nodes) tasks[task.id] = task;
      if (!data.tasks.pageInfo.hasNextPage) break;
      after = data.tasks.pageInfo.endCursor;
    }
    if (app.get().workspaceId !== workspaceId) return;
    app.set((s) => ({
      tasks,
      tasksLoad: "ready",
      tasksError: null,
      taskVersion: bumpAll(s.taskVersion, Object.keys(tasks)),
    }));
  } catch (error) {
    app.set({ tasksLoad: "error", tasksError: errorText(error) });
  }
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

export function applyTaskEvent(event: TaskEvent): void {
  const { task } = event;
  if (!task) return;
  app.set((s) => {
    const tasks = { ...s.tasks };
    if (event.kind === "DELETED" || event.kind === "ARCHIVED" || task.archivedAt) delete tasks[task.id];
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

