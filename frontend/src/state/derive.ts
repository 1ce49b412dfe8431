// Small pure helpers shared by the board, the switcher and the task page.
import type { AgentProfile, SessionSummary, Task, Workflow, WorkflowStep } from "../api/ops";
import { TERMINAL_SESSION_STATES } from "../api/ops";
import { t, type StringKey } from "../i18n";

export function stepOf(workflows: Workflow[], task: Task): WorkflowStep | undefined {
  for (const workflow of workflows) {
    const step = workflow.steps.find((s) => s.id === task.workflowStepId);
    if (step) return step;
  }
  return undefined;
}

/**
 * Whether the task's step waits for a completion signal the agent did not give: pendingAction
 * COMPLETION_PENDING, or Session.completionPending, which still holds while a question outranks it
 * in pendingAction.
 */
export function completionPending(task: Task, session?: { completionPending: boolean | null } | null): boolean {
  return task.pendingAction === "COMPLETION_PENDING" || Boolean(session?.completionPending);
}

export function activeSession(sessions: SessionSummary[]): SessionSummary | undefined {
  return sessions.find((s) => s.isPrimary && !TERMINAL_SESSION_STATES.includes(s.state))
    ?? sessions.find((s) => !TERMINAL_SESSION_STATES.includes(s.state));
}

export function defaultProfile(profiles: AgentProfile[]): AgentProfile | undefined {
  return profiles.find((p) => p.name === "Scripted" && p.available) ?? profiles.find((p) => p.available);
}

const STATE_LABELS: Record<string, string> = {
  TODO: "To do",
  SCHEDULING: "Scheduling",
  IN_PROGRESS: "In progress",
  REVIEW: "Review",
  BLOCKED: "Blocked",
  WAITING_FOR_INPUT: "Waiting for input",
  COMPLETED: "Completed",
  FAILED: "Failed",
  CANCELLED: "Cancelled",
  CREATED: "Created",
  STARTING: "Starting",
  RUNNING: "Running",
};

export function stateLabel(state: string): string {
  return STATE_LABELS[state] ?? state;
}

export type CardTone = "attention" | "working" | "failed" | "idle" | "done";

/**
 * What a card says about a task, in words a person uses: what needs them first (a question, a permission,
 * a failed turn), then what the agent is doing. The step is shown apart from this.
 */
export function cardStatus(task: Task): { label: string; tone: CardTone } {
  const say = (key: StringKey, tone: CardTone) => ({ label: t(key), tone });
  if (task.pendingAction === "PERMISSION") return say("statusNeedsApproval", "attention");
  if (task.pendingAction === "BUDGET_REACHED") return say("statusBudgetReached", "attention");
  if (task.pendingAction === "CLARIFICATION" || task.activity.needsAnswer) return say("statusNeedsAnswer", "attention");
  switch (task.state) {
    case "IN_PROGRESS":
      return say("statusWorking", "working");
    case "SCHEDULING":
      return say("statusStarting", "working");
    case "FAILED":
      return say("statusFailed", "failed");
    case "BLOCKED":
      return say("statusBlocked", "idle");
    case "COMPLETED":
      return say("statusDone", "done");
    case "CANCELLED":
      return say("statusStopped", "idle");
  }
  if (task.activity.lastTurnFailed) return say("statusFailed", "failed");
  if (task.state === "TODO" && !task.activity.hasRun) return say("statusNotStarted", "idle");
  return say("statusWaiting", "attention");
}

/** "3 min ago"-style distance from `iso` to `now` (ms). */
export function timeAgo(iso: string, now: number): string {
  const minutes = Math.floor((now - Date.parse(iso)) / 60_000);
  if (minutes < 1) return t("justNow");
  if (minutes < 60) return t("minutesAgo", { n: minutes });
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return t("hoursAgo", { n: hours });
  return t("daysAgo", { n: Math.floor(hours / 24) });
}

/** Parents first (newest activity first), each followed by its children. */
export function switcherOrder(tasks: Task[]): { task: Task; depth: number }[] {
  const byParent = new Map<string | null, Task[]>();
  const ids = new Set(tasks.map((t) => t.id));
  for (const task of tasks) {
    const parent = task.parentId && ids.has(task.parentId) ? task.parentId : null;
    const list = byParent.get(parent) ?? [];
    list.push(task);
    byParent.set(parent, list);
  }
  for (const list of byParent.values()) list.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1));
  const out: { task: Task; depth: number }[] = [];
  const walk = (parent: string | null, depth: number) => {
    for (const task of byParent.get(parent) ?? []) {
      out.push({ task, depth });
      if (depth < 6) walk(task.id, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}
