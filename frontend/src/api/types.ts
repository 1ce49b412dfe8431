// Wire types for the parts of the Kandev GraphQL schema the client reads.

export type TaskState =
  | "TODO"
  | "SCHEDULING"
  | "IN_PROGRESS"
  | "REVIEW"
  | "BLOCKED"
  | "WAITING_FOR_INPUT"
  | "COMPLETED"
  | "FAILED"
  | "CANCELLED";

export type PendingAction = "NONE" | "CLARIFICATION" | "PERMISSION" | "COMPLETION_PENDING";

export type SessionState =
  | "CREATED"
  | "STARTING"
  | "RUNNING"
  | "WAITING_FOR_INPUT"
  | "COMPLETED"
  | "FAILED"
  | "CANCELLED";

export type MessageKind = "USER" | "AGENT" | "THOUGHT" | "TOOL_CALL" | "PLAN" | "SYSTEM" | "ERROR" | "RICH_OUTPUT";

export interface Workspace {
  id: string;
  name: string;
  defaultWorkflowId: string | null;
}

export interface WorkflowStep {
  id: string;
  name: string;
  position: number;
  isStartStep: boolean;
  isFinalStep: boolean;
  autoAdvanceRequiresSignal: boolean;
  allowManualMove: boolean;
}

export interface Workflow {
  id: string;
  name: string;
  steps: WorkflowStep[];
}

export interface AgentProfile {
  id: string;
  name: string;
  kind: "SCRIPTED" | "ACP";
  available: boolean;
  missingCommand: string | null;
}

export interface Task {
  id: string;
  title: string;
  state: TaskState;
  autopilot: boolean;
  parentId: string | null;
  pendingAction: PendingAction;
  workflowId: string;
  workflowStepId: string;
  externalId: string | null;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
  blockReason: string | null;
}

export interface Turn {
  id: string;
  seq: number;
  state: "RUNNING" | "COMPLETED" | "FAILED" | "CANCELLED";
  stopReason: string | null;
  error: string | null;
}

export interface QueuedPrompt {
  id: string;
  text: string;
  source: string;
}

export interface SessionSummary {
  id: string;
  name: string;
  state: SessionState;
  isPrimary: boolean;
  agentProfileId: string | null;
  createdAt: string;
}

export interface TaskDetail extends Task {
  prompt: string;
  sessions: SessionSummary[];
}

export interface Message {
  id: string;
  kind: MessageKind;
  text: string;
  data: Record<string, unknown>;
  turnId: string | null;
  seq: number;
  createdAt: string;
  updatedAt: string;
}

export interface SessionDetail extends SessionSummary {
  completionPending?: boolean;
  turns: Turn[];
  queuedPrompts: QueuedPrompt[];
  messages: { nodes: Message[] };
}

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: string;
}

export interface PermissionRequest {
  id: string;
  taskId: string;
  sessionId: string;
  title: string;
  toolCall: Record<string, unknown>;
  options: PermissionOption[];
}

/** A pending operator clarification (ask_user_question_kandev), normalized for the card. */
export interface Clarification {
  id: string;
  sessionId: string | null;
  context: string;
  questions: ClarificationQuestion[];
}

export interface ClarificationQuestion {
  id: string;
  prompt: string;
  title: string | null;
  options: { label: string; description: string | null }[];
}

export interface TaskEvent {
  kind: "CREATED" | "UPDATED" | "MOVED" | "ARCHIVED" | "DELETED";
  task: Task;
}

export interface SessionEvent {
  kind: "MESSAGE_APPENDED" | "MESSAGE_UPDATED" | "TURN_STARTED" | "TURN_ENDED" | "STATE_CHANGED" | "PROMPT_QUEUED";
  session: { id: string; state: SessionState; completionPending?: boolean };
  message: Message | null;
  turn: Turn | null;
}

export const TERMINAL_SESSION_STATES: SessionState[] = ["COMPLETED", "FAILED", "CANCELLED"];
