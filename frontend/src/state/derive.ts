// Small pure helpers shared by the board, the switcher and the task page.
import type { AgentProfile, SessionSummary, Task, Turn, Workflow, WorkflowStep } from "../api/types";
import { TERMINAL_SESSION_STATES } from "../api/types";
import type { Features } from "./features";

export function stepOf(workflows: Workflow[], task: Task): WorkflowStep | undefined {
  for (const workflow of workflows) {
    const step = workflow.steps.find((s) => s.id === task.workflowStepId);
    if (step) return step;
  }
  return undefined;
}

/**
 * Whether the task's step waits for a completion signal the agent did not give.
 * The backend says so with pendingAction COMPLETION_PENDING (and Session.completionPending, which
 * still holds while a question outranks it in pendingAction). On a server without the workflow
 * engine (no markStepComplete), a signal-gated step whose session settled after a turn counts.
 */
export function completionPending(
  task: Task,
  step: WorkflowStep | undefined,
  features: Features,
  session?: { state: string; completionPending?: boolean | null } | null,
  turns?: Turn[],
): boolean {
  if (task.pendingAction === "COMPLETION_PENDING") return true;
  if (session?.completionPending) return true;
  if (features.markStepComplete || !step || !step.autoAdvanceRequiresSignal || step.isFinalStep) return false;
  if (task.state === "COMPLETED" || task.state === "CANCELLED") return false;
  if (session) {
    const settled = session.state === "WAITING_FOR_INPUT";
    const ranTurn = !turns || turns.some((t) => t.state !== "RUNNING");
    return settled && ranTurn;
  }
  return task.state === "REVIEW" || task.state === "WAITING_FOR_INPUT";
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
