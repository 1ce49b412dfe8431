/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** A pre-flight acknowledgement's verdict. */
export type AckStatus =
  /** A run would fail (see detail); reackAutomation checks again. */
  | 'FAILED'
  /** The next run has what it needs. */
  | 'OK'
  /** The check is queued or running. */
  | 'PENDING'
  /** It can run, with a concern (see detail). */
  | 'WARN';

/** Add a registry entry as a workspace MCP definition (npm with auth on: server-wide). */
export type AddMcpRegistryEntryInput = {
  entryKey: string;
  /** The definition's name; default the suggested name. */
  name?: string | null | undefined;
  /** The option's index; default the first installable. */
  option?: number | null | undefined;
  workspaceId: string | number;
};

/** A comment opening a thread: on lines line..endLine of `side` of a file, on a whole file (no line), or on the whole task (no path). */
export type AddReviewCommentInput = {
  /** Markdown, 1 to 10000 characters. */
  body: string;
  /** Last line (default: line); at most 500 lines in all. */
  endLine?: number | null | undefined;
  /** First line (1-based, of side); null: a comment on the whole file. */
  line?: number | null | undefined;
  /** The file, relative to the repository (for side OLD its path in the base: a renamed file's oldPath); null: a comment on the whole task. */
  path?: string | null | undefined;
  /** The file's repository; may be left out when the task has exactly one. */
  repositoryId?: string | number | null | undefined;
  /** Which version the lines count in: NEW (default), or OLD (the base). */
  side?: ReviewSide;
  /** The task. */
  taskId: string | number;
};

/** An atomic batch of sources for an idle task. */
export type AddWorkspaceSourcesInput = {
  sources: Array<WorkspaceSourceInput>;
  /** Default (and in a task session: your own task or your direct child). */
  taskId?: string | number | null | undefined;
};

/** QUEUED: waiting for a worker; RESOLVING: an update asks the package source for the current version; INSTALLING: npm at work; DONE; FAILED (the job's error says why). */
export type AgentInstallState =
  | 'DONE'
  | 'FAILED'
  | 'INSTALLING'
  | 'QUEUED'
  | 'RESOLVING';

/** SCRIPTED: the built-in agent that follows directives; AUTHOR: the built-in automation-authoring agent (no model), the default of startAutomationAuthoring; ACP: a command to spawn. */
export type AgentKind =
  | 'ACP'
  | 'AUTHOR'
  | 'SCRIPTED';

export type AnswerClarificationInput = {
  answers: Array<QuestionAnswerInput>;
  clarificationId: string | number;
};

/** How far a 'describe an automation' chat has come. */
export type AuthoringDraftState =
  /** The agent is asking what is missing. */
  | 'COLLECTING'
  /** The operator said yes and the chat created the automation (automationId). */
  | 'CONFIRMED'
  /** The full definition is shown, awaiting a yes (or a yes held while a credential is missing). */
  | 'CONFIRMING'
  /** No viable definition after five messages: the form takes over with the draft. */
  | 'HANDED_OFF';

/** NEW_TASK_PER_RUN: every firing gets its own task and session; CONTINUE_SESSION: later firings send a new turn to the first run's session. */
export type AutomationContext =
  | 'CONTINUE_SESSION'
  | 'NEW_TASK_PER_RUN';

/** Where the automation was made: the settings form or a chat. */
export type AutomationCreatedVia =
  | 'CHAT'
  | 'FORM';

/** HIDDEN: each run's task stays in the automation's history only; NORMAL: ordinary workflow work on the board. */
export type AutomationDestination =
  | 'HIDDEN'
  | 'NORMAL';

/** What happened to a run in an automationEvents message. */
export type AutomationEventKind =
  /** The automation's pre-flight acknowledgement was stored; carries ack, no run. */
  | 'ACK_CHANGED'
  /** The automation's next scheduled fire moved; carries nextFire, no run. */
  | 'NEXT_FIRE_CHANGED'
  | 'RUN_CREATED'
  | 'RUN_DELETED'
  | 'RUN_UPDATED'
  /** The first message of every subscription: the server listens from now on. Load (or reload) the snapshot after it, and nothing that happens meanwhile is missed; it comes again after a reconnect. Carries no run. */
  | 'SUBSCRIBED'
  /** A new entry of the automation's thread; carries threadMessage, no run. */
  | 'THREAD_MESSAGE';

/** One repository an automation's runs work in. */
export type AutomationRepositoryInput = {
  /** Base branch; default: the repository's default branch (saved as chosen). */
  baseBranch?: string | null | undefined;
  /** A repository of the workspace. */
  repositoryId: string | number;
};

/** TRIGGERED: admitted, task not bound yet; TASK_CREATED: its task and turn exist; SUCCEEDED / FAILED: its turn ended (the session waits for a reply); SKIPPED: not run, with the reason; ARCHIVED: its task was archived; CANCELLED: the run was stopped, or its task deleted or cancelled (the last two are derived when read, never stored). */
export type AutomationRunStatus =
  | 'ARCHIVED'
  | 'CANCELLED'
  | 'FAILED'
  | 'SKIPPED'
  | 'SUCCEEDED'
  | 'TASK_CREATED'
  | 'TRIGGERED';

/** What fired a run (MANUAL: Run now). */
export type AutomationRunTriggerType =
  | 'GITHUB_CI'
  | 'GITHUB_PR'
  | 'GITHUB_PR_MERGED'
  | 'GITHUB_PUSH'
  | 'MANUAL'
  | 'SCHEDULED'
  | 'WEBHOOK';

/** One trigger: SCHEDULED takes expression and timezone; a GitHub condition filters. */
export type AutomationTriggerInput = {
  /** Default true. */
  enabled?: boolean | null | undefined;
  /** SCHEDULED: five-field cron, @hourly, @daily, @weekly or @every <duration>. */
  expression?: string | null | undefined;
  /** A GitHub condition's filters. */
  filters?: unknown;
  /** WEBHOOK: true takes only signed deliveries: X-Kandev-Timestamp (Unix seconds) and X-Kandev-Signature (sha256=<hex HMAC-SHA256 of '<timestamp>.<raw body>' keyed with the webhook's secret), within 5 minutes of the server's time, each signature accepted once. Default false (X-Webhook-Secret, or a signature). */
  requireSignature?: boolean | null | undefined;
  /** SCHEDULED: IANA time zone such as Europe/Berlin; empty: UTC. */
  timezone?: string | null | undefined;
  /** What the trigger listens to. */
  type: AutomationTriggerType;
};

/** What a trigger listens to. */
export type AutomationTriggerType =
  | 'GITHUB_CI'
  | 'GITHUB_PR'
  | 'GITHUB_PR_MERGED'
  | 'GITHUB_PUSH'
  | 'SCHEDULED'
  | 'WEBHOOK';

/** A budget's limits; leave both null to remove the budget. */
export type BudgetInput = {
  /** Input plus output tokens. */
  limitTokens?: number | null | undefined;
  /** US dollars, as agents report cost. */
  limitUsd?: number | null | undefined;
};

/** Which changes: ALL (the branch's commits plus uncommitted and untracked work, against the merge base with the base branch), UNCOMMITTED (against the branch's last commit, untracked files included), COMMITTED (the branch's commits only). */
export type ChangeScope =
  | 'ALL'
  | 'COMMITTED'
  | 'UNCOMMITTED';

/** Commit the task's changes on its branch, as you, with the agent named in a trailer. */
export type CommitTaskChangesInput = {
  /** Amend the branch's last commit instead of adding one. */
  amend?: boolean;
  /** The commit message; empty or null: the task's agent suggests one (suggestCommitMessage). */
  message?: string | null | undefined;
  /** Only these files (relative to the repository); null: every uncommitted change. */
  paths?: Array<string> | null | undefined;
  /** The task's repository; may be left out when the task has exactly one. */
  repositoryId?: string | number | null | undefined;
  /** The task. */
  taskId: string | number;
};

/** Connect a workspace to GitHub with a token, verified with GitHub first. */
export type ConnectGithubInput = {
  /** A GitHub token (classic or fine-grained); stored encrypted as a workspace secret, never shown again. */
  token: string;
  /** The workspace. */
  workspaceId: string | number;
};

/** Connect a workspace to GitLab with a token, verified with the instance first. */
export type ConnectGitlabInput = {
  /** The GitLab instance, an http(s) URL without credentials. Default: the server's (https://gitlab.com unless configured); another instance needs an admin. */
  baseUrl?: string | null | undefined;
  /** A GitLab personal, group or project access token; stored encrypted as a workspace secret, never shown again. */
  token: string;
  /** The workspace. */
  workspaceId: string | number;
};

/** Only admins set kind ACP, command or env, or create server-wide profiles (workspaceId null); anyone may create a Scripted profile in their workspace. */
export type CreateAgentProfileInput = {
  command?: Array<string> | null | undefined;
  env?: unknown;
  kind?: AgentKind;
  name: string;
  permissionPolicy?: PermissionPolicy | null | undefined;
  supportsMcp?: boolean | null | undefined;
  /** The workspace; null: a server-wide profile, listed in every workspace (admins only). */
  workspaceId?: string | number | null | undefined;
};

/** A new automation of a workspace. */
export type CreateAutomationInput = {
  /** Agent profile the runs use (the workspace's or a server-wide one); null: none yet (a launch needs one). */
  agentProfileId?: string | number | null | undefined;
  /** NEW_TASK_PER_RUN (default): a task per firing; CONTINUE_SESSION: later firings reuse the first run's session. */
  context?: AutomationContext | null | undefined;
  /** FORM (default) or CHAT: where the automation was made. */
  createdVia?: AutomationCreatedVia | null | undefined;
  /** What the automation is for (at most 5000 characters). */
  description?: string | null | undefined;
  /** HIDDEN (default): runs stay in the automation's history; NORMAL: tasks on the board (needs workflowId). */
  destination?: AutomationDestination | null | undefined;
  /** Whether the automation fires at all (default true). */
  enabled?: boolean | null | undefined;
  /** Executor profile the runs use (the workspace's or a server-wide one); null: none yet. */
  executorProfileId?: string | number | null | undefined;
  /** Runs that may be active at once, at least 1 (default 1); exactly 1 with CONTINUE_SESSION. */
  maxConcurrentRuns?: number | null | undefined;
  /** Name (at most 200 characters). */
  name: string;
  /** What every run asks the agent; placeholders such as {{trigger.type}} and {{data.<path>}} are filled in. */
  prompt: string;
  /** Ordered repository and base-branch pairs of the workspace's repositories; empty: each run works in a scratch directory (no git). Replaces the whole list. */
  repositories?: Array<AutomationRepositoryInput> | null | undefined;
  /** Each run's title, with the same placeholders (at most 500 characters). */
  titleTemplate?: string | null | undefined;
  /** The whole trigger set, in one of two exclusive layouts: at most one SCHEDULED plus at most one GitHub condition, or one WEBHOOK alone. Switching layouts deletes the other layout's triggers; a trigger of a type the automation already has keeps its id (and a webhook its secret). */
  triggers?: Array<AutomationTriggerInput> | null | undefined;
  /** The workflow a NORMAL run's task enters (required for NORMAL, optional for HIDDEN). */
  workflowId?: string | number | null | undefined;
  /** The step a NORMAL run's task enters; null: the workflow's start step. */
  workflowStepId?: string | number | null | undefined;
  /** The workspace's id. */
  workspaceId: string | number;
};

/** Admins only. The settings apply to SANDBOX and DOCKER profiles. */
export type CreateExecutorProfileInput = {
  /** Worker capabilities the profile needs besides its kind's own (docker, sandbox). */
  capabilities?: Array<string> | null | undefined;
  /** DOCKER: CPUs the container may use. */
  cpus?: number | null | undefined;
  /** DOCKER: a Dockerfile the image is built from (once per content) instead. */
  dockerfile?: string | null | undefined;
  /** DOCKER: environment in the container; values may reference ${secret:NAME}. */
  env?: unknown;
  /** DOCKER: the image to run, e.g. debian:bookworm. */
  image?: string | null | undefined;
  kind: ExecutorKind;
  /** Memory limit in MB (DOCKER: the container, no swap; SANDBOX: address space). */
  memoryMb?: number | null | undefined;
  /** DOCKER: extra folders. */
  mounts?: Array<ExecutorMountInput> | null | undefined;
  name: string;
  /** NONE (default); SANDBOX: or FULL; DOCKER: or the name of a Docker network. */
  network?: string | null | undefined;
  /** Most processes the box may hold. */
  pids?: number | null | undefined;
  /** DOCKER: a shell script run in the container before the agent; its failure fails. */
  prepareScript?: string | null | undefined;
  /** DOCKER: default NEVER. */
  pullPolicy?: PullPolicy | null | undefined;
  /** DOCKER: numeric uid[:gid]; default: the agent's identity (never root). */
  user?: string | null | undefined;
  /** The workspace; null: a server-wide profile, listed in every workspace. */
  workspaceId?: string | number | null | undefined;
};

/** REMOTE: name, url, headers. NPM (admins): name, package (name@x.y.z), args, env. EXECUTABLE (admins): name, command (absolute path), args, env. With auth on, local kinds are server-wide (workspaceId null). */
export type CreateMcpServerInput = {
  args?: Array<string> | null | undefined;
  command?: string | null | undefined;
  env?: unknown;
  headers?: unknown;
  kind: McpServerKind;
  name: string;
  package?: string | null | undefined;
  url?: string | null | undefined;
  /** The workspace; null: a server-wide definition (admins only). */
  workspaceId?: string | number | null | undefined;
};

export type CreateNotificationChannelInput = {
  /** What it is told about. */
  events: Array<NotificationEvent>;
  /** A name people recognise. */
  name: string;
  /** The target in Apprise's URL form: json://host[:port]/path (a generic JSON webhook; jsons:// for https), slack://..., discord://..., mailto://user:pass@host, ntfy://topic, ... Stored encrypted. */
  url: string;
  /** The workspace. */
  workspaceId: string | number;
};

export type CreateRepositoryInput = {
  defaultBranch?: string | null | undefined;
  name: string;
  /** Absolute path of a local git repository on the workers' machine. */
  path: string;
  workspaceId: string | number;
};

export type CreateSecretInput = {
  name: string;
  /** Stored encrypted; never returned. */
  value: string;
  workspaceId: string | number;
};

/** A new task. Omitted workflow and step mean the workspace default's start step. */
export type CreateTaskInput = {
  /** Agent profile. Default: the workspace default. */
  agentProfileId?: string | number | null | undefined;
  /** Files uploaded with POST /api/v1/attachments (at most 10), or attachments the task already has. They go with the task's first prompt. */
  attachmentIds?: Array<string | number> | null | undefined;
  /** Work on its own, asking only its parent; fixed after creation. */
  autopilot?: boolean | null | undefined;
  /** Tasks this one waits on ('self': the calling session's task). A start requested while any has not completed is recorded and fires once every one has. */
  blockedBy?: Array<string | number> | null | undefined;
  /** Executor profile. Default: a subtask's parent's, else the workspace default. A task an agent creates runs where the agent runs: naming another executor is refused (VALIDATION). */
  executorProfileId?: string | number | null | undefined;
  /** Idempotency key, unique per workspace: a repeat returns the same task. */
  externalId?: string | null | undefined;
  /** Parent task id ('self': the calling session's task). */
  parentId?: string | number | null | undefined;
  /** Instructions delivered to the task's agent when it starts. */
  prompt?: string | null | undefined;
  /** Repositories to work in, each with an optional base branch. */
  repositories?: Array<TaskRepositoryInput> | null | undefined;
  /** Start the agent now. Default: true when a prompt is given, else false. */
  startAgent?: boolean | null | undefined;
  /** false: link to blockedBy without recording any start. Default: true. */
  startWhenUnblocked?: boolean | null | undefined;
  /** Short task title. */
  title: string;
  /** Workflow to enter. Default: the workspace's default workflow. */
  workflowId?: string | number | null | undefined;
  /** Step to enter. Default: the workflow's start step. */
  workflowStepId?: string | number | null | undefined;
  /** The workspace. Default: the workspace of the calling session's task (required for other callers). */
  workspaceId?: string | number | null | undefined;
};

export type CreateWorkflowInput = {
  /** What the workflow is for. */
  description?: string | null | undefined;
  /** Name (at most 200 characters). */
  name: string;
  /** The workspace's id. */
  workspaceId: string | number;
};

/** A new step. Omitted flags are false; manual moves are allowed unless said otherwise. */
export type CreateWorkflowStepInput = {
  /** Whether people may move tasks into it. Default: true. */
  allowManualMove?: boolean | null | undefined;
  /** Auto-advance waits for the agent's step_complete_kandev signal. */
  autoAdvanceRequiresSignal?: boolean | null | undefined;
  /** Step events: {on_enter: [auto_start_agent (optional prompt) | enable_plan_mode | reset_agent_context], on_turn_start: [move_to_next | move_to_previous | move_to_step (step_id)], on_turn_complete: [the moves | disable_plan_mode], on_exit: [disable_plan_mode], on_children_completed: [the moves]}; each action {type, ...}. */
  events?: unknown;
  /** True makes it the only final step. */
  isFinalStep?: boolean | null | undefined;
  /** True makes it the only start step. */
  isStartStep?: boolean | null | undefined;
  /** Name (at most 200 characters). */
  name: string;
  /** 0-based; the steps from there on shift one down. Default: append. */
  position?: number | null | undefined;
  /** Instructions the agent gets when the step starts it. */
  prompt?: string | null | undefined;
  /** At least 1; null: no limit. */
  wipLimit?: number | null | undefined;
  /** The workflow's id. */
  workflowId: string | number;
};

/** QUEUED waits for the running turn; INTERRUPT cancels it first. */
export type DeliveryMode =
  | 'INTERRUPT'
  | 'QUEUED';

/** What a line of a hunk is. */
export type DiffLineKind =
  | 'ADD'
  | 'CONTEXT'
  | 'DELETE';

/** Undo uncommitted changes in the task's worktree: whole files, or one hunk. */
export type DiscardChangesInput = {
  /** Instead of paths: one hunk of a tracked file. */
  hunk?: DiscardHunkInput | null | undefined;
  /** Files (1 to 500) back to the branch's last commit (a new file is deleted, a rename undone); committed changes stay. */
  paths?: Array<string> | null | undefined;
  /** The repository. */
  repositoryId: string | number;
  /** The task. */
  taskId: string | number;
};

/** One hunk of a file's uncommitted changes, by its header. */
export type DiscardHunkInput = {
  /** The hunk's header (DiffHunk.header, its `@@ -a,b +c,d @@` part counts) as read with scope UNCOMMITTED. */
  header: string;
  /** The file. */
  path: string;
};

/** WORKTREE: a git worktree per task; LOCAL: the repository itself; SCRATCH: an empty directory; SANDBOX: the task's worktree in Linux namespaces (bubblewrap); DOCKER: the task's worktree in a Docker container. */
export type ExecutorKind =
  | 'DOCKER'
  | 'LOCAL'
  | 'SANDBOX'
  | 'SCRATCH'
  | 'WORKTREE';

/** A host folder (under KANDEV_SOURCE_ROOTS) seen in a DOCKER executor's container. */
export type ExecutorMountInput = {
  readOnly?: boolean;
  /** Absolute host path under the source roots. */
  source: string;
  /** Absolute path in the container (never /workspace or /run/kandev). */
  target: string;
};

/** MISSING: no such file (or the task's files don't exist yet); NOT_A_FILE: a folder or special file; TOO_LARGE: over 1 MiB; BINARY: neither UTF-8 text nor a PNG, JPEG, GIF or WebP image. */
export type FilePreviewUnavailableReason =
  | 'BINARY'
  | 'MISSING'
  | 'NOT_A_FILE'
  | 'TOO_LARGE';

/** How a file changed: RENAMED and COPIED name the source in oldPath; TYPE_CHANGED is a file that became a link, a submodule or the reverse; UNMERGED is a file a merge left in conflict. */
export type FileStatus =
  | 'ADDED'
  | 'COPIED'
  | 'DELETED'
  | 'MODIFIED'
  | 'RENAMED'
  | 'TYPE_CHANGED'
  | 'UNMERGED';

/** Fix failing checks of the task's pull requests (off by default). */
export type FixFailingChecksInput = {
  /** Turn it on (rounds are counted afresh) or off. */
  enabled?: boolean | null | undefined;
  /** At most this many rounds (1 to 10; default 3). */
  maxRounds?: number | null | undefined;
};

export type ImportWorkflowInput = {
  workspaceId: string | number;
  /** A document as exportWorkflow writes it. */
  yaml: string;
};

/** How current the cached MCP Registry metadata is. */
export type McpRegistryStatus =
  | 'DISABLED'
  | 'FRESH'
  | 'STALE'
  | 'UNAVAILABLE';

/** Where a workspace MCP server is selected, widest first. */
export type McpScope =
  | 'PROFILE'
  | 'REPOSITORY'
  | 'SESSION'
  | 'TASK';

/** A definition and the scope to select it at (or deselect it from). */
export type McpSelectionInput = {
  mcpServerId: string | number;
  scope: McpScope;
  /** The agent profile, repository, task or session. */
  targetId: string | number;
};

/** REMOTE: an http endpoint; NPM: an exact-version npm package run locally; EXECUTABLE: an existing executable run locally (both local kinds are admin-only). */
export type McpServerKind =
  | 'EXECUTABLE'
  | 'NPM'
  | 'REMOTE';

/** How a pull request is merged on its code host. */
export type MergeMethod =
  | 'MERGE'
  | 'REBASE'
  | 'SQUASH';

/** Merge the task's pull request on its code host. */
export type MergePullRequestInput = {
  /** MERGE, SQUASH or REBASE (GitLab: MERGE or SQUASH). */
  method?: MergeMethod;
  /** The task's repository; may be left out when the task has exactly one. */
  repositoryId?: string | number | null | undefined;
  /** The task. */
  taskId: string | number;
};

/** For a repository on no code host: merge the task's branch into its base locally. */
export type MergeTaskBranchInput = {
  /** The task's repository; may be left out when the task has exactly one. */
  repositoryId?: string | number | null | undefined;
  /** The task. */
  taskId: string | number;
};

/** What a transcript message is. */
export type MessageKind =
  | 'AGENT'
  | 'ERROR'
  | 'PLAN'
  | 'REVIEW'
  | 'RICH_OUTPUT'
  | 'SYSTEM'
  | 'THOUGHT'
  | 'TOOL_CALL'
  | 'USER';

export type MoveTaskInput = {
  /** The task's id. */
  taskId: string | number;
  /** The step to move to. */
  workflowStepId: string | number;
};

/** SCHEDULED: fires at a time; WEBHOOK: when its webhook is called; EVENT: on matching GitHub events; MANUAL: no trigger enabled, Run now only; RUNNING: a run is active; DISABLED; DELETED. */
export type NextRunState =
  | 'DELETED'
  | 'DISABLED'
  | 'EVENT'
  | 'MANUAL'
  | 'RUNNING'
  | 'SCHEDULED'
  | 'WEBHOOK';

/** How the channel's last attempt went. */
export type NotificationChannelStatus =
  | 'FAILING'
  | 'NEW'
  | 'OK'
  | 'SLOW';

/** What a channel is told about. */
export type NotificationEvent =
  /** An agent asks a question or a permission. */
  | 'NEEDS_INPUT'
  /** A task reached review. */
  | 'REVIEW_READY'
  /** A turn failed. */
  | 'TURN_FAILED';

/** Open the repository's pull request (GitHub) or merge request (GitLab) from the task. */
export type OpenPullRequestInput = {
  /** The branch to merge into; default: the task's base branch. */
  base?: string | null | undefined;
  /** Markdown; default: the agent's last summary. */
  body?: string | null | undefined;
  /** Open it as a draft. */
  draft?: boolean;
  /** The task's repository; may be left out when the task has exactly one. */
  repositoryId?: string | number | null | undefined;
  /** The task. */
  taskId: string | number;
  /** Default: the task's title. */
  title?: string | null | undefined;
};

/** What the task waits on, most urgent first. */
export type PendingAction =
  | 'BUDGET_REACHED'
  | 'CLARIFICATION'
  | 'COMPLETION_PENDING'
  | 'NONE'
  | 'PERMISSION'
  | 'WAITING_FOR_WORKER';

/** What happens when the agent asks permission: allow, deny, or ask an operator. */
export type PermissionPolicy =
  | 'ALLOW'
  | 'ASK'
  | 'DENY';

/** NEVER: the image must be on the worker; IF_MISSING: pulled when absent. */
export type PullPolicy =
  | 'IF_MISSING'
  | 'NEVER';

/** Push the task's branch to the repository's remote. */
export type PushTaskBranchInput = {
  /** Replace the remote branch (after a rebase or an amend), only if it is still what Kandev last pushed. */
  forceWithLease?: boolean;
  /** The task's repository; may be left out when the task has exactly one. */
  repositoryId?: string | number | null | undefined;
  /** The task. */
  taskId: string | number;
};

export type QuestionAnswerInput = {
  /** Free-text answer. */
  customText?: string | null | undefined;
  /** Which question of the set. */
  questionId: string;
  selectedOptions?: Array<string>;
};

export type ReackAutomationInput = {
  /** The automation's id. */
  automationId: string | number;
};

export type ReorderWorkflowStepsInput = {
  /** Every step of the workflow once, in the new order. */
  stepIds: Array<string | number>;
  /** The workflow's id. */
  workflowId: string | number;
};

/** A new value for a secret, under the same name. */
export type ReplaceSecretInput = {
  /** The secret's id. */
  secretId: string | number;
  /** Stored encrypted; never returned. */
  value: string;
};

/** A reply at the end of a thread. */
export type ReplyToReviewThreadInput = {
  /** Markdown, 1 to 10000 characters. */
  body: string;
  /** The thread. */
  threadId: string | number;
};

export type ResolvePermissionInput = {
  /** The chosen option. */
  optionId: string;
  /** Optional check: the agent's id for the tool call (PermissionRequest.pendingId). */
  pendingId?: string | null | undefined;
  /** The request's id. */
  requestId: string | number;
  /** Optional check: the request's session (another session's id answers not found). */
  sessionId?: string | number | null | undefined;
  /** Optional check: the request's task (another task's id answers not found). */
  taskId?: string | number | null | undefined;
};

/** A person, or the task's agent. */
export type ReviewAuthorKind =
  | 'AGENT'
  | 'PERSON';

/** Which version of a file a comment's lines count in: OLD, the base (the merge base with the base branch); NEW, the working tree now. */
export type ReviewSide =
  | 'NEW'
  | 'OLD';

/** OPEN: waiting to be addressed; RESOLVED: someone (a person or the agent) marked it addressed; OUTDATED: its lines changed or went since it was opened (it keeps showing them as they were). */
export type ReviewThreadState =
  | 'OPEN'
  | 'OUTDATED'
  | 'RESOLVED';

/** What a firing did: FIRED (a run started), SKIPPED (the concurrency cap was reached; a skipped run says why), DEDUPLICATED (that occurrence already fired), REFUSED (the automation or trigger is disabled; nothing was written). */
export type RunAdmission =
  | 'DEDUPLICATED'
  | 'FIRED'
  | 'REFUSED'
  | 'SKIPPED';

export type RunAutomationNowInput = {
  /** The automation to fire now (trigger type MANUAL, never deduplicated). */
  automationId: string | number;
};

export type SendMessageInput = {
  /** Files uploaded with POST /api/v1/attachments (at most 10), or attachments the task already has. */
  attachmentIds?: Array<string | number> | null | undefined;
  /** QUEUED waits for the running turn; INTERRUPT cancels it first. */
  deliveryMode?: DeliveryMode;
  /** The message. */
  prompt: string;
  /** When answering a question, its id. */
  replyToQuestionId?: string | number | null | undefined;
  /** Default: the primary session, else the newest one still open. */
  sessionId?: string | number | null | undefined;
  /** The task's id. */
  taskId: string | number;
};

/** Send review threads to the task's agent as one prompt. */
export type SendReviewToAgentInput = {
  /** The task. */
  taskId: string | number;
  /** The threads (1 to 100); null: every OPEN thread not sent yet (or commented on since). */
  threadIds?: Array<string | number> | null | undefined;
};

/** What happened in a sessionEvents message. */
export type SessionEventKind =
  | 'MESSAGE_APPENDED'
  | 'MESSAGE_UPDATED'
  | 'PROMPT_QUEUED'
  | 'STATE_CHANGED'
  /** The first message of every subscription: the server listens from now on. Load (or reload) the snapshot after it, and nothing that happens meanwhile is missed; it comes again after a reconnect. Carries the session as it is then. */
  | 'SUBSCRIBED'
  | 'TURN_ENDED'
  | 'TURN_STARTED'
  | 'WORKSPACE_SOURCES_UPDATED';

/** Lifecycle of one agent conversation. */
export type SessionState =
  | 'CANCELLED'
  | 'COMPLETED'
  | 'CREATED'
  | 'FAILED'
  | 'RUNNING'
  | 'STARTING'
  | 'WAITING_FOR_INPUT';

/** An automation's monthly budget; both limits null remove it. */
export type SetAutomationBudgetInput = {
  automationId: string | number;
  /** Input plus output tokens per UTC month. */
  limitTokens?: number | null | undefined;
  /** US dollars per UTC month. */
  limitUsd?: number | null | undefined;
};

/** Mark a changed file reviewed, or not. */
export type SetFileReviewedInput = {
  /** The FileChange.diffKey the person saw (recommended: a change made meanwhile then reads unreviewed); default: the file's current diff. */
  diffKey?: string | null | undefined;
  /** The changed file. */
  path: string;
  /** The file's repository. */
  repositoryId: string | number;
  /** true: reviewed at this diff; false: not reviewed. */
  reviewed: boolean;
  /** The task. */
  taskId: string | number;
};

/** The operator's first message of a 'describe an automation' chat. */
export type StartAutomationAuthoringInput = {
  /** The agent that helps author it (any agent profile); default: the workspace's built-in authoring agent (kind AUTHOR, added on first use). */
  agentProfileId?: string | number | null | undefined;
  /** What the automation should do, in the operator's words. */
  prompt: string;
  /** The workspace the automation will belong to. */
  workspaceId: string | number;
};

/** Start the task's agent; from the start step the task moves to the first auto-start step. */
export type StartTaskInput = {
  agentProfileId?: string | number | null | undefined;
  /** Replaces the step prompt for this start. */
  prompt?: string | null | undefined;
  taskId: string | number;
};

export type StopRunInput = {
  /** The run's id. */
  runId: string | number;
};

/** What happened to the task in a taskEvents message. */
export type TaskEventKind =
  | 'ARCHIVED'
  /** What the task changed (task.changeStats) is new; changedFiles names the files whose diff changed (empty: too many to list, refetch all). */
  | 'CHANGES'
  | 'CREATED'
  | 'DELETED'
  | 'MOVED'
  /** A pull (merge) request of the task was opened or refreshed: read task.pullRequests again. */
  | 'PULL_REQUEST'
  /** A review thread was opened or changed; carries reviewThread as it is now. */
  | 'REVIEW_THREAD'
  /** A review thread went with its last comment; carries it as it was. */
  | 'REVIEW_THREAD_DELETED'
  /** The first message of every subscription: the server listens from now on. Load (or reload) the snapshot after it, and nothing that happens meanwhile is missed; it comes again after a reconnect. Carries no task. */
  | 'SUBSCRIBED'
  | 'UPDATED';

/** A repository for a task to work in: a repository id, or a pull request URL. */
export type TaskRepositoryInput = {
  /** Default: the repository's default branch. */
  baseBranch?: string | null | undefined;
  /** Repository id (or repositoryUrl). */
  repositoryId?: string | number | null | undefined;
  /** Instead of repositoryId: a canonical pull request URL (https://<host>/<owner>/<repo>/pull/<number>) on the workspace's connected host. The task works on the PR's exact head and pushes to its branch. */
  repositoryUrl?: string | null | undefined;
};

/** Where a task is in its lifecycle. */
export type TaskState =
  | 'BLOCKED'
  | 'CANCELLED'
  | 'COMPLETED'
  | 'FAILED'
  | 'IN_PROGRESS'
  | 'REVIEW'
  | 'SCHEDULING'
  | 'TODO'
  | 'WAITING_FOR_INPUT';

/** How a turn is going or how it ended. */
export type TurnState =
  | 'CANCELLED'
  | 'COMPLETED'
  | 'FAILED'
  | 'RUNNING';

/** Set the name and email your commits from Kandev are authored by. */
export type UpdateAccountInput = {
  /** Your email as commits show it. */
  gitEmail: string;
  /** Your name as commits show it (1-200 characters). */
  gitName: string;
};

/** Only the fields given change. Changing kind, command or env, or a server-wide profile, is for admins. */
export type UpdateAgentProfileInput = {
  agentProfileId: string | number;
  command?: Array<string> | null | undefined;
  env?: unknown;
  kind?: AgentKind | null | undefined;
  name?: string | null | undefined;
  permissionPolicy?: PermissionPolicy | null | undefined;
  supportsMcp?: boolean | null | undefined;
};

/** Only the fields given change; null clears a nullable field. repositories and triggers, when given, replace the whole set. */
export type UpdateAutomationInput = {
  /** Agent profile the runs use (the workspace's or a server-wide one); null: none yet (a launch needs one). */
  agentProfileId?: string | number | null | undefined;
  /** The automation's id. */
  automationId: string | number;
  /** NEW_TASK_PER_RUN (default): a task per firing; CONTINUE_SESSION: later firings reuse the first run's session. */
  context?: AutomationContext | null | undefined;
  /** What the automation is for (at most 5000 characters). */
  description?: string | null | undefined;
  /** HIDDEN (default): runs stay in the automation's history; NORMAL: tasks on the board (needs workflowId). */
  destination?: AutomationDestination | null | undefined;
  /** Whether the automation fires at all (default true). */
  enabled?: boolean | null | undefined;
  /** Executor profile the runs use (the workspace's or a server-wide one); null: none yet. */
  executorProfileId?: string | number | null | undefined;
  /** Runs that may be active at once, at least 1 (default 1); exactly 1 with CONTINUE_SESSION. */
  maxConcurrentRuns?: number | null | undefined;
  /** Name (at most 200 characters). */
  name?: string | null | undefined;
  /** What every run asks the agent; placeholders such as {{trigger.type}} and {{data.<path>}} are filled in. */
  prompt?: string | null | undefined;
  /** Ordered repository and base-branch pairs of the workspace's repositories; empty: each run works in a scratch directory (no git). Replaces the whole list. */
  repositories?: Array<AutomationRepositoryInput> | null | undefined;
  /** Each run's title, with the same placeholders (at most 500 characters). */
  titleTemplate?: string | null | undefined;
  /** The whole trigger set, in one of two exclusive layouts: at most one SCHEDULED plus at most one GitHub condition, or one WEBHOOK alone. Switching layouts deletes the other layout's triggers; a trigger of a type the automation already has keeps its id (and a webhook its secret). */
  triggers?: Array<AutomationTriggerInput> | null | undefined;
  /** The workflow a NORMAL run's task enters (required for NORMAL, optional for HIDDEN). */
  workflowId?: string | number | null | undefined;
  /** The step a NORMAL run's task enters; null: the workflow's start step. */
  workflowStepId?: string | number | null | undefined;
};

/** Admins only; only the fields given change (a new kind starts from that kind's defaults). */
export type UpdateExecutorProfileInput = {
  /** Worker capabilities the profile needs besides its kind's own (docker, sandbox). */
  capabilities?: Array<string> | null | undefined;
  /** DOCKER: CPUs the container may use. */
  cpus?: number | null | undefined;
  /** DOCKER: a Dockerfile the image is built from (once per content) instead. */
  dockerfile?: string | null | undefined;
  /** DOCKER: environment in the container; values may reference ${secret:NAME}. */
  env?: unknown;
  executorProfileId: string | number;
  /** DOCKER: the image to run, e.g. debian:bookworm. */
  image?: string | null | undefined;
  kind?: ExecutorKind | null | undefined;
  /** Memory limit in MB (DOCKER: the container, no swap; SANDBOX: address space). */
  memoryMb?: number | null | undefined;
  /** DOCKER: extra folders. */
  mounts?: Array<ExecutorMountInput> | null | undefined;
  name?: string | null | undefined;
  /** NONE (default); SANDBOX: or FULL; DOCKER: or the name of a Docker network. */
  network?: string | null | undefined;
  /** Most processes the box may hold. */
  pids?: number | null | undefined;
  /** DOCKER: a shell script run in the container before the agent; its failure fails. */
  prepareScript?: string | null | undefined;
  /** DOCKER: default NEVER. */
  pullPolicy?: PullPolicy | null | undefined;
  /** DOCKER: numeric uid[:gid]; default: the agent's identity (never root). */
  user?: string | null | undefined;
};

/** Only the fields given change; the kind can't. */
export type UpdateMcpServerInput = {
  args?: Array<string> | null | undefined;
  command?: string | null | undefined;
  env?: unknown;
  headers?: unknown;
  mcpServerId: string | number;
  name?: string | null | undefined;
  package?: string | null | undefined;
  url?: string | null | undefined;
};

/** Only the fields given change. */
export type UpdateNotificationChannelInput = {
  /** The channel. */
  channelId: string | number;
  /** false: nothing is sent to it. */
  enabled?: boolean | null | undefined;
  /** What it is told about. */
  events?: Array<NotificationEvent> | null | undefined;
  /** A new name. */
  name?: string | null | undefined;
  /** The target in Apprise's URL form: json://host[:port]/path (a generic JSON webhook; jsons:// for https), slack://..., discord://..., mailto://user:pass@host, ntfy://topic, ... Stored encrypted. */
  url?: string | null | undefined;
};

/** The base branch Kandev diffs a task's repository against. */
export type UpdateRepositoryBaseBranchInput = {
  /** An existing branch (or ref) of the repository. */
  baseBranch: string;
  /** Needed when the task has more than one repository. */
  repositoryId?: string | number | null | undefined;
  /** Default: your own task. */
  taskId?: string | number | null | undefined;
};

/** How updateTaskBranch brings the base's new commits into the task's branch. */
export type UpdateStrategy =
  | 'MERGE'
  | 'REBASE';

/** Bring the base branch's new commits into the task's branch. */
export type UpdateTaskBranchInput = {
  /** The task's repository; may be left out when the task has exactly one. */
  repositoryId?: string | number | null | undefined;
  /** MERGE (a merge commit) or REBASE (the task's commits replayed). */
  strategy: UpdateStrategy;
  /** The task. */
  taskId: string | number;
};

/** Fields to change; state COMPLETED moves the task to its final step. */
export type UpdateTaskInput = {
  /** Merge the task's pull requests once green and approved (a person's setting). */
  autoMerge?: boolean | null | undefined;
  /** Set, raise or remove (both limits null) the task's budget; once spent the task's agent gets nothing more (pendingAction BUDGET_REACHED) until it is raised. People only: an agent can't change budgets. */
  budget?: BudgetInput | null | undefined;
  /** Replace the prompt of the start waiting on dependencies; refused once the task started. */
  deferredLaunchPrompt?: string | null | undefined;
  /** Fix failing checks of the task's pull requests (a person's setting; agents can not change it). */
  fixFailingChecks?: FixFailingChecksInput | null | undefined;
  /** New state. */
  state?: TaskState | null | undefined;
  /** The task's id. */
  taskId: string | number;
  /** New title. */
  title?: string | null | undefined;
};

/** Only the fields given change. */
export type UpdateWorkflowInput = {
  /** What the workflow is for. */
  description?: string | null | undefined;
  /** Name (at most 200 characters). */
  name?: string | null | undefined;
  /** The workflow's id. */
  workflowId: string | number;
};

/** Only the fields given change: an omitted field (or null) keeps its value, an explicit false is stored. wipLimit null removes the limit. */
export type UpdateWorkflowStepInput = {
  /** Whether people may move tasks into it. Default: true. */
  allowManualMove?: boolean | null | undefined;
  /** Auto-advance waits for the agent's step_complete_kandev signal. */
  autoAdvanceRequiresSignal?: boolean | null | undefined;
  /** Step events: {on_enter: [auto_start_agent (optional prompt) | enable_plan_mode | reset_agent_context], on_turn_start: [move_to_next | move_to_previous | move_to_step (step_id)], on_turn_complete: [the moves | disable_plan_mode], on_exit: [disable_plan_mode], on_children_completed: [the moves]}; each action {type, ...}. */
  events?: unknown;
  /** true makes this the only final step (tasks entering it are COMPLETED). */
  isFinalStep?: boolean | null | undefined;
  /** true makes this the workflow's only start step. */
  isStartStep?: boolean | null | undefined;
  /** Name (at most 200 characters). */
  name?: string | null | undefined;
  /** 0-based; others shift. */
  position?: number | null | undefined;
  /** Instructions the agent gets when the step starts it. */
  prompt?: string | null | undefined;
  /** The step's id. */
  stepId: string | number;
  /** At least 1; null: no limit. */
  wipLimit?: number | null | undefined;
};

export type UpdateWorkspaceInput = {
  /** The agent profile tasks and automations naming none run on (the workspace's own or a server-wide one); omitted: unchanged. The automations that follow it are acknowledged again. */
  defaultAgentProfileId?: string | number | null | undefined;
  /** Move a task to its workflow's final step once its pull requests are merged; omitted: unchanged. */
  moveMergedTasksToFinalStep?: boolean | null | undefined;
  /** New name; omitted: unchanged. */
  name?: string | null | undefined;
  workspaceId: string | number;
};

/** What usage totals are grouped by (DAY: the UTC day a turn began, as YYYY-MM-DD). */
export type UsageGroupBy =
  | 'AGENT'
  | 'AUTOMATION'
  | 'DAY'
  | 'MODEL'
  | 'SESSION'
  | 'TASK'
  | 'WORKSPACE';

/** Which part of the workspace's configuration a workspaceEvents message is about; refetch that list. */
export type WorkspaceEventKind =
  /** One of the caller's own personal access tokens was issued or revoked (told to its owner only, in whatever workspace; never its text or hash). */
  | 'ACCESS_TOKEN'
  | 'AGENT_PROFILE'
  | 'EXECUTOR_PROFILE'
  /** A workspace (or server-wide) MCP server definition was created, changed or deleted, or selected or deselected at a scope (profile, repository, task, session). */
  | 'MCP_SERVER'
  | 'REPOSITORY'
  /** A secret was created, replaced or deleted (never its value). */
  | 'SECRET'
  /** The first message of every subscription: the server listens from now on. Load (or reload) the snapshot after it, and nothing that happens meanwhile is missed; it comes again after a reconnect. Carries no id. */
  | 'SUBSCRIBED'
  /** A workflow or one of its steps was created, changed, reordered or deleted. */
  | 'WORKFLOW'
  /** A workspace was renamed or changed, or (told to its owner only) created. */
  | 'WORKSPACE';

/** One source. A repository names exactly one of repositoryId (saved in the workspace), localPath (a git checkout on this machine) or remoteUrl (cloned), plus optional baseBranch (diff base; default the repository's default branch) and branch (an existing branch to work on; default a new Kandev branch). A folder takes an absolute path and an optional display name. */
export type WorkspaceSourceInput = {
  /** Branch Kandev diffs against. Default: the repository's default branch. */
  baseBranch?: string | null | undefined;
  /** An existing branch to work on. Default: a new Kandev branch for the task. */
  branch?: string | null | undefined;
  /** Absolute path of a git checkout on this machine, under the server's source roots. */
  localPath?: string | null | undefined;
  /** Folder sources: display name (default: the folder's name). */
  name?: string | null | undefined;
  /** Folder sources: absolute path of the folder, under the server's source roots. */
  path?: string | null | undefined;
  /** A repository URL to clone (https, ssh, git@host:path, or file:// or an absolute path under the server's source roots). */
  remoteUrl?: string | null | undefined;
  /** A repository saved in the task's workspace. */
  repositoryId?: string | number | null | undefined;
  /** What the source is. */
  type: WorkspaceSourceType;
};

/** A git repository (worktree or in place) or a plain folder. */
export type WorkspaceSourceType =
  | 'FOLDER'
  | 'REPOSITORY';

export type AutomationEditFieldsFragment = { id: string, name: string, description: string, prompt: string, titleTemplate: string, agentProfileId: string | null, destination: AutomationDestination, workflowId: string | null, workflowStepId: string | null, context: AutomationContext, maxConcurrentRuns: number, enabled: boolean, hasWebhookSecret: boolean, triggers: Array<{ id: string, type: AutomationTriggerType, enabled: boolean, expression: string | null, timezone: string | null, filters: unknown, requireSignature: boolean | null }>, repositories: Array<{ repositoryId: string, baseBranch: string }> };

export type AutomationForEditQueryVariables = Exact<{
  id: string | number;
}>;


export type AutomationForEditQuery = { automation: { id: string, name: string, description: string, prompt: string, titleTemplate: string, agentProfileId: string | null, destination: AutomationDestination, workflowId: string | null, workflowStepId: string | null, context: AutomationContext, maxConcurrentRuns: number, enabled: boolean, hasWebhookSecret: boolean, triggers: Array<{ id: string, type: AutomationTriggerType, enabled: boolean, expression: string | null, timezone: string | null, filters: unknown, requireSignature: boolean | null }>, repositories: Array<{ repositoryId: string, baseBranch: string }> } };

export type CronCheckQueryVariables = Exact<{
  e: string;
  tz: string;
}>;


export type CronCheckQuery = { validateCron: { valid: boolean, error: string | null, description: string | null, nextFires: Array<string> } };

export type AutomationSavedFragment = { webhookSecret: string | null, automation: { id: string, name: string, description: string, prompt: string, titleTemplate: string, agentProfileId: string | null, destination: AutomationDestination, workflowId: string | null, workflowStepId: string | null, context: AutomationContext, maxConcurrentRuns: number, enabled: boolean, hasWebhookSecret: boolean, triggers: Array<{ id: string, type: AutomationTriggerType, enabled: boolean, expression: string | null, timezone: string | null, filters: unknown, requireSignature: boolean | null }>, repositories: Array<{ repositoryId: string, baseBranch: string }> } };

export type CreateAutomationFromEditorMutationVariables = Exact<{
  i: CreateAutomationInput;
}>;


export type CreateAutomationFromEditorMutation = { createAutomation:
    | { __typename: 'AutomationPayload', webhookSecret: string | null, automation: { id: string, name: string, description: string, prompt: string, titleTemplate: string, agentProfileId: string | null, destination: AutomationDestination, workflowId: string | null, workflowStepId: string | null, context: AutomationContext, maxConcurrentRuns: number, enabled: boolean, hasWebhookSecret: boolean, triggers: Array<{ id: string, type: AutomationTriggerType, enabled: boolean, expression: string | null, timezone: string | null, filters: unknown, requireSignature: boolean | null }>, repositories: Array<{ repositoryId: string, baseBranch: string }> } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', field: string | null, message: string, code: string }
   };

export type UpdateAutomationFromEditorMutationVariables = Exact<{
  i: UpdateAutomationInput;
}>;


export type UpdateAutomationFromEditorMutation = { updateAutomation:
    | { __typename: 'AutomationPayload', webhookSecret: string | null, automation: { id: string, name: string, description: string, prompt: string, titleTemplate: string, agentProfileId: string | null, destination: AutomationDestination, workflowId: string | null, workflowStepId: string | null, context: AutomationContext, maxConcurrentRuns: number, enabled: boolean, hasWebhookSecret: boolean, triggers: Array<{ id: string, type: AutomationTriggerType, enabled: boolean, expression: string | null, timezone: string | null, filters: unknown, requireSignature: boolean | null }>, repositories: Array<{ repositoryId: string, baseBranch: string }> } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', field: string | null, message: string, code: string }
   };

export type AuthoringDraftFieldsFragment = { taskId: string, state: AuthoringDraftState, operatorMessages: number, name: string | null, prompt: string | null, automationId: string | null, triggers: Array<{ type: AutomationTriggerType, expression: string | null, timezone: string | null, filters: unknown }> };

export type StartAutomationAuthoringMutationVariables = Exact<{
  i: StartAutomationAuthoringInput;
}>;


export type StartAutomationAuthoringMutation = { startAutomationAuthoring:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'StartTaskPayload', task: { id: string }, session: { id: string } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type AuthoringChatQueryVariables = Exact<{
  task: string | number;
}>;


export type AuthoringChatQuery = { task: { id: string, sessions: Array<{ id: string }> }, authoringDraft: { taskId: string, state: AuthoringDraftState, operatorMessages: number, name: string | null, prompt: string | null, automationId: string | null, triggers: Array<{ type: AutomationTriggerType, expression: string | null, timezone: string | null, filters: unknown }> } };

export type AuthoringDraftQueryVariables = Exact<{
  task: string | number;
}>;


export type AuthoringDraftQuery = { authoringDraft: { taskId: string, state: AuthoringDraftState, operatorMessages: number, name: string | null, prompt: string | null, automationId: string | null, triggers: Array<{ type: AutomationTriggerType, expression: string | null, timezone: string | null, filters: unknown }> } };

export type RunRowFragment = { id: string, automationId: string, triggerType: AutomationRunTriggerType, status: AutomationRunStatus, reason: string | null, taskId: string | null, sessionId: string | null, turnId: string | null, titleSnapshot: string, createdAt: string, finishedAt: string | null, stoppedAt: string | null };

export type AckRowFragment = { status: AckStatus, detail: string | null, summary: string, ackedAt: string | null };

export type NextRunRowFragment = { state: NextRunState, label: string, at: string | null, relative: string | null, webhookPath: string | null, runningSince: string | null, elapsedSeconds: number | null, slowAfterSeconds: number, slow: boolean };

export type AutomationRowFragment = { id: string, name: string, description: string, enabled: boolean, nextFire: string | null, lastAck: { status: AckStatus, detail: string | null, summary: string, ackedAt: string | null } | null, nextRun: { state: NextRunState, label: string, at: string | null, relative: string | null, webhookPath: string | null, runningSince: string | null, elapsedSeconds: number | null, slowAfterSeconds: number, slow: boolean }, runs: { nodes: Array<{ id: string, automationId: string, triggerType: AutomationRunTriggerType, status: AutomationRunStatus, reason: string | null, taskId: string | null, sessionId: string | null, turnId: string | null, titleSnapshot: string, createdAt: string, finishedAt: string | null, stoppedAt: string | null }> } };

export type AutomationsQueryVariables = Exact<{
  w: string | number;
}>;


export type AutomationsQuery = { automations: Array<{ id: string, name: string, description: string, enabled: boolean, nextFire: string | null, lastAck: { status: AckStatus, detail: string | null, summary: string, ackedAt: string | null } | null, nextRun: { state: NextRunState, label: string, at: string | null, relative: string | null, webhookPath: string | null, runningSince: string | null, elapsedSeconds: number | null, slowAfterSeconds: number, slow: boolean }, runs: { nodes: Array<{ id: string, automationId: string, triggerType: AutomationRunTriggerType, status: AutomationRunStatus, reason: string | null, taskId: string | null, sessionId: string | null, turnId: string | null, titleSnapshot: string, createdAt: string, finishedAt: string | null, stoppedAt: string | null }> } }> };

export type AgendaQueryVariables = Exact<{
  w: string | number;
}>;


export type AgendaQuery = { agenda: { upcoming: Array<{ nextFire: string, automation: { id: string, name: string }, trigger: { id: string, expression: string | null, timezone: string | null } }>, recent: Array<{ id: string, automationId: string, triggerType: AutomationRunTriggerType, status: AutomationRunStatus, reason: string | null, taskId: string | null, sessionId: string | null, turnId: string | null, titleSnapshot: string, createdAt: string, finishedAt: string | null, stoppedAt: string | null }> } };

export type AutomationRunsQueryVariables = Exact<{
  id: string | number;
}>;


export type AutomationRunsQuery = { automationRuns: { nodes: Array<{ id: string, automationId: string, triggerType: AutomationRunTriggerType, status: AutomationRunStatus, reason: string | null, taskId: string | null, sessionId: string | null, turnId: string | null, titleSnapshot: string, createdAt: string, finishedAt: string | null, stoppedAt: string | null }> } };

export type AutomationEventsSubscriptionVariables = Exact<{
  w: string | number;
}>;


export type AutomationEventsSubscription = { automationEvents: { kind: AutomationEventKind, automationId: string | null, nextFire: string | null, run: { id: string, automationId: string, triggerType: AutomationRunTriggerType, status: AutomationRunStatus, reason: string | null, taskId: string | null, sessionId: string | null, turnId: string | null, titleSnapshot: string, createdAt: string, finishedAt: string | null, stoppedAt: string | null } | null, ack: { status: AckStatus, detail: string | null, summary: string, ackedAt: string | null } | null, nextRun: { state: NextRunState, label: string, at: string | null, relative: string | null, webhookPath: string | null, runningSince: string | null, elapsedSeconds: number | null, slowAfterSeconds: number, slow: boolean } | null } };

export type RunAutomationNowMutationVariables = Exact<{
  i: RunAutomationNowInput;
}>;


export type RunAutomationNowMutation = { runAutomationNow:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'RunAutomationNowPayload', admission: RunAdmission, reason: string | null, run: { id: string, automationId: string, triggerType: AutomationRunTriggerType, status: AutomationRunStatus, reason: string | null, taskId: string | null, sessionId: string | null, turnId: string | null, titleSnapshot: string, createdAt: string, finishedAt: string | null, stoppedAt: string | null } | null }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type StopRunMutationVariables = Exact<{
  i: StopRunInput;
}>;


export type StopRunMutation = { stopRun:
    | { __typename: 'AutomationRunPayload', run: { id: string, automationId: string, triggerType: AutomationRunTriggerType, status: AutomationRunStatus, reason: string | null, taskId: string | null, sessionId: string | null, turnId: string | null, titleSnapshot: string, createdAt: string, finishedAt: string | null, stoppedAt: string | null } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ReackAutomationMutationVariables = Exact<{
  i: ReackAutomationInput;
}>;


export type ReackAutomationMutation = { reackAutomation:
    | { __typename: 'AutomationPayload', automation: { id: string, name: string, description: string, enabled: boolean, nextFire: string | null, lastAck: { status: AckStatus, detail: string | null, summary: string, ackedAt: string | null } | null, nextRun: { state: NextRunState, label: string, at: string | null, relative: string | null, webhookPath: string | null, runningSince: string | null, elapsedSeconds: number | null, slowAfterSeconds: number, slow: boolean }, runs: { nodes: Array<{ id: string, automationId: string, triggerType: AutomationRunTriggerType, status: AutomationRunStatus, reason: string | null, taskId: string | null, sessionId: string | null, turnId: string | null, titleSnapshot: string, createdAt: string, finishedAt: string | null, stoppedAt: string | null }> } } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type WorkspaceRunsQueryVariables = Exact<{
  w: string | number;
  after?: string | null | undefined;
}>;


export type WorkspaceRunsQuery = { runs: { pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ id: string, automationId: string }> } };

export type CatalogueFieldsFragment = { id: string, name: string, command: Array<string>, envKeys: Array<string>, docsUrl: string, verified: string, installed: boolean, installedCommand: Array<string> | null, install: { npmPackage: string | null, version: string | null, binaryUrl: string | null }, installJob: { state: AgentInstallState, update: boolean, error: string | null, startedAt: string | null, endedAt: string | null } | null };

export type AgentCatalogueQueryVariables = Exact<{ [key: string]: never; }>;


export type AgentCatalogueQuery = { agentCatalogue: Array<{ id: string, name: string, command: Array<string>, envKeys: Array<string>, docsUrl: string, verified: string, installed: boolean, installedCommand: Array<string> | null, install: { npmPackage: string | null, version: string | null, binaryUrl: string | null }, installJob: { state: AgentInstallState, update: boolean, error: string | null, startedAt: string | null, endedAt: string | null } | null }> };

export type InstallAgentMutationVariables = Exact<{
  id: string;
}>;


export type InstallAgentMutation = { installAgent:
    | { __typename: 'AgentInstallPayload', agent: { id: string, name: string, command: Array<string>, envKeys: Array<string>, docsUrl: string, verified: string, installed: boolean, installedCommand: Array<string> | null, install: { npmPackage: string | null, version: string | null, binaryUrl: string | null }, installJob: { state: AgentInstallState, update: boolean, error: string | null, startedAt: string | null, endedAt: string | null } | null } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type UpdateAgentMutationVariables = Exact<{
  id: string;
}>;


export type UpdateAgentMutation = { updateAgent:
    | { __typename: 'AgentInstallPayload', agent: { id: string, name: string, command: Array<string>, envKeys: Array<string>, docsUrl: string, verified: string, installed: boolean, installedCommand: Array<string> | null, install: { npmPackage: string | null, version: string | null, binaryUrl: string | null }, installJob: { state: AgentInstallState, update: boolean, error: string | null, startedAt: string | null, endedAt: string | null } | null } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type FileChangeFieldsFragment = { path: string, oldPath: string | null, status: FileStatus, additions: number, deletions: number, binary: boolean, tooLarge: boolean, reviewed: boolean, diffKey: string, oldMode: string | null, newMode: string | null, symlink: boolean, submodule: boolean, untracked: boolean };

export type ReviewThreadFieldsFragment = { id: string, repositoryId: string | null, path: string | null, line: number | null, endLine: number | null, side: ReviewSide, state: ReviewThreadState, origin: ReviewAuthorKind, resolvedAt: string | null, sentInPromptId: string | null, sentAt: string | null, createdAt: string, updatedAt: string, anchor: { line: number | null, endLine: number | null, lineText: string } | null, comments: Array<{ id: string, body: string, createdAt: string, author: { kind: ReviewAuthorKind, login: string | null } }>, resolvedBy: { kind: ReviewAuthorKind, login: string | null } | null };

export type TaskChangesQueryVariables = Exact<{
  id: string | number;
  first: number;
  after?: string | null | undefined;
}>;


export type TaskChangesQuery = { task: { id: string, changes: { reason: string | null, repositories: Array<{ repositoryId: string, name: string, branch: string | null, baseBranch: string, ahead: number, behind: number, note: string | null, stats: { files: number, additions: number, deletions: number }, files: { totalCount: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ path: string, oldPath: string | null, status: FileStatus, additions: number, deletions: number, binary: boolean, tooLarge: boolean, reviewed: boolean, diffKey: string, oldMode: string | null, newMode: string | null, symlink: boolean, submodule: boolean, untracked: boolean }> } }> } } };

export type FileHunksQueryVariables = Exact<{
  id: string | number;
  paths?: Array<string> | string | null | undefined;
  scope?: ChangeScope | null | undefined;
  context: number;
  large: boolean;
}>;


export type FileHunksQuery = { task: { id: string, changes: { repositories: Array<{ repositoryId: string, files: { nodes: Array<{ invalidUtf8: boolean, path: string, oldPath: string | null, status: FileStatus, additions: number, deletions: number, binary: boolean, tooLarge: boolean, reviewed: boolean, diffKey: string, oldMode: string | null, newMode: string | null, symlink: boolean, submodule: boolean, untracked: boolean, submoduleChange: { oldCommit: string | null, newCommit: string | null } | null, hunks: Array<{ header: string, oldStart: number, oldLines: number, newStart: number, newLines: number, lines: Array<{ kind: DiffLineKind, oldNumber: number | null, newNumber: number | null, text: string }> }> }> } }> } } };

export type ReviewThreadsQueryVariables = Exact<{
  id: string | number;
}>;


export type ReviewThreadsQuery = { task: { id: string, reviewThreads: Array<{ id: string, repositoryId: string | null, path: string | null, line: number | null, endLine: number | null, side: ReviewSide, state: ReviewThreadState, origin: ReviewAuthorKind, resolvedAt: string | null, sentInPromptId: string | null, sentAt: string | null, createdAt: string, updatedAt: string, anchor: { line: number | null, endLine: number | null, lineText: string } | null, comments: Array<{ id: string, body: string, createdAt: string, author: { kind: ReviewAuthorKind, login: string | null } }>, resolvedBy: { kind: ReviewAuthorKind, login: string | null } | null }> } };

export type AddReviewCommentMutationVariables = Exact<{
  i: AddReviewCommentInput;
}>;


export type AddReviewCommentMutation = { addReviewComment:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ReviewThreadPayload', thread: { id: string, repositoryId: string | null, path: string | null, line: number | null, endLine: number | null, side: ReviewSide, state: ReviewThreadState, origin: ReviewAuthorKind, resolvedAt: string | null, sentInPromptId: string | null, sentAt: string | null, createdAt: string, updatedAt: string, anchor: { line: number | null, endLine: number | null, lineText: string } | null, comments: Array<{ id: string, body: string, createdAt: string, author: { kind: ReviewAuthorKind, login: string | null } }>, resolvedBy: { kind: ReviewAuthorKind, login: string | null } | null } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ReplyToReviewThreadMutationVariables = Exact<{
  i: ReplyToReviewThreadInput;
}>;


export type ReplyToReviewThreadMutation = { replyToReviewThread:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ReviewThreadPayload', thread: { id: string, repositoryId: string | null, path: string | null, line: number | null, endLine: number | null, side: ReviewSide, state: ReviewThreadState, origin: ReviewAuthorKind, resolvedAt: string | null, sentInPromptId: string | null, sentAt: string | null, createdAt: string, updatedAt: string, anchor: { line: number | null, endLine: number | null, lineText: string } | null, comments: Array<{ id: string, body: string, createdAt: string, author: { kind: ReviewAuthorKind, login: string | null } }>, resolvedBy: { kind: ReviewAuthorKind, login: string | null } | null } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ResolveReviewThreadMutationVariables = Exact<{
  id: string | number;
}>;


export type ResolveReviewThreadMutation = { resolveReviewThread:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ReviewThreadPayload', thread: { id: string, repositoryId: string | null, path: string | null, line: number | null, endLine: number | null, side: ReviewSide, state: ReviewThreadState, origin: ReviewAuthorKind, resolvedAt: string | null, sentInPromptId: string | null, sentAt: string | null, createdAt: string, updatedAt: string, anchor: { line: number | null, endLine: number | null, lineText: string } | null, comments: Array<{ id: string, body: string, createdAt: string, author: { kind: ReviewAuthorKind, login: string | null } }>, resolvedBy: { kind: ReviewAuthorKind, login: string | null } | null } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ReopenReviewThreadMutationVariables = Exact<{
  id: string | number;
}>;


export type ReopenReviewThreadMutation = { reopenReviewThread:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ReviewThreadPayload', thread: { id: string, repositoryId: string | null, path: string | null, line: number | null, endLine: number | null, side: ReviewSide, state: ReviewThreadState, origin: ReviewAuthorKind, resolvedAt: string | null, sentInPromptId: string | null, sentAt: string | null, createdAt: string, updatedAt: string, anchor: { line: number | null, endLine: number | null, lineText: string } | null, comments: Array<{ id: string, body: string, createdAt: string, author: { kind: ReviewAuthorKind, login: string | null } }>, resolvedBy: { kind: ReviewAuthorKind, login: string | null } | null } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DeleteReviewCommentMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteReviewCommentMutation = { deleteReviewComment:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ReviewThreadPayload', threadDeleted: boolean, thread: { id: string, repositoryId: string | null, path: string | null, line: number | null, endLine: number | null, side: ReviewSide, state: ReviewThreadState, origin: ReviewAuthorKind, resolvedAt: string | null, sentInPromptId: string | null, sentAt: string | null, createdAt: string, updatedAt: string, anchor: { line: number | null, endLine: number | null, lineText: string } | null, comments: Array<{ id: string, body: string, createdAt: string, author: { kind: ReviewAuthorKind, login: string | null } }>, resolvedBy: { kind: ReviewAuthorKind, login: string | null } | null } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type SendReviewToAgentMutationVariables = Exact<{
  i: SendReviewToAgentInput;
}>;


export type SendReviewToAgentMutation = { sendReviewToAgent:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'SendReviewPayload', promptId: string, threads: Array<{ id: string, repositoryId: string | null, path: string | null, line: number | null, endLine: number | null, side: ReviewSide, state: ReviewThreadState, origin: ReviewAuthorKind, resolvedAt: string | null, sentInPromptId: string | null, sentAt: string | null, createdAt: string, updatedAt: string, anchor: { line: number | null, endLine: number | null, lineText: string } | null, comments: Array<{ id: string, body: string, createdAt: string, author: { kind: ReviewAuthorKind, login: string | null } }>, resolvedBy: { kind: ReviewAuthorKind, login: string | null } | null }> }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type SetFileReviewedMutationVariables = Exact<{
  i: SetFileReviewedInput;
}>;


export type SetFileReviewedMutation = { setFileReviewed:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'FileReviewedPayload', repositoryId: string, path: string, reviewed: boolean, diffKey: string | null }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DiscardChangesMutationVariables = Exact<{
  i: DiscardChangesInput;
}>;


export type DiscardChangesMutation = { discardChanges:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'DiscardChangesPayload', repositoryId: string, paths: Array<string> }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type CodeHostConnectionsQueryVariables = Exact<{
  w: string | number;
}>;


export type CodeHostConnectionsQuery = { githubConnection: { login: string, host: string, connectedAt: string } | null, gitlabConnection: { username: string, baseUrl: string, host: string, connectedAt: string } | null };

export type ConnectGithubMutationVariables = Exact<{
  i: ConnectGithubInput;
}>;


export type ConnectGithubMutation = { connectGithub:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'ConnectGithubPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DisconnectGithubMutationVariables = Exact<{
  w: string | number;
}>;


export type DisconnectGithubMutation = { disconnectGithub:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'DisconnectGithubPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ConnectGitlabMutationVariables = Exact<{
  i: ConnectGitlabInput;
}>;


export type ConnectGitlabMutation = { connectGitlab:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'ConnectGitlabPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DisconnectGitlabMutationVariables = Exact<{
  w: string | number;
}>;


export type DisconnectGitlabMutation = { disconnectGitlab:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'DisconnectGitlabPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type McpServersQueryVariables = Exact<{
  w: string | number;
}>;


export type McpServersQuery = { mcpServers: Array<{ id: string, name: string, kind: McpServerKind, url: string | null, headers: unknown, package: string | null, command: string | null, args: Array<string>, env: unknown, serverWide: boolean }> };

export type McpServerTemplatesQueryVariables = Exact<{ [key: string]: never; }>;


export type McpServerTemplatesQuery = { mcpServerTemplates: Array<{ key: string, name: string, title: string, description: string, publisher: string, kind: McpServerKind, url: string | null, package: string | null, headers: unknown, secrets: Array<string> }> };

export type CreateMcpServerMutationVariables = Exact<{
  i: CreateMcpServerInput;
}>;


export type CreateMcpServerMutation = { createMcpServer:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'McpServerPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type UpdateMcpServerMutationVariables = Exact<{
  i: UpdateMcpServerInput;
}>;


export type UpdateMcpServerMutation = { updateMcpServer:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'McpServerPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DeleteMcpServerMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteMcpServerMutation = { deleteMcpServer:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'McpServerPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type SelectedMcpServersQueryVariables = Exact<{
  s: McpScope;
  t: string | number;
}>;


export type SelectedMcpServersQuery = { selectedMcpServers: Array<{ id: string }> };

export type SelectMcpServerMutationVariables = Exact<{
  i: McpSelectionInput;
}>;


export type SelectMcpServerMutation = { selectMcpServer:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'McpServerPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DeselectMcpServerMutationVariables = Exact<{
  i: McpSelectionInput;
}>;


export type DeselectMcpServerMutation = { deselectMcpServer:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'McpServerPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type McpRegistryQueryVariables = Exact<{
  w: string | number;
}>;


export type McpRegistryQuery = { mcpRegistry: { status: McpRegistryStatus, fetchedAt: string | null, checkedAt: string | null, error: string | null, entries: Array<{ key: string, name: string, title: string, description: string, version: string, publisher: string, websiteUrl: string | null, suggestedName: string, installable: boolean, options: Array<{ index: number, kind: McpServerKind | null, label: string, url: string | null, package: string | null, transport: string, installable: boolean, reason: string | null, secrets: Array<string> }> }> } };

export type RefreshMcpRegistryMutationVariables = Exact<{
  w: string | number;
}>;


export type RefreshMcpRegistryMutation = { refreshMcpRegistry: { status: McpRegistryStatus, fetchedAt: string | null, checkedAt: string | null, error: string | null, entries: Array<{ key: string, name: string, title: string, description: string, version: string, publisher: string, websiteUrl: string | null, suggestedName: string, installable: boolean, options: Array<{ index: number, kind: McpServerKind | null, label: string, url: string | null, package: string | null, transport: string, installable: boolean, reason: string | null, secrets: Array<string> }> }> } };

export type McpRegistryFieldsFragment = { status: McpRegistryStatus, fetchedAt: string | null, checkedAt: string | null, error: string | null, entries: Array<{ key: string, name: string, title: string, description: string, version: string, publisher: string, websiteUrl: string | null, suggestedName: string, installable: boolean, options: Array<{ index: number, kind: McpServerKind | null, label: string, url: string | null, package: string | null, transport: string, installable: boolean, reason: string | null, secrets: Array<string> }> }> };

export type AddMcpRegistryEntryMutationVariables = Exact<{
  i: AddMcpRegistryEntryInput;
}>;


export type AddMcpRegistryEntryMutation = { addMcpRegistryEntry:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'McpServerPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type SessionMcpServersQueryVariables = Exact<{
  s: string | number;
}>;


export type SessionMcpServersQuery = { sessionMcpServers: { sessionId: string, desiredRevision: number, appliedRevision: number, servers: Array<{ id: string, name: string, kind: McpServerKind, origins: Array<{ scope: McpScope, id: string }> }> } };

export type NotificationChannelsQueryVariables = Exact<{
  w: string | number;
}>;


export type NotificationChannelsQuery = { notificationChannels: Array<{ id: string, name: string, service: string, target: string, events: Array<NotificationEvent>, enabled: boolean, status: NotificationChannelStatus, lastAttemptAt: string | null, lastDeliveredAt: string | null, lastError: string | null, lastDurationMs: number | null, pendingDeliveries: number, failedDeliveries: number }> };

export type CreateNotificationChannelMutationVariables = Exact<{
  i: CreateNotificationChannelInput;
}>;


export type CreateNotificationChannelMutation = { createNotificationChannel:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'NotificationChannelPayload', channel: { id: string } }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type UpdateNotificationChannelMutationVariables = Exact<{
  i: UpdateNotificationChannelInput;
}>;


export type UpdateNotificationChannelMutation = { updateNotificationChannel:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'NotificationChannelPayload', channel: { id: string } }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DeleteNotificationChannelMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteNotificationChannelMutation = { deleteNotificationChannel:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'NotificationChannelPayload', channel: { id: string } }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type TestNotificationChannelMutationVariables = Exact<{
  id: string | number;
}>;


export type TestNotificationChannelMutation = { testNotificationChannel:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'TestNotificationPayload', delivered: boolean, error: string | null }
    | { __typename: 'ValidationError', message: string, code: string }
   };

type ErrorFields_ConflictError_Fragment = { message: string, code: string };

type ErrorFields_NotFoundError_Fragment = { message: string, code: string };

type ErrorFields_PermissionDeniedError_Fragment = { message: string, code: string };

type ErrorFields_ValidationError_Fragment = { message: string, code: string };

export type ErrorFieldsFragment =
  | ErrorFields_ConflictError_Fragment
  | ErrorFields_NotFoundError_Fragment
  | ErrorFields_PermissionDeniedError_Fragment
  | ErrorFields_ValidationError_Fragment
;

export type TaskFieldsFragment = { id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> };

export type SessionFieldsFragment = { id: string, name: string, state: SessionState, isPrimary: boolean, agentProfileId: string | null, createdAt: string };

export type MessageFieldsFragment = { id: string, kind: MessageKind, text: string, data: unknown, turnId: string | null, seq: number, createdAt: string, updatedAt: string, attachments: Array<{ id: string, name: string, size: number, contentType: string, url: string }> };

export type TurnFieldsFragment = { id: string, seq: number, state: TurnState, stopReason: string | null, error: string | null };

export type SessionStatusFieldsFragment = { completionPending: boolean, id: string, name: string, state: SessionState, isPrimary: boolean, agentProfileId: string | null, createdAt: string, turns: Array<{ id: string, seq: number, state: TurnState, stopReason: string | null, error: string | null }>, queuedPrompts: Array<{ id: string, text: string, source: string }> };

export type BootQueryVariables = Exact<{ [key: string]: never; }>;


export type BootQuery = { workspaces: Array<{ id: string, name: string, defaultWorkflowId: string | null }> };

export type CreateWorkspaceMutationVariables = Exact<{
  name: string;
}>;


export type CreateWorkspaceMutation = { createWorkspace:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
    | { __typename: 'WorkspacePayload', workspace: { id: string, name: string, defaultWorkflowId: string | null } }
   };

export type WorkspaceQueryVariables = Exact<{
  w: string | number;
}>;


export type WorkspaceQuery = { workflows: Array<{ id: string, name: string, steps: Array<{ id: string, name: string, position: number, isStartStep: boolean, isFinalStep: boolean, autoAdvanceRequiresSignal: boolean, allowManualMove: boolean, autoStartsAgent: boolean }> }>, agentProfiles: Array<{ id: string, name: string, kind: AgentKind, available: boolean, missingCommand: string | null }> };

export type TasksQueryVariables = Exact<{
  w: string | number;
  step?: string | number | null | undefined;
  first: number;
  after?: string | null | undefined;
}>;


export type TasksQuery = { tasks: { nodes: Array<{ id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type TaskQueryVariables = Exact<{
  id: string | number;
}>;


export type TaskQuery = { task: { prompt: string, executorProfileId: string | null, id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, lastTurnError: { message: string, endedAt: string } | null, repositories: Array<{ repositoryId: string, name: string, baseBranch: string | null, branch: string | null, sourceBranch: string | null, pullRequest: number | null, url: string | null }>, sessions: Array<{ id: string, name: string, state: SessionState, isPrimary: boolean, agentProfileId: string | null, createdAt: string }>, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> } };

export type SessionQueryVariables = Exact<{
  id: string | number;
  page: number;
}>;


export type SessionQuery = { session: { completionPending: boolean, id: string, name: string, state: SessionState, isPrimary: boolean, agentProfileId: string | null, createdAt: string, messages: { nodes: Array<{ id: string, kind: MessageKind, text: string, data: unknown, turnId: string | null, seq: number, createdAt: string, updatedAt: string, attachments: Array<{ id: string, name: string, size: number, contentType: string, url: string }> }>, pageInfo: { hasNextPage: boolean } }, turns: Array<{ id: string, seq: number, state: TurnState, stopReason: string | null, error: string | null }>, queuedPrompts: Array<{ id: string, text: string, source: string }> } };

export type OlderMessagesQueryVariables = Exact<{
  id: string | number;
  page: number;
  before: string | number;
}>;


export type OlderMessagesQuery = { session: { id: string, messages: { nodes: Array<{ id: string, kind: MessageKind, text: string, data: unknown, turnId: string | null, seq: number, createdAt: string, updatedAt: string, attachments: Array<{ id: string, name: string, size: number, contentType: string, url: string }> }>, pageInfo: { hasNextPage: boolean } } } };

export type SessionStatusQueryVariables = Exact<{
  id: string | number;
}>;


export type SessionStatusQuery = { session: { completionPending: boolean, id: string, name: string, state: SessionState, isPrimary: boolean, agentProfileId: string | null, createdAt: string, turns: Array<{ id: string, seq: number, state: TurnState, stopReason: string | null, error: string | null }>, queuedPrompts: Array<{ id: string, text: string, source: string }> } };

export type PendingPermissionsQueryVariables = Exact<{
  w: string | number;
  t?: string | number | null | undefined;
}>;


export type PendingPermissionsQuery = { pendingPermissions: Array<{ id: string, taskId: string, sessionId: string, title: string, toolCall: unknown, options: Array<{ optionId: string, name: string, kind: string }> }> };

export type TaskEventsSubscriptionVariables = Exact<{
  w: string | number;
}>;


export type TaskEventsSubscription = { taskEvents: { kind: TaskEventKind, task: { id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> } | null, changedFiles: Array<{ repositoryId: string, path: string }> | null, reviewThread: { id: string, repositoryId: string | null, path: string | null, line: number | null, endLine: number | null, side: ReviewSide, state: ReviewThreadState, origin: ReviewAuthorKind, resolvedAt: string | null, sentInPromptId: string | null, sentAt: string | null, createdAt: string, updatedAt: string, anchor: { line: number | null, endLine: number | null, lineText: string } | null, comments: Array<{ id: string, body: string, createdAt: string, author: { kind: ReviewAuthorKind, login: string | null } }>, resolvedBy: { kind: ReviewAuthorKind, login: string | null } | null } | null } };

export type SessionEventsSubscriptionVariables = Exact<{
  s: string | number;
}>;


export type SessionEventsSubscription = { sessionEvents: { kind: SessionEventKind, session: { id: string, state: SessionState, completionPending: boolean }, message: { id: string, kind: MessageKind, text: string, data: unknown, turnId: string | null, seq: number, createdAt: string, updatedAt: string, attachments: Array<{ id: string, name: string, size: number, contentType: string, url: string }> } | null, turn: { id: string, seq: number, state: TurnState, stopReason: string | null, error: string | null } | null } };

export type CreateTaskMutationVariables = Exact<{
  i: CreateTaskInput;
}>;


export type CreateTaskMutation = { createTask:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'CreateTaskPayload', task: { id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> } }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type MoveTaskMutationVariables = Exact<{
  i: MoveTaskInput;
}>;


export type MoveTaskMutation = { moveTask:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'TaskPayload', task: { id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type UpdateTaskMutationVariables = Exact<{
  i: UpdateTaskInput;
}>;


export type UpdateTaskMutation = { updateTask:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'TaskPayload', task: { id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ArchiveTaskMutationVariables = Exact<{
  id: string | number;
}>;


export type ArchiveTaskMutation = { archiveTask:
    | { __typename: 'ArchiveTaskPayload', alreadyArchived: boolean, task: { id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type StartTaskMutationVariables = Exact<{
  i: StartTaskInput;
}>;


export type StartTaskMutation = { startTask:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'StartTaskPayload', task: { id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> }, session: { id: string, name: string, state: SessionState, isPrimary: boolean, agentProfileId: string | null, createdAt: string } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type SendMessageMutationVariables = Exact<{
  i: SendMessageInput;
}>;


export type SendMessageMutation = { sendMessage:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'SendMessagePayload', queuedPromptId: string, session: { id: string, name: string, state: SessionState, isPrimary: boolean, agentProfileId: string | null, createdAt: string } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type StopTaskMutationVariables = Exact<{
  id: string | number;
}>;


export type StopTaskMutation = { stopTask:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'StopTaskPayload', status: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type MarkStepCompleteMutationVariables = Exact<{
  s: string | number;
}>;


export type MarkStepCompleteMutation = { markStepComplete:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'MarkStepCompletePayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ResolvePermissionMutationVariables = Exact<{
  i: ResolvePermissionInput;
}>;


export type ResolvePermissionMutation = { resolvePermission:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ResolvePermissionPayload', request: { id: string } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type PendingQuestionsQueryVariables = Exact<{
  w: string | number;
  t?: string | number | null | undefined;
  after?: string | null | undefined;
}>;


export type PendingQuestionsQuery = { pendingQuestions: { nextCursor: string | null, nodes: Array<{ id: string, taskId: string, sessionId: string, context: string, questions: unknown, state: string }> } };

export type AnswerClarificationMutationVariables = Exact<{
  i: AnswerClarificationInput;
}>;


export type AnswerClarificationMutation = { answerClarification:
    | { __typename: 'ClarificationPayload' }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type RejectClarificationMutationVariables = Exact<{
  id: string | number;
}>;


export type RejectClarificationMutation = { rejectClarification:
    | { __typename: 'ClarificationPayload' }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ParentQuestionQueryVariables = Exact<{
  id: string | number;
}>;


export type ParentQuestionQuery = { task: { pendingParentQuestion: { id: string, context: string, questions: unknown } | null } };

export type FilePreviewQueryVariables = Exact<{
  taskId: string | number;
  path: string;
  repository?: string | null | undefined;
}>;


export type FilePreviewQuery = { filePreview:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'FilePreviewUnavailable', path: string, reason: FilePreviewUnavailableReason, message: string }
    | { __typename: 'ImageFilePreview', path: string, size: number, mimeType: string, dataBase64: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'TextFilePreview', path: string, size: number, text: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type TaskPlacementChoicesQueryVariables = Exact<{
  w: string | number;
}>;


export type TaskPlacementChoicesQuery = { repositories: Array<{ id: string, name: string, defaultBranch: string }>, executorProfiles: Array<{ id: string, name: string, kind: ExecutorKind, capabilities: Array<string>, unavailableReason: string | null }>, workspaces: Array<{ id: string, lastTaskChoice: { executorProfileId: string | null, agentProfileId: string | null, repositories: Array<{ repositoryId: string, baseBranch: string | null }> } | null }> };

export type RepositoryBranchesQueryVariables = Exact<{
  w: string | number;
  first: number;
}>;


export type RepositoryBranchesQuery = { repositories: Array<{ id: string, branches: Array<string> }> };

export type UpdateRepositoryBaseBranchMutationVariables = Exact<{
  i: UpdateRepositoryBaseBranchInput;
}>;


export type UpdateRepositoryBaseBranchMutation = { updateRepositoryBaseBranch:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'UpdateRepositoryBaseBranchPayload', baseBranch: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type AddWorkspaceSourcesMutationVariables = Exact<{
  i: AddWorkspaceSourcesInput;
}>;


export type AddWorkspaceSourcesMutation = { addWorkspaceSources:
    | { __typename: 'AddWorkspaceSourcesPayload', changed: boolean }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ProfileFieldsFragment = { id: string, name: string, kind: AgentKind, command: Array<string>, env: unknown, supportsMcp: boolean, permissionPolicy: PermissionPolicy, builtin: boolean, serverWide: boolean, available: boolean, missingCommand: string | null };

export type AgentProfilesQueryVariables = Exact<{
  w: string | number;
}>;


export type AgentProfilesQuery = { agentProfiles: Array<{ id: string, name: string, kind: AgentKind, command: Array<string>, env: unknown, supportsMcp: boolean, permissionPolicy: PermissionPolicy, builtin: boolean, serverWide: boolean, available: boolean, missingCommand: string | null }> };

export type CreateAgentProfileMutationVariables = Exact<{
  i: CreateAgentProfileInput;
}>;


export type CreateAgentProfileMutation = { createAgentProfile:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'CreateAgentProfilePayload', agentProfile: { id: string, name: string, kind: AgentKind, command: Array<string>, env: unknown, supportsMcp: boolean, permissionPolicy: PermissionPolicy, builtin: boolean, serverWide: boolean, available: boolean, missingCommand: string | null } }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type UpdateAgentProfileMutationVariables = Exact<{
  i: UpdateAgentProfileInput;
}>;


export type UpdateAgentProfileMutation = { updateAgentProfile:
    | { __typename: 'AgentProfilePayload', agentProfile: { id: string, name: string, kind: AgentKind, command: Array<string>, env: unknown, supportsMcp: boolean, permissionPolicy: PermissionPolicy, builtin: boolean, serverWide: boolean, available: boolean, missingCommand: string | null } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DeleteAgentProfileMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteAgentProfileMutation = { deleteAgentProfile:
    | { __typename: 'AgentProfilePayload' }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type UpdateWorkspaceMutationVariables = Exact<{
  i: UpdateWorkspaceInput;
}>;


export type UpdateWorkspaceMutation = { updateWorkspace:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
    | { __typename: 'WorkspacePayload', workspace: { id: string, name: string, defaultWorkflowId: string | null } }
   };

export type SecretsQueryVariables = Exact<{
  w: string | number;
}>;


export type SecretsQuery = { secrets: Array<{ id: string, name: string, createdAt: string }> };

export type CreateSecretMutationVariables = Exact<{
  i: CreateSecretInput;
}>;


export type CreateSecretMutation = { createSecret:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'SecretPayload' }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ReplaceSecretMutationVariables = Exact<{
  i: ReplaceSecretInput;
}>;


export type ReplaceSecretMutation = { replaceSecret:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'SecretPayload' }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DeleteSecretMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteSecretMutation = { deleteSecret:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'SecretPayload' }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type AccessTokensQueryVariables = Exact<{ [key: string]: never; }>;


export type AccessTokensQuery = { accessTokens: Array<{ id: string, name: string, createdAt: string, lastUsedAt: string | null, revokedAt: string | null }> };

export type CreateAccessTokenMutationVariables = Exact<{
  name: string;
}>;


export type CreateAccessTokenMutation = { createAccessToken:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'CreateAccessTokenPayload', token: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type RevokeAccessTokenMutationVariables = Exact<{
  id: string | number;
}>;


export type RevokeAccessTokenMutation = { revokeAccessToken:
    | { __typename: 'AccessTokenPayload' }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ExecutorProfilesQueryVariables = Exact<{
  w: string | number;
}>;


export type ExecutorProfilesQuery = { executorProfiles: Array<{ id: string, name: string, kind: ExecutorKind, builtin: boolean, serverWide: boolean, image: string, pullPolicy: PullPolicy, dockerfile: string, env: unknown, cpus: number | null, memoryMb: number | null, pids: number | null, network: string, user: string, prepareScript: string, capabilities: Array<string>, unavailableReason: string | null, mounts: Array<{ source: string, target: string, readOnly: boolean }> }> };

export type TestExecutorProfileMutationVariables = Exact<{
  id: string | number;
}>;


export type TestExecutorProfileMutation = { testExecutorProfile:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'ExecutorTestPayload', ok: boolean, worker: string | null, findings: Array<string>, error: string | null }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type CreateExecutorProfileMutationVariables = Exact<{
  i: CreateExecutorProfileInput;
}>;


export type CreateExecutorProfileMutation = { createExecutorProfile:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'ExecutorProfilePayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type UpdateExecutorProfileMutationVariables = Exact<{
  i: UpdateExecutorProfileInput;
}>;


export type UpdateExecutorProfileMutation = { updateExecutorProfile:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'ExecutorProfilePayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type DeleteExecutorProfileMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteExecutorProfileMutation = { deleteExecutorProfile:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'ExecutorProfilePayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type RepositoriesQueryVariables = Exact<{
  w: string | number;
}>;


export type RepositoriesQuery = { repositories: Array<{ id: string, name: string, path: string, defaultBranch: string }> };

export type CreateRepositoryMutationVariables = Exact<{
  i: CreateRepositoryInput;
}>;


export type CreateRepositoryMutation = { createRepository:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'RepositoryPayload' }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type WorkspaceEventsSubscriptionVariables = Exact<{
  w: string | number;
}>;


export type WorkspaceEventsSubscription = { workspaceEvents: { kind: WorkspaceEventKind, id: string | null } };

export type PullRequestFieldsFragment = { repositoryId: string | null, repository: string, provider: string, number: number, url: string, state: string, draft: boolean, title: string, headBranch: string, headSha: string, baseBranch: string, reviewDecision: string, mergeable: string | null, mergeableReason: string | null, reviewComments: number | null, mergedAt: string | null, refreshedAt: string | null, checks: Array<{ name: string, status: string, conclusion: string | null, url: string | null }> };

export type ShipTaskQueryVariables = Exact<{
  id: string | number;
}>;


export type ShipTaskQuery = { account: { gitIdentity: { name: string, email: string } | null }, task: { id: string, title: string, autoMerge: boolean, fixFailingChecks: { enabled: boolean, maxRounds: number, stopped: string | null }, checkFixRounds: Array<{ id: string, repositoryId: string, round: number, checkNames: Array<string>, state: string, createdAt: string }>, pullRequests: Array<{ repositoryId: string | null, repository: string, provider: string, number: number, url: string, state: string, draft: boolean, title: string, headBranch: string, headSha: string, baseBranch: string, reviewDecision: string, mergeable: string | null, mergeableReason: string | null, reviewComments: number | null, mergedAt: string | null, refreshedAt: string | null, checks: Array<{ name: string, status: string, conclusion: string | null, url: string | null }> }>, repositories: Array<{ repositoryId: string, name: string, baseBranch: string | null, branch: string | null, sourceBranch: string | null, codeHost: string | null }> } };

export type ShipChangesQueryVariables = Exact<{
  id: string | number;
}>;


export type ShipChangesQuery = { task: { id: string, changes: { reason: string | null, repositories: Array<{ repositoryId: string, ahead: number, behind: number, note: string | null, files: { totalCount: number, nodes: Array<{ path: string, oldPath: string | null, status: FileStatus }> } }> } } };

export type SetGitIdentityMutationVariables = Exact<{
  i: UpdateAccountInput;
}>;


export type SetGitIdentityMutation = { updateAccount:
    | { __typename: 'AccountPayload', account: { gitIdentity: { name: string, email: string } | null } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type CommitTaskChangesMutationVariables = Exact<{
  i: CommitTaskChangesInput;
}>;


export type CommitTaskChangesMutation = { commitTaskChanges:
    | { __typename: 'CommitPayload', commit: { repositoryId: string, sha: string, message: string } }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type SuggestCommitMessageMutationVariables = Exact<{
  taskId: string | number;
  repositoryId?: string | number | null | undefined;
}>;


export type SuggestCommitMessageMutation = { suggestCommitMessage:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'SuggestedMessagePayload', message: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type PushTaskBranchMutationVariables = Exact<{
  i: PushTaskBranchInput;
}>;


export type PushTaskBranchMutation = { pushTaskBranch:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'PushPayload', push: { repositoryId: string, branch: string, sha: string, changed: boolean } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type OpenPullRequestMutationVariables = Exact<{
  i: OpenPullRequestInput;
}>;


export type OpenPullRequestMutation = { openPullRequest:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'PullRequestPayload', pullRequest: { repositoryId: string | null, repository: string, provider: string, number: number, url: string, state: string, draft: boolean, title: string, headBranch: string, headSha: string, baseBranch: string, reviewDecision: string, mergeable: string | null, mergeableReason: string | null, reviewComments: number | null, mergedAt: string | null, refreshedAt: string | null, checks: Array<{ name: string, status: string, conclusion: string | null, url: string | null }> } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type MergePullRequestMutationVariables = Exact<{
  i: MergePullRequestInput;
}>;


export type MergePullRequestMutation = { mergePullRequest:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'PullRequestPayload', pullRequest: { repositoryId: string | null, repository: string, provider: string, number: number, url: string, state: string, draft: boolean, title: string, headBranch: string, headSha: string, baseBranch: string, reviewDecision: string, mergeable: string | null, mergeableReason: string | null, reviewComments: number | null, mergedAt: string | null, refreshedAt: string | null, checks: Array<{ name: string, status: string, conclusion: string | null, url: string | null }> } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type MergeTaskBranchMutationVariables = Exact<{
  i: MergeTaskBranchInput;
}>;


export type MergeTaskBranchMutation = { mergeTaskBranch:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'MergeTaskBranchPayload', sha: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type UpdateTaskBranchMutationVariables = Exact<{
  i: UpdateTaskBranchInput;
}>;


export type UpdateTaskBranchMutation = { updateTaskBranch:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'UpdateTaskBranchPayload', repositoryId: string, status: string, head: string | null, conflicts: Array<string> }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type BudgetFieldsFragment = { period: string, limitTokens: number | null, limitUsd: number | null, reached: boolean, spent: { tokens: number, costUsd: number } };

export type UsageQueryVariables = Exact<{
  w: string | number;
  from: string;
  to: string;
  by: UsageGroupBy;
}>;


export type UsageQuery = { usage: Array<{ key: string | null, turns: number, completedTurns: number, failedTurns: number, inputTokens: number, outputTokens: number, cacheReadTokens: number, cacheWriteTokens: number, costUsd: number }> };

export type TaskBudgetQueryVariables = Exact<{
  id: string | number;
}>;


export type TaskBudgetQuery = { task: { id: string, budget: { period: string, limitTokens: number | null, limitUsd: number | null, reached: boolean, spent: { tokens: number, costUsd: number } } | null } };

export type SetTaskBudgetMutationVariables = Exact<{
  id: string | number;
  budget: BudgetInput;
}>;


export type SetTaskBudgetMutation = { updateTask:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'TaskPayload', task: { id: string, title: string, state: TaskState, autopilot: boolean, parentId: string | null, pendingAction: PendingAction, workflowId: string, workflowStepId: string, externalId: string | null, archivedAt: string | null, createdAt: string, updatedAt: string, blockReason: string | null, budget: { period: string, limitTokens: number | null, limitUsd: number | null, reached: boolean, spent: { tokens: number, costUsd: number } } | null, placement: { executor: string | null, worker: string | null, boxId: string | null, waitingFor: Array<string> } | null, usage: { inputTokens: number, outputTokens: number, costUsd: number }, changeStats: { files: number, additions: number, deletions: number } | null, activity: { agentProfileId: string | null, agentName: string | null, lastActivityAt: string | null, preview: string | null, hasRun: boolean, lastTurnFailed: boolean, needsAnswer: boolean }, pullRequests: Array<{ repositoryId: string | null, number: number, url: string, state: string, draft: boolean, checks: Array<{ status: string, conclusion: string | null }> }> } }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type TurnContextQueryVariables = Exact<{
  id: string | number;
}>;


export type TurnContextQuery = { session: { id: string, turns: Array<{ id: string, seq: number, usage: { contextUsed: number | null, contextSize: number | null, model: string | null } | null }> } };

export type AutomationBudgetQueryVariables = Exact<{
  id: string | number;
}>;


export type AutomationBudgetQuery = { automation: { id: string, budget: { period: string, limitTokens: number | null, limitUsd: number | null, reached: boolean, spent: { tokens: number, costUsd: number } } | null } };

export type SetAutomationBudgetMutationVariables = Exact<{
  i: SetAutomationBudgetInput;
}>;


export type SetAutomationBudgetMutation = { setAutomationBudget:
    | { __typename: 'AutomationBudgetPayload', budget: { period: string, limitTokens: number | null, limitUsd: number | null, reached: boolean, spent: { tokens: number, costUsd: number } } | null }
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type EditorStepFieldsFragment = { id: string, name: string, position: number, isStartStep: boolean, isFinalStep: boolean, autoAdvanceRequiresSignal: boolean, allowManualMove: boolean, prompt: string, wipLimit: number | null, events: unknown };

export type EditorWorkflowFieldsFragment = { id: string, name: string, description: string, warnings: Array<string>, steps: Array<{ id: string, name: string, position: number, isStartStep: boolean, isFinalStep: boolean, autoAdvanceRequiresSignal: boolean, allowManualMove: boolean, prompt: string, wipLimit: number | null, events: unknown }> };

export type WorkflowEditorQueryVariables = Exact<{
  w: string | number;
}>;


export type WorkflowEditorQuery = { workflows: Array<{ id: string, name: string, description: string, warnings: Array<string>, steps: Array<{ id: string, name: string, position: number, isStartStep: boolean, isFinalStep: boolean, autoAdvanceRequiresSignal: boolean, allowManualMove: boolean, prompt: string, wipLimit: number | null, events: unknown }> }> };

export type CreateWorkflowMutationVariables = Exact<{
  i: CreateWorkflowInput;
}>;


export type CreateWorkflowMutation = { createWorkflow:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
    | { __typename: 'WorkflowPayload', workflow: { id: string, name: string, description: string, warnings: Array<string>, steps: Array<{ id: string, name: string, position: number, isStartStep: boolean, isFinalStep: boolean, autoAdvanceRequiresSignal: boolean, allowManualMove: boolean, prompt: string, wipLimit: number | null, events: unknown }> } }
   };

export type UpdateWorkflowMutationVariables = Exact<{
  i: UpdateWorkflowInput;
}>;


export type UpdateWorkflowMutation = { updateWorkflow:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
    | { __typename: 'WorkflowPayload' }
   };

export type DeleteWorkflowMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteWorkflowMutation = { deleteWorkflow:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'DeleteWorkflowPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type CreateWorkflowStepMutationVariables = Exact<{
  i: CreateWorkflowStepInput;
}>;


export type CreateWorkflowStepMutation = { createWorkflowStep:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
    | { __typename: 'WorkflowStepPayload' }
   };

export type UpdateWorkflowStepMutationVariables = Exact<{
  i: UpdateWorkflowStepInput;
}>;


export type UpdateWorkflowStepMutation = { updateWorkflowStep:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
    | { __typename: 'WorkflowStepPayload' }
   };

export type DeleteWorkflowStepMutationVariables = Exact<{
  id: string | number;
  to?: string | number | null | undefined;
}>;


export type DeleteWorkflowStepMutation = { deleteWorkflowStep:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'DeleteWorkflowStepPayload' }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
   };

export type ReorderWorkflowStepsMutationVariables = Exact<{
  i: ReorderWorkflowStepsInput;
}>;


export type ReorderWorkflowStepsMutation = { reorderWorkflowSteps:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
    | { __typename: 'WorkflowPayload' }
   };

export type ExportWorkflowQueryVariables = Exact<{
  id: string | number;
}>;


export type ExportWorkflowQuery = { exportWorkflow: string | null };

export type ImportWorkflowMutationVariables = Exact<{
  i: ImportWorkflowInput;
}>;


export type ImportWorkflowMutation = { importWorkflow:
    | { __typename: 'ConflictError', message: string, code: string }
    | { __typename: 'NotFoundError', message: string, code: string }
    | { __typename: 'PermissionDeniedError', message: string, code: string }
    | { __typename: 'ValidationError', message: string, code: string }
    | { __typename: 'WorkflowPayload', workflow: { id: string } }
   };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const AutomationEditFieldsFragmentDoc = new TypedDocumentString(`
    fragment AutomationEditFields on Automation {
  id
  name
  description
  prompt
  titleTemplate
  agentProfileId
  destination
  workflowId
  workflowStepId
  context
  maxConcurrentRuns
  enabled
  hasWebhookSecret
  triggers {
    id
    type
    enabled
    expression
    timezone
    filters
    requireSignature
  }
  repositories {
    repositoryId
    baseBranch
  }
}
    `, {"fragmentName":"AutomationEditFields"}) as unknown as TypedDocumentString<AutomationEditFieldsFragment, unknown>;
export const AutomationSavedFragmentDoc = new TypedDocumentString(`
    fragment AutomationSaved on AutomationPayload {
  webhookSecret
  automation {
    ...AutomationEditFields
  }
}
    fragment AutomationEditFields on Automation {
  id
  name
  description
  prompt
  titleTemplate
  agentProfileId
  destination
  workflowId
  workflowStepId
  context
  maxConcurrentRuns
  enabled
  hasWebhookSecret
  triggers {
    id
    type
    enabled
    expression
    timezone
    filters
    requireSignature
  }
  repositories {
    repositoryId
    baseBranch
  }
}`, {"fragmentName":"AutomationSaved"}) as unknown as TypedDocumentString<AutomationSavedFragment, unknown>;
export const AuthoringDraftFieldsFragmentDoc = new TypedDocumentString(`
    fragment AuthoringDraftFields on AuthoringDraft {
  taskId
  state
  operatorMessages
  name
  prompt
  automationId
  triggers {
    type
    expression
    timezone
    filters
  }
}
    `, {"fragmentName":"AuthoringDraftFields"}) as unknown as TypedDocumentString<AuthoringDraftFieldsFragment, unknown>;
export const AckRowFragmentDoc = new TypedDocumentString(`
    fragment AckRow on AutomationAck {
  status
  detail
  summary
  ackedAt
}
    `, {"fragmentName":"AckRow"}) as unknown as TypedDocumentString<AckRowFragment, unknown>;
export const NextRunRowFragmentDoc = new TypedDocumentString(`
    fragment NextRunRow on NextRunIndicator {
  state
  label
  at
  relative
  webhookPath
  runningSince
  elapsedSeconds
  slowAfterSeconds
  slow
}
    `, {"fragmentName":"NextRunRow"}) as unknown as TypedDocumentString<NextRunRowFragment, unknown>;
export const RunRowFragmentDoc = new TypedDocumentString(`
    fragment RunRow on AutomationRun {
  id
  automationId
  triggerType
  status
  reason
  taskId
  sessionId
  turnId
  titleSnapshot
  createdAt
  finishedAt
  stoppedAt
}
    `, {"fragmentName":"RunRow"}) as unknown as TypedDocumentString<RunRowFragment, unknown>;
export const AutomationRowFragmentDoc = new TypedDocumentString(`
    fragment AutomationRow on Automation {
  id
  name
  description
  enabled
  nextFire
  lastAck {
    ...AckRow
  }
  nextRun {
    ...NextRunRow
  }
  runs(first: 1) {
    nodes {
      ...RunRow
    }
  }
}
    fragment RunRow on AutomationRun {
  id
  automationId
  triggerType
  status
  reason
  taskId
  sessionId
  turnId
  titleSnapshot
  createdAt
  finishedAt
  stoppedAt
}
fragment AckRow on AutomationAck {
  status
  detail
  summary
  ackedAt
}
fragment NextRunRow on NextRunIndicator {
  state
  label
  at
  relative
  webhookPath
  runningSince
  elapsedSeconds
  slowAfterSeconds
  slow
}`, {"fragmentName":"AutomationRow"}) as unknown as TypedDocumentString<AutomationRowFragment, unknown>;
export const CatalogueFieldsFragmentDoc = new TypedDocumentString(`
    fragment CatalogueFields on AgentCatalogueEntry {
  id
  name
  command
  install {
    npmPackage
    version
    binaryUrl
  }
  envKeys
  docsUrl
  verified
  installed
  installedCommand
  installJob {
    state
    update
    error
    startedAt
    endedAt
  }
}
    `, {"fragmentName":"CatalogueFields"}) as unknown as TypedDocumentString<CatalogueFieldsFragment, unknown>;
export const FileChangeFieldsFragmentDoc = new TypedDocumentString(`
    fragment FileChangeFields on FileChange {
  path
  oldPath
  status
  additions
  deletions
  binary
  tooLarge
  reviewed
  diffKey
  oldMode
  newMode
  symlink
  submodule
  untracked
}
    `, {"fragmentName":"FileChangeFields"}) as unknown as TypedDocumentString<FileChangeFieldsFragment, unknown>;
export const ReviewThreadFieldsFragmentDoc = new TypedDocumentString(`
    fragment ReviewThreadFields on ReviewThread {
  id
  repositoryId
  path
  line
  endLine
  side
  state
  origin
  anchor {
    line
    endLine
    lineText
  }
  comments {
    id
    author {
      kind
      login
    }
    body
    createdAt
  }
  resolvedBy {
    kind
    login
  }
  resolvedAt
  sentInPromptId
  sentAt
  createdAt
  updatedAt
}
    `, {"fragmentName":"ReviewThreadFields"}) as unknown as TypedDocumentString<ReviewThreadFieldsFragment, unknown>;
export const McpRegistryFieldsFragmentDoc = new TypedDocumentString(`
    fragment McpRegistryFields on McpRegistry {
  status
  fetchedAt
  checkedAt
  error
  entries {
    key
    name
    title
    description
    version
    publisher
    websiteUrl
    suggestedName
    installable
    options {
      index
      kind
      label
      url
      package
      transport
      installable
      reason
      secrets
    }
  }
}
    `, {"fragmentName":"McpRegistryFields"}) as unknown as TypedDocumentString<McpRegistryFieldsFragment, unknown>;
export const ErrorFieldsFragmentDoc = new TypedDocumentString(`
    fragment ErrorFields on Error {
  message
  code
}
    `, {"fragmentName":"ErrorFields"}) as unknown as TypedDocumentString<ErrorFieldsFragment, unknown>;
export const TaskFieldsFragmentDoc = new TypedDocumentString(`
    fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}
    `, {"fragmentName":"TaskFields"}) as unknown as TypedDocumentString<TaskFieldsFragment, unknown>;
export const MessageFieldsFragmentDoc = new TypedDocumentString(`
    fragment MessageFields on Message {
  id
  kind
  text
  data
  turnId
  seq
  createdAt
  updatedAt
  attachments {
    id
    name
    size
    contentType
    url
  }
}
    `, {"fragmentName":"MessageFields"}) as unknown as TypedDocumentString<MessageFieldsFragment, unknown>;
export const SessionFieldsFragmentDoc = new TypedDocumentString(`
    fragment SessionFields on Session {
  id
  name
  state
  isPrimary
  agentProfileId
  createdAt
}
    `, {"fragmentName":"SessionFields"}) as unknown as TypedDocumentString<SessionFieldsFragment, unknown>;
export const TurnFieldsFragmentDoc = new TypedDocumentString(`
    fragment TurnFields on Turn {
  id
  seq
  state
  stopReason
  error
}
    `, {"fragmentName":"TurnFields"}) as unknown as TypedDocumentString<TurnFieldsFragment, unknown>;
export const SessionStatusFieldsFragmentDoc = new TypedDocumentString(`
    fragment SessionStatusFields on Session {
  ...SessionFields
  completionPending
  turns {
    ...TurnFields
  }
  queuedPrompts {
    id
    text
    source
  }
}
    fragment SessionFields on Session {
  id
  name
  state
  isPrimary
  agentProfileId
  createdAt
}
fragment TurnFields on Turn {
  id
  seq
  state
  stopReason
  error
}`, {"fragmentName":"SessionStatusFields"}) as unknown as TypedDocumentString<SessionStatusFieldsFragment, unknown>;
export const ProfileFieldsFragmentDoc = new TypedDocumentString(`
    fragment ProfileFields on AgentProfile {
  id
  name
  kind
  command
  env
  supportsMcp
  permissionPolicy
  builtin
  serverWide
  available
  missingCommand
}
    `, {"fragmentName":"ProfileFields"}) as unknown as TypedDocumentString<ProfileFieldsFragment, unknown>;
export const PullRequestFieldsFragmentDoc = new TypedDocumentString(`
    fragment PullRequestFields on TaskPullRequestView {
  repositoryId
  repository
  provider
  number
  url
  state
  draft
  title
  headBranch
  headSha
  baseBranch
  reviewDecision
  mergeable
  mergeableReason
  reviewComments
  mergedAt
  refreshedAt
  checks {
    name
    status
    conclusion
    url
  }
}
    `, {"fragmentName":"PullRequestFields"}) as unknown as TypedDocumentString<PullRequestFieldsFragment, unknown>;
export const BudgetFieldsFragmentDoc = new TypedDocumentString(`
    fragment BudgetFields on Budget {
  period
  limitTokens
  limitUsd
  reached
  spent {
    tokens
    costUsd
  }
}
    `, {"fragmentName":"BudgetFields"}) as unknown as TypedDocumentString<BudgetFieldsFragment, unknown>;
export const EditorStepFieldsFragmentDoc = new TypedDocumentString(`
    fragment EditorStepFields on WorkflowStep {
  id
  name
  position
  isStartStep
  isFinalStep
  autoAdvanceRequiresSignal
  allowManualMove
  prompt
  wipLimit
  events
}
    `, {"fragmentName":"EditorStepFields"}) as unknown as TypedDocumentString<EditorStepFieldsFragment, unknown>;
export const EditorWorkflowFieldsFragmentDoc = new TypedDocumentString(`
    fragment EditorWorkflowFields on Workflow {
  id
  name
  description
  warnings
  steps {
    ...EditorStepFields
  }
}
    fragment EditorStepFields on WorkflowStep {
  id
  name
  position
  isStartStep
  isFinalStep
  autoAdvanceRequiresSignal
  allowManualMove
  prompt
  wipLimit
  events
}`, {"fragmentName":"EditorWorkflowFields"}) as unknown as TypedDocumentString<EditorWorkflowFieldsFragment, unknown>;
export const AutomationForEditDocument = new TypedDocumentString(`
    query AutomationForEdit($id: ID!) {
  automation(id: $id) {
    ...AutomationEditFields
  }
}
    fragment AutomationEditFields on Automation {
  id
  name
  description
  prompt
  titleTemplate
  agentProfileId
  destination
  workflowId
  workflowStepId
  context
  maxConcurrentRuns
  enabled
  hasWebhookSecret
  triggers {
    id
    type
    enabled
    expression
    timezone
    filters
    requireSignature
  }
  repositories {
    repositoryId
    baseBranch
  }
}`) as unknown as TypedDocumentString<AutomationForEditQuery, AutomationForEditQueryVariables>;
export const CronCheckDocument = new TypedDocumentString(`
    query CronCheck($e: String!, $tz: String!) {
  validateCron(expression: $e, timezone: $tz, count: 5) {
    valid
    error
    description
    nextFires
  }
}
    `) as unknown as TypedDocumentString<CronCheckQuery, CronCheckQueryVariables>;
export const CreateAutomationFromEditorDocument = new TypedDocumentString(`
    mutation CreateAutomationFromEditor($i: CreateAutomationInput!) {
  createAutomation(input: $i) {
    __typename
    ...ErrorFields
    ... on ValidationError {
      field
    }
    ...AutomationSaved
  }
}
    fragment AutomationEditFields on Automation {
  id
  name
  description
  prompt
  titleTemplate
  agentProfileId
  destination
  workflowId
  workflowStepId
  context
  maxConcurrentRuns
  enabled
  hasWebhookSecret
  triggers {
    id
    type
    enabled
    expression
    timezone
    filters
    requireSignature
  }
  repositories {
    repositoryId
    baseBranch
  }
}
fragment AutomationSaved on AutomationPayload {
  webhookSecret
  automation {
    ...AutomationEditFields
  }
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CreateAutomationFromEditorMutation, CreateAutomationFromEditorMutationVariables>;
export const UpdateAutomationFromEditorDocument = new TypedDocumentString(`
    mutation UpdateAutomationFromEditor($i: UpdateAutomationInput!) {
  updateAutomation(input: $i) {
    __typename
    ...ErrorFields
    ... on ValidationError {
      field
    }
    ...AutomationSaved
  }
}
    fragment AutomationEditFields on Automation {
  id
  name
  description
  prompt
  titleTemplate
  agentProfileId
  destination
  workflowId
  workflowStepId
  context
  maxConcurrentRuns
  enabled
  hasWebhookSecret
  triggers {
    id
    type
    enabled
    expression
    timezone
    filters
    requireSignature
  }
  repositories {
    repositoryId
    baseBranch
  }
}
fragment AutomationSaved on AutomationPayload {
  webhookSecret
  automation {
    ...AutomationEditFields
  }
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateAutomationFromEditorMutation, UpdateAutomationFromEditorMutationVariables>;
export const StartAutomationAuthoringDocument = new TypedDocumentString(`
    mutation StartAutomationAuthoring($i: StartAutomationAuthoringInput!) {
  startAutomationAuthoring(input: $i) {
    __typename
    ...ErrorFields
    ... on StartTaskPayload {
      task {
        id
      }
      session {
        id
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<StartAutomationAuthoringMutation, StartAutomationAuthoringMutationVariables>;
export const AuthoringChatDocument = new TypedDocumentString(`
    query AuthoringChat($task: ID!) {
  task(id: $task) {
    id
    sessions {
      id
    }
  }
  authoringDraft(taskId: $task) {
    ...AuthoringDraftFields
  }
}
    fragment AuthoringDraftFields on AuthoringDraft {
  taskId
  state
  operatorMessages
  name
  prompt
  automationId
  triggers {
    type
    expression
    timezone
    filters
  }
}`) as unknown as TypedDocumentString<AuthoringChatQuery, AuthoringChatQueryVariables>;
export const AuthoringDraftDocument = new TypedDocumentString(`
    query AuthoringDraft($task: ID!) {
  authoringDraft(taskId: $task) {
    ...AuthoringDraftFields
  }
}
    fragment AuthoringDraftFields on AuthoringDraft {
  taskId
  state
  operatorMessages
  name
  prompt
  automationId
  triggers {
    type
    expression
    timezone
    filters
  }
}`) as unknown as TypedDocumentString<AuthoringDraftQuery, AuthoringDraftQueryVariables>;
export const AutomationsDocument = new TypedDocumentString(`
    query Automations($w: ID!) {
  automations(workspaceId: $w) {
    ...AutomationRow
  }
}
    fragment RunRow on AutomationRun {
  id
  automationId
  triggerType
  status
  reason
  taskId
  sessionId
  turnId
  titleSnapshot
  createdAt
  finishedAt
  stoppedAt
}
fragment AckRow on AutomationAck {
  status
  detail
  summary
  ackedAt
}
fragment NextRunRow on NextRunIndicator {
  state
  label
  at
  relative
  webhookPath
  runningSince
  elapsedSeconds
  slowAfterSeconds
  slow
}
fragment AutomationRow on Automation {
  id
  name
  description
  enabled
  nextFire
  lastAck {
    ...AckRow
  }
  nextRun {
    ...NextRunRow
  }
  runs(first: 1) {
    nodes {
      ...RunRow
    }
  }
}`) as unknown as TypedDocumentString<AutomationsQuery, AutomationsQueryVariables>;
export const AgendaDocument = new TypedDocumentString(`
    query Agenda($w: ID!) {
  agenda(workspaceId: $w) {
    upcoming {
      nextFire
      automation {
        id
        name
      }
      trigger {
        id
        expression
        timezone
      }
    }
    recent {
      ...RunRow
    }
  }
}
    fragment RunRow on AutomationRun {
  id
  automationId
  triggerType
  status
  reason
  taskId
  sessionId
  turnId
  titleSnapshot
  createdAt
  finishedAt
  stoppedAt
}`) as unknown as TypedDocumentString<AgendaQuery, AgendaQueryVariables>;
export const AutomationRunsDocument = new TypedDocumentString(`
    query AutomationRuns($id: ID!) {
  automationRuns(automationId: $id, first: 50) {
    nodes {
      ...RunRow
    }
  }
}
    fragment RunRow on AutomationRun {
  id
  automationId
  triggerType
  status
  reason
  taskId
  sessionId
  turnId
  titleSnapshot
  createdAt
  finishedAt
  stoppedAt
}`) as unknown as TypedDocumentString<AutomationRunsQuery, AutomationRunsQueryVariables>;
export const AutomationEventsDocument = new TypedDocumentString(`
    subscription AutomationEvents($w: ID!) {
  automationEvents(workspaceId: $w) {
    kind
    automationId
    run {
      ...RunRow
    }
    nextFire
    ack {
      ...AckRow
    }
    nextRun {
      ...NextRunRow
    }
  }
}
    fragment RunRow on AutomationRun {
  id
  automationId
  triggerType
  status
  reason
  taskId
  sessionId
  turnId
  titleSnapshot
  createdAt
  finishedAt
  stoppedAt
}
fragment AckRow on AutomationAck {
  status
  detail
  summary
  ackedAt
}
fragment NextRunRow on NextRunIndicator {
  state
  label
  at
  relative
  webhookPath
  runningSince
  elapsedSeconds
  slowAfterSeconds
  slow
}`) as unknown as TypedDocumentString<AutomationEventsSubscription, AutomationEventsSubscriptionVariables>;
export const RunAutomationNowDocument = new TypedDocumentString(`
    mutation RunAutomationNow($i: RunAutomationNowInput!) {
  runAutomationNow(input: $i) {
    __typename
    ...ErrorFields
    ... on RunAutomationNowPayload {
      admission
      reason
      run {
        ...RunRow
      }
    }
  }
}
    fragment RunRow on AutomationRun {
  id
  automationId
  triggerType
  status
  reason
  taskId
  sessionId
  turnId
  titleSnapshot
  createdAt
  finishedAt
  stoppedAt
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<RunAutomationNowMutation, RunAutomationNowMutationVariables>;
export const StopRunDocument = new TypedDocumentString(`
    mutation StopRun($i: StopRunInput!) {
  stopRun(input: $i) {
    __typename
    ...ErrorFields
    ... on AutomationRunPayload {
      run {
        ...RunRow
      }
    }
  }
}
    fragment RunRow on AutomationRun {
  id
  automationId
  triggerType
  status
  reason
  taskId
  sessionId
  turnId
  titleSnapshot
  createdAt
  finishedAt
  stoppedAt
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<StopRunMutation, StopRunMutationVariables>;
export const ReackAutomationDocument = new TypedDocumentString(`
    mutation ReackAutomation($i: ReackAutomationInput!) {
  reackAutomation(input: $i) {
    __typename
    ...ErrorFields
    ... on AutomationPayload {
      automation {
        ...AutomationRow
      }
    }
  }
}
    fragment RunRow on AutomationRun {
  id
  automationId
  triggerType
  status
  reason
  taskId
  sessionId
  turnId
  titleSnapshot
  createdAt
  finishedAt
  stoppedAt
}
fragment AckRow on AutomationAck {
  status
  detail
  summary
  ackedAt
}
fragment NextRunRow on NextRunIndicator {
  state
  label
  at
  relative
  webhookPath
  runningSince
  elapsedSeconds
  slowAfterSeconds
  slow
}
fragment AutomationRow on Automation {
  id
  name
  description
  enabled
  nextFire
  lastAck {
    ...AckRow
  }
  nextRun {
    ...NextRunRow
  }
  runs(first: 1) {
    nodes {
      ...RunRow
    }
  }
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ReackAutomationMutation, ReackAutomationMutationVariables>;
export const WorkspaceRunsDocument = new TypedDocumentString(`
    query WorkspaceRuns($w: ID!, $after: String) {
  runs(workspaceId: $w, first: 100, after: $after) {
    pageInfo {
      hasNextPage
      endCursor
    }
    nodes {
      id
      automationId
    }
  }
}
    `) as unknown as TypedDocumentString<WorkspaceRunsQuery, WorkspaceRunsQueryVariables>;
export const AgentCatalogueDocument = new TypedDocumentString(`
    query AgentCatalogue {
  agentCatalogue {
    ...CatalogueFields
  }
}
    fragment CatalogueFields on AgentCatalogueEntry {
  id
  name
  command
  install {
    npmPackage
    version
    binaryUrl
  }
  envKeys
  docsUrl
  verified
  installed
  installedCommand
  installJob {
    state
    update
    error
    startedAt
    endedAt
  }
}`) as unknown as TypedDocumentString<AgentCatalogueQuery, AgentCatalogueQueryVariables>;
export const InstallAgentDocument = new TypedDocumentString(`
    mutation InstallAgent($id: String!) {
  installAgent(id: $id) {
    __typename
    ...ErrorFields
    ... on AgentInstallPayload {
      agent {
        ...CatalogueFields
      }
    }
  }
}
    fragment CatalogueFields on AgentCatalogueEntry {
  id
  name
  command
  install {
    npmPackage
    version
    binaryUrl
  }
  envKeys
  docsUrl
  verified
  installed
  installedCommand
  installJob {
    state
    update
    error
    startedAt
    endedAt
  }
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<InstallAgentMutation, InstallAgentMutationVariables>;
export const UpdateAgentDocument = new TypedDocumentString(`
    mutation UpdateAgent($id: String!) {
  updateAgent(id: $id) {
    __typename
    ...ErrorFields
    ... on AgentInstallPayload {
      agent {
        ...CatalogueFields
      }
    }
  }
}
    fragment CatalogueFields on AgentCatalogueEntry {
  id
  name
  command
  install {
    npmPackage
    version
    binaryUrl
  }
  envKeys
  docsUrl
  verified
  installed
  installedCommand
  installJob {
    state
    update
    error
    startedAt
    endedAt
  }
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateAgentMutation, UpdateAgentMutationVariables>;
export const TaskChangesDocument = new TypedDocumentString(`
    query TaskChanges($id: ID!, $first: Int!, $after: String) {
  task(id: $id) {
    id
    changes {
      reason
      repositories {
        repositoryId
        name
        branch
        baseBranch
        ahead
        behind
        note
        stats {
          files
          additions
          deletions
        }
        files(first: $first, after: $after) {
          totalCount
          pageInfo {
            hasNextPage
            endCursor
          }
          nodes {
            ...FileChangeFields
          }
        }
      }
    }
  }
}
    fragment FileChangeFields on FileChange {
  path
  oldPath
  status
  additions
  deletions
  binary
  tooLarge
  reviewed
  diffKey
  oldMode
  newMode
  symlink
  submodule
  untracked
}`) as unknown as TypedDocumentString<TaskChangesQuery, TaskChangesQueryVariables>;
export const FileHunksDocument = new TypedDocumentString(`
    query FileHunks($id: ID!, $paths: [String!], $scope: ChangeScope, $context: Int!, $large: Boolean!) {
  task(id: $id) {
    id
    changes(scope: $scope, paths: $paths) {
      repositories {
        repositoryId
        files(first: 10) {
          nodes {
            ...FileChangeFields
            invalidUtf8
            submoduleChange {
              oldCommit
              newCommit
            }
            hunks(context: $context, includeLarge: $large) {
              header
              oldStart
              oldLines
              newStart
              newLines
              lines {
                kind
                oldNumber
                newNumber
                text
              }
            }
          }
        }
      }
    }
  }
}
    fragment FileChangeFields on FileChange {
  path
  oldPath
  status
  additions
  deletions
  binary
  tooLarge
  reviewed
  diffKey
  oldMode
  newMode
  symlink
  submodule
  untracked
}`) as unknown as TypedDocumentString<FileHunksQuery, FileHunksQueryVariables>;
export const ReviewThreadsDocument = new TypedDocumentString(`
    query ReviewThreads($id: ID!) {
  task(id: $id) {
    id
    reviewThreads {
      ...ReviewThreadFields
    }
  }
}
    fragment ReviewThreadFields on ReviewThread {
  id
  repositoryId
  path
  line
  endLine
  side
  state
  origin
  anchor {
    line
    endLine
    lineText
  }
  comments {
    id
    author {
      kind
      login
    }
    body
    createdAt
  }
  resolvedBy {
    kind
    login
  }
  resolvedAt
  sentInPromptId
  sentAt
  createdAt
  updatedAt
}`) as unknown as TypedDocumentString<ReviewThreadsQuery, ReviewThreadsQueryVariables>;
export const AddReviewCommentDocument = new TypedDocumentString(`
    mutation AddReviewComment($i: AddReviewCommentInput!) {
  addReviewComment(input: $i) {
    __typename
    ...ErrorFields
    ... on ReviewThreadPayload {
      thread {
        ...ReviewThreadFields
      }
    }
  }
}
    fragment ReviewThreadFields on ReviewThread {
  id
  repositoryId
  path
  line
  endLine
  side
  state
  origin
  anchor {
    line
    endLine
    lineText
  }
  comments {
    id
    author {
      kind
      login
    }
    body
    createdAt
  }
  resolvedBy {
    kind
    login
  }
  resolvedAt
  sentInPromptId
  sentAt
  createdAt
  updatedAt
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<AddReviewCommentMutation, AddReviewCommentMutationVariables>;
export const ReplyToReviewThreadDocument = new TypedDocumentString(`
    mutation ReplyToReviewThread($i: ReplyToReviewThreadInput!) {
  replyToReviewThread(input: $i) {
    __typename
    ...ErrorFields
    ... on ReviewThreadPayload {
      thread {
        ...ReviewThreadFields
      }
    }
  }
}
    fragment ReviewThreadFields on ReviewThread {
  id
  repositoryId
  path
  line
  endLine
  side
  state
  origin
  anchor {
    line
    endLine
    lineText
  }
  comments {
    id
    author {
      kind
      login
    }
    body
    createdAt
  }
  resolvedBy {
    kind
    login
  }
  resolvedAt
  sentInPromptId
  sentAt
  createdAt
  updatedAt
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ReplyToReviewThreadMutation, ReplyToReviewThreadMutationVariables>;
export const ResolveReviewThreadDocument = new TypedDocumentString(`
    mutation ResolveReviewThread($id: ID!) {
  resolveReviewThread(threadId: $id) {
    __typename
    ...ErrorFields
    ... on ReviewThreadPayload {
      thread {
        ...ReviewThreadFields
      }
    }
  }
}
    fragment ReviewThreadFields on ReviewThread {
  id
  repositoryId
  path
  line
  endLine
  side
  state
  origin
  anchor {
    line
    endLine
    lineText
  }
  comments {
    id
    author {
      kind
      login
    }
    body
    createdAt
  }
  resolvedBy {
    kind
    login
  }
  resolvedAt
  sentInPromptId
  sentAt
  createdAt
  updatedAt
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ResolveReviewThreadMutation, ResolveReviewThreadMutationVariables>;
export const ReopenReviewThreadDocument = new TypedDocumentString(`
    mutation ReopenReviewThread($id: ID!) {
  reopenReviewThread(threadId: $id) {
    __typename
    ...ErrorFields
    ... on ReviewThreadPayload {
      thread {
        ...ReviewThreadFields
      }
    }
  }
}
    fragment ReviewThreadFields on ReviewThread {
  id
  repositoryId
  path
  line
  endLine
  side
  state
  origin
  anchor {
    line
    endLine
    lineText
  }
  comments {
    id
    author {
      kind
      login
    }
    body
    createdAt
  }
  resolvedBy {
    kind
    login
  }
  resolvedAt
  sentInPromptId
  sentAt
  createdAt
  updatedAt
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ReopenReviewThreadMutation, ReopenReviewThreadMutationVariables>;
export const DeleteReviewCommentDocument = new TypedDocumentString(`
    mutation DeleteReviewComment($id: ID!) {
  deleteReviewComment(commentId: $id) {
    __typename
    ...ErrorFields
    ... on ReviewThreadPayload {
      threadDeleted
      thread {
        ...ReviewThreadFields
      }
    }
  }
}
    fragment ReviewThreadFields on ReviewThread {
  id
  repositoryId
  path
  line
  endLine
  side
  state
  origin
  anchor {
    line
    endLine
    lineText
  }
  comments {
    id
    author {
      kind
      login
    }
    body
    createdAt
  }
  resolvedBy {
    kind
    login
  }
  resolvedAt
  sentInPromptId
  sentAt
  createdAt
  updatedAt
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DeleteReviewCommentMutation, DeleteReviewCommentMutationVariables>;
export const SendReviewToAgentDocument = new TypedDocumentString(`
    mutation SendReviewToAgent($i: SendReviewToAgentInput!) {
  sendReviewToAgent(input: $i) {
    __typename
    ...ErrorFields
    ... on SendReviewPayload {
      promptId
      threads {
        ...ReviewThreadFields
      }
    }
  }
}
    fragment ReviewThreadFields on ReviewThread {
  id
  repositoryId
  path
  line
  endLine
  side
  state
  origin
  anchor {
    line
    endLine
    lineText
  }
  comments {
    id
    author {
      kind
      login
    }
    body
    createdAt
  }
  resolvedBy {
    kind
    login
  }
  resolvedAt
  sentInPromptId
  sentAt
  createdAt
  updatedAt
}
fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<SendReviewToAgentMutation, SendReviewToAgentMutationVariables>;
export const SetFileReviewedDocument = new TypedDocumentString(`
    mutation SetFileReviewed($i: SetFileReviewedInput!) {
  setFileReviewed(input: $i) {
    __typename
    ...ErrorFields
    ... on FileReviewedPayload {
      repositoryId
      path
      reviewed
      diffKey
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<SetFileReviewedMutation, SetFileReviewedMutationVariables>;
export const DiscardChangesDocument = new TypedDocumentString(`
    mutation DiscardChanges($i: DiscardChangesInput!) {
  discardChanges(input: $i) {
    __typename
    ...ErrorFields
    ... on DiscardChangesPayload {
      repositoryId
      paths
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DiscardChangesMutation, DiscardChangesMutationVariables>;
export const CodeHostConnectionsDocument = new TypedDocumentString(`
    query CodeHostConnections($w: ID!) {
  githubConnection(workspaceId: $w) {
    login
    host
    connectedAt
  }
  gitlabConnection(workspaceId: $w) {
    username
    baseUrl
    host
    connectedAt
  }
}
    `) as unknown as TypedDocumentString<CodeHostConnectionsQuery, CodeHostConnectionsQueryVariables>;
export const ConnectGithubDocument = new TypedDocumentString(`
    mutation ConnectGithub($i: ConnectGithubInput!) {
  connectGithub(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ConnectGithubMutation, ConnectGithubMutationVariables>;
export const DisconnectGithubDocument = new TypedDocumentString(`
    mutation DisconnectGithub($w: ID!) {
  disconnectGithub(input: {workspaceId: $w}) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DisconnectGithubMutation, DisconnectGithubMutationVariables>;
export const ConnectGitlabDocument = new TypedDocumentString(`
    mutation ConnectGitlab($i: ConnectGitlabInput!) {
  connectGitlab(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ConnectGitlabMutation, ConnectGitlabMutationVariables>;
export const DisconnectGitlabDocument = new TypedDocumentString(`
    mutation DisconnectGitlab($w: ID!) {
  disconnectGitlab(input: {workspaceId: $w}) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DisconnectGitlabMutation, DisconnectGitlabMutationVariables>;
export const McpServersDocument = new TypedDocumentString(`
    query McpServers($w: ID!) {
  mcpServers(workspaceId: $w) {
    id
    name
    kind
    url
    headers
    package
    command
    args
    env
    serverWide
  }
}
    `) as unknown as TypedDocumentString<McpServersQuery, McpServersQueryVariables>;
export const McpServerTemplatesDocument = new TypedDocumentString(`
    query McpServerTemplates {
  mcpServerTemplates {
    key
    name
    title
    description
    publisher
    kind
    url
    package
    headers
    secrets
  }
}
    `) as unknown as TypedDocumentString<McpServerTemplatesQuery, McpServerTemplatesQueryVariables>;
export const CreateMcpServerDocument = new TypedDocumentString(`
    mutation CreateMcpServer($i: CreateMcpServerInput!) {
  createMcpServer(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CreateMcpServerMutation, CreateMcpServerMutationVariables>;
export const UpdateMcpServerDocument = new TypedDocumentString(`
    mutation UpdateMcpServer($i: UpdateMcpServerInput!) {
  updateMcpServer(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateMcpServerMutation, UpdateMcpServerMutationVariables>;
export const DeleteMcpServerDocument = new TypedDocumentString(`
    mutation DeleteMcpServer($id: ID!) {
  deleteMcpServer(mcpServerId: $id) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DeleteMcpServerMutation, DeleteMcpServerMutationVariables>;
export const SelectedMcpServersDocument = new TypedDocumentString(`
    query SelectedMcpServers($s: McpScope!, $t: ID!) {
  selectedMcpServers(scope: $s, targetId: $t) {
    id
  }
}
    `) as unknown as TypedDocumentString<SelectedMcpServersQuery, SelectedMcpServersQueryVariables>;
export const SelectMcpServerDocument = new TypedDocumentString(`
    mutation SelectMcpServer($i: McpSelectionInput!) {
  selectMcpServer(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<SelectMcpServerMutation, SelectMcpServerMutationVariables>;
export const DeselectMcpServerDocument = new TypedDocumentString(`
    mutation DeselectMcpServer($i: McpSelectionInput!) {
  deselectMcpServer(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DeselectMcpServerMutation, DeselectMcpServerMutationVariables>;
export const McpRegistryDocument = new TypedDocumentString(`
    query McpRegistry($w: ID!) {
  mcpRegistry(workspaceId: $w) {
    ...McpRegistryFields
  }
}
    fragment McpRegistryFields on McpRegistry {
  status
  fetchedAt
  checkedAt
  error
  entries {
    key
    name
    title
    description
    version
    publisher
    websiteUrl
    suggestedName
    installable
    options {
      index
      kind
      label
      url
      package
      transport
      installable
      reason
      secrets
    }
  }
}`) as unknown as TypedDocumentString<McpRegistryQuery, McpRegistryQueryVariables>;
export const RefreshMcpRegistryDocument = new TypedDocumentString(`
    mutation RefreshMcpRegistry($w: ID!) {
  refreshMcpRegistry(workspaceId: $w) {
    ...McpRegistryFields
  }
}
    fragment McpRegistryFields on McpRegistry {
  status
  fetchedAt
  checkedAt
  error
  entries {
    key
    name
    title
    description
    version
    publisher
    websiteUrl
    suggestedName
    installable
    options {
      index
      kind
      label
      url
      package
      transport
      installable
      reason
      secrets
    }
  }
}`) as unknown as TypedDocumentString<RefreshMcpRegistryMutation, RefreshMcpRegistryMutationVariables>;
export const AddMcpRegistryEntryDocument = new TypedDocumentString(`
    mutation AddMcpRegistryEntry($i: AddMcpRegistryEntryInput!) {
  addMcpRegistryEntry(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<AddMcpRegistryEntryMutation, AddMcpRegistryEntryMutationVariables>;
export const SessionMcpServersDocument = new TypedDocumentString(`
    query SessionMcpServers($s: ID!) {
  sessionMcpServers(sessionId: $s) {
    sessionId
    desiredRevision
    appliedRevision
    servers {
      id
      name
      kind
      origins {
        scope
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<SessionMcpServersQuery, SessionMcpServersQueryVariables>;
export const NotificationChannelsDocument = new TypedDocumentString(`
    query NotificationChannels($w: ID!) {
  notificationChannels(workspaceId: $w) {
    id
    name
    service
    target
    events
    enabled
    status
    lastAttemptAt
    lastDeliveredAt
    lastError
    lastDurationMs
    pendingDeliveries
    failedDeliveries
  }
}
    `) as unknown as TypedDocumentString<NotificationChannelsQuery, NotificationChannelsQueryVariables>;
export const CreateNotificationChannelDocument = new TypedDocumentString(`
    mutation CreateNotificationChannel($i: CreateNotificationChannelInput!) {
  createNotificationChannel(input: $i) {
    __typename
    ...ErrorFields
    ... on NotificationChannelPayload {
      channel {
        id
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CreateNotificationChannelMutation, CreateNotificationChannelMutationVariables>;
export const UpdateNotificationChannelDocument = new TypedDocumentString(`
    mutation UpdateNotificationChannel($i: UpdateNotificationChannelInput!) {
  updateNotificationChannel(input: $i) {
    __typename
    ...ErrorFields
    ... on NotificationChannelPayload {
      channel {
        id
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateNotificationChannelMutation, UpdateNotificationChannelMutationVariables>;
export const DeleteNotificationChannelDocument = new TypedDocumentString(`
    mutation DeleteNotificationChannel($id: ID!) {
  deleteNotificationChannel(id: $id) {
    __typename
    ...ErrorFields
    ... on NotificationChannelPayload {
      channel {
        id
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DeleteNotificationChannelMutation, DeleteNotificationChannelMutationVariables>;
export const TestNotificationChannelDocument = new TypedDocumentString(`
    mutation TestNotificationChannel($id: ID!) {
  testNotificationChannel(id: $id) {
    __typename
    ...ErrorFields
    ... on TestNotificationPayload {
      delivered
      error
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<TestNotificationChannelMutation, TestNotificationChannelMutationVariables>;
export const BootDocument = new TypedDocumentString(`
    query Boot {
  workspaces {
    id
    name
    defaultWorkflowId
  }
}
    `) as unknown as TypedDocumentString<BootQuery, BootQueryVariables>;
export const CreateWorkspaceDocument = new TypedDocumentString(`
    mutation CreateWorkspace($name: String!) {
  createWorkspace(input: {name: $name}) {
    __typename
    ...ErrorFields
    ... on WorkspacePayload {
      workspace {
        id
        name
        defaultWorkflowId
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CreateWorkspaceMutation, CreateWorkspaceMutationVariables>;
export const WorkspaceDocument = new TypedDocumentString(`
    query Workspace($w: ID!) {
  workflows(workspaceId: $w) {
    id
    name
    steps {
      id
      name
      position
      isStartStep
      isFinalStep
      autoAdvanceRequiresSignal
      allowManualMove
      autoStartsAgent
    }
  }
  agentProfiles(workspaceId: $w) {
    id
    name
    kind
    available
    missingCommand
  }
}
    `) as unknown as TypedDocumentString<WorkspaceQuery, WorkspaceQueryVariables>;
export const TasksDocument = new TypedDocumentString(`
    query Tasks($w: ID!, $step: ID, $first: Int!, $after: String) {
  tasks(
    workspaceId: $w
    workflowStepId: $step
    first: $first
    after: $after
    archived: false
  ) {
    nodes {
      ...TaskFields
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}`) as unknown as TypedDocumentString<TasksQuery, TasksQueryVariables>;
export const TaskDocument = new TypedDocumentString(`
    query Task($id: ID!) {
  task(id: $id) {
    ...TaskFields
    prompt
    executorProfileId
    lastTurnError {
      message
      endedAt
    }
    repositories {
      repositoryId
      name
      baseBranch
      branch
      sourceBranch
      pullRequest
      url
    }
    sessions {
      ...SessionFields
    }
  }
}
    fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}
fragment SessionFields on Session {
  id
  name
  state
  isPrimary
  agentProfileId
  createdAt
}`) as unknown as TypedDocumentString<TaskQuery, TaskQueryVariables>;
export const SessionDocument = new TypedDocumentString(`
    query Session($id: ID!, $page: Int!) {
  session(id: $id) {
    ...SessionStatusFields
    messages(first: $page, order: DESC) {
      nodes {
        ...MessageFields
      }
      pageInfo {
        hasNextPage
      }
    }
  }
}
    fragment SessionFields on Session {
  id
  name
  state
  isPrimary
  agentProfileId
  createdAt
}
fragment MessageFields on Message {
  id
  kind
  text
  data
  turnId
  seq
  createdAt
  updatedAt
  attachments {
    id
    name
    size
    contentType
    url
  }
}
fragment TurnFields on Turn {
  id
  seq
  state
  stopReason
  error
}
fragment SessionStatusFields on Session {
  ...SessionFields
  completionPending
  turns {
    ...TurnFields
  }
  queuedPrompts {
    id
    text
    source
  }
}`) as unknown as TypedDocumentString<SessionQuery, SessionQueryVariables>;
export const OlderMessagesDocument = new TypedDocumentString(`
    query OlderMessages($id: ID!, $page: Int!, $before: ID!) {
  session(id: $id) {
    id
    messages(first: $page, order: DESC, beforeMessageId: $before) {
      nodes {
        ...MessageFields
      }
      pageInfo {
        hasNextPage
      }
    }
  }
}
    fragment MessageFields on Message {
  id
  kind
  text
  data
  turnId
  seq
  createdAt
  updatedAt
  attachments {
    id
    name
    size
    contentType
    url
  }
}`) as unknown as TypedDocumentString<OlderMessagesQuery, OlderMessagesQueryVariables>;
export const SessionStatusDocument = new TypedDocumentString(`
    query SessionStatus($id: ID!) {
  session(id: $id) {
    ...SessionStatusFields
  }
}
    fragment SessionFields on Session {
  id
  name
  state
  isPrimary
  agentProfileId
  createdAt
}
fragment TurnFields on Turn {
  id
  seq
  state
  stopReason
  error
}
fragment SessionStatusFields on Session {
  ...SessionFields
  completionPending
  turns {
    ...TurnFields
  }
  queuedPrompts {
    id
    text
    source
  }
}`) as unknown as TypedDocumentString<SessionStatusQuery, SessionStatusQueryVariables>;
export const PendingPermissionsDocument = new TypedDocumentString(`
    query PendingPermissions($w: ID!, $t: ID) {
  pendingPermissions(workspaceId: $w, taskId: $t) {
    id
    taskId
    sessionId
    title
    toolCall
    options {
      optionId
      name
      kind
    }
  }
}
    `) as unknown as TypedDocumentString<PendingPermissionsQuery, PendingPermissionsQueryVariables>;
export const TaskEventsDocument = new TypedDocumentString(`
    subscription TaskEvents($w: ID!) {
  taskEvents(workspaceId: $w) {
    kind
    task {
      ...TaskFields
    }
    changedFiles {
      repositoryId
      path
    }
    reviewThread {
      ...ReviewThreadFields
    }
  }
}
    fragment ReviewThreadFields on ReviewThread {
  id
  repositoryId
  path
  line
  endLine
  side
  state
  origin
  anchor {
    line
    endLine
    lineText
  }
  comments {
    id
    author {
      kind
      login
    }
    body
    createdAt
  }
  resolvedBy {
    kind
    login
  }
  resolvedAt
  sentInPromptId
  sentAt
  createdAt
  updatedAt
}
fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}`) as unknown as TypedDocumentString<TaskEventsSubscription, TaskEventsSubscriptionVariables>;
export const SessionEventsDocument = new TypedDocumentString(`
    subscription SessionEvents($s: ID!) {
  sessionEvents(sessionId: $s) {
    kind
    session {
      id
      state
      completionPending
    }
    message {
      ...MessageFields
    }
    turn {
      ...TurnFields
    }
  }
}
    fragment MessageFields on Message {
  id
  kind
  text
  data
  turnId
  seq
  createdAt
  updatedAt
  attachments {
    id
    name
    size
    contentType
    url
  }
}
fragment TurnFields on Turn {
  id
  seq
  state
  stopReason
  error
}`) as unknown as TypedDocumentString<SessionEventsSubscription, SessionEventsSubscriptionVariables>;
export const CreateTaskDocument = new TypedDocumentString(`
    mutation CreateTask($i: CreateTaskInput!) {
  createTask(input: $i) {
    __typename
    ...ErrorFields
    ... on CreateTaskPayload {
      task {
        ...TaskFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}`) as unknown as TypedDocumentString<CreateTaskMutation, CreateTaskMutationVariables>;
export const MoveTaskDocument = new TypedDocumentString(`
    mutation MoveTask($i: MoveTaskInput!) {
  moveTask(input: $i) {
    __typename
    ...ErrorFields
    ... on TaskPayload {
      task {
        ...TaskFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}`) as unknown as TypedDocumentString<MoveTaskMutation, MoveTaskMutationVariables>;
export const UpdateTaskDocument = new TypedDocumentString(`
    mutation UpdateTask($i: UpdateTaskInput!) {
  updateTask(input: $i) {
    __typename
    ...ErrorFields
    ... on TaskPayload {
      task {
        ...TaskFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}`) as unknown as TypedDocumentString<UpdateTaskMutation, UpdateTaskMutationVariables>;
export const ArchiveTaskDocument = new TypedDocumentString(`
    mutation ArchiveTask($id: ID!) {
  archiveTask(taskId: $id) {
    __typename
    ...ErrorFields
    ... on ArchiveTaskPayload {
      alreadyArchived
      task {
        ...TaskFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}`) as unknown as TypedDocumentString<ArchiveTaskMutation, ArchiveTaskMutationVariables>;
export const StartTaskDocument = new TypedDocumentString(`
    mutation StartTask($i: StartTaskInput!) {
  startTask(input: $i) {
    __typename
    ...ErrorFields
    ... on StartTaskPayload {
      task {
        ...TaskFields
      }
      session {
        ...SessionFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}
fragment SessionFields on Session {
  id
  name
  state
  isPrimary
  agentProfileId
  createdAt
}`) as unknown as TypedDocumentString<StartTaskMutation, StartTaskMutationVariables>;
export const SendMessageDocument = new TypedDocumentString(`
    mutation SendMessage($i: SendMessageInput!) {
  sendMessage(input: $i) {
    __typename
    ...ErrorFields
    ... on SendMessagePayload {
      session {
        ...SessionFields
      }
      queuedPromptId
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment SessionFields on Session {
  id
  name
  state
  isPrimary
  agentProfileId
  createdAt
}`) as unknown as TypedDocumentString<SendMessageMutation, SendMessageMutationVariables>;
export const StopTaskDocument = new TypedDocumentString(`
    mutation StopTask($id: ID!) {
  stopTask(taskId: $id) {
    __typename
    ...ErrorFields
    ... on StopTaskPayload {
      status
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<StopTaskMutation, StopTaskMutationVariables>;
export const MarkStepCompleteDocument = new TypedDocumentString(`
    mutation MarkStepComplete($s: ID!) {
  markStepComplete(sessionId: $s) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<MarkStepCompleteMutation, MarkStepCompleteMutationVariables>;
export const ResolvePermissionDocument = new TypedDocumentString(`
    mutation ResolvePermission($i: ResolvePermissionInput!) {
  resolvePermission(input: $i) {
    __typename
    ...ErrorFields
    ... on ResolvePermissionPayload {
      request {
        id
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ResolvePermissionMutation, ResolvePermissionMutationVariables>;
export const PendingQuestionsDocument = new TypedDocumentString(`
    query PendingQuestions($w: ID!, $t: ID, $after: String) {
  pendingQuestions(workspaceId: $w, taskId: $t, after: $after, limit: 200) {
    nodes {
      id
      taskId
      sessionId
      context
      questions
      state
    }
    nextCursor
  }
}
    `) as unknown as TypedDocumentString<PendingQuestionsQuery, PendingQuestionsQueryVariables>;
export const AnswerClarificationDocument = new TypedDocumentString(`
    mutation AnswerClarification($i: AnswerClarificationInput!) {
  answerClarification(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<AnswerClarificationMutation, AnswerClarificationMutationVariables>;
export const RejectClarificationDocument = new TypedDocumentString(`
    mutation RejectClarification($id: ID!) {
  rejectClarification(clarificationId: $id) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<RejectClarificationMutation, RejectClarificationMutationVariables>;
export const ParentQuestionDocument = new TypedDocumentString(`
    query ParentQuestion($id: ID!) {
  task(id: $id) {
    pendingParentQuestion {
      id
      context
      questions
    }
  }
}
    `) as unknown as TypedDocumentString<ParentQuestionQuery, ParentQuestionQueryVariables>;
export const FilePreviewDocument = new TypedDocumentString(`
    query FilePreview($taskId: ID!, $path: String!, $repository: String) {
  filePreview(taskId: $taskId, path: $path, repository: $repository) {
    __typename
    ... on TextFilePreview {
      path
      size
      text
    }
    ... on ImageFilePreview {
      path
      size
      mimeType
      dataBase64
    }
    ... on FilePreviewUnavailable {
      path
      reason
      message
    }
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<FilePreviewQuery, FilePreviewQueryVariables>;
export const TaskPlacementChoicesDocument = new TypedDocumentString(`
    query TaskPlacementChoices($w: ID!) {
  repositories(workspaceId: $w) {
    id
    name
    defaultBranch
  }
  executorProfiles(workspaceId: $w) {
    id
    name
    kind
    capabilities
    unavailableReason
  }
  workspaces {
    id
    lastTaskChoice {
      repositories {
        repositoryId
        baseBranch
      }
      executorProfileId
      agentProfileId
    }
  }
}
    `) as unknown as TypedDocumentString<TaskPlacementChoicesQuery, TaskPlacementChoicesQueryVariables>;
export const RepositoryBranchesDocument = new TypedDocumentString(`
    query RepositoryBranches($w: ID!, $first: Int!) {
  repositories(workspaceId: $w) {
    id
    branches(first: $first)
  }
}
    `) as unknown as TypedDocumentString<RepositoryBranchesQuery, RepositoryBranchesQueryVariables>;
export const UpdateRepositoryBaseBranchDocument = new TypedDocumentString(`
    mutation UpdateRepositoryBaseBranch($i: UpdateRepositoryBaseBranchInput!) {
  updateRepositoryBaseBranch(input: $i) {
    __typename
    ...ErrorFields
    ... on UpdateRepositoryBaseBranchPayload {
      baseBranch
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateRepositoryBaseBranchMutation, UpdateRepositoryBaseBranchMutationVariables>;
export const AddWorkspaceSourcesDocument = new TypedDocumentString(`
    mutation AddWorkspaceSources($i: AddWorkspaceSourcesInput!) {
  addWorkspaceSources(input: $i) {
    __typename
    ...ErrorFields
    ... on AddWorkspaceSourcesPayload {
      changed
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<AddWorkspaceSourcesMutation, AddWorkspaceSourcesMutationVariables>;
export const AgentProfilesDocument = new TypedDocumentString(`
    query AgentProfiles($w: ID!) {
  agentProfiles(workspaceId: $w) {
    ...ProfileFields
  }
}
    fragment ProfileFields on AgentProfile {
  id
  name
  kind
  command
  env
  supportsMcp
  permissionPolicy
  builtin
  serverWide
  available
  missingCommand
}`) as unknown as TypedDocumentString<AgentProfilesQuery, AgentProfilesQueryVariables>;
export const CreateAgentProfileDocument = new TypedDocumentString(`
    mutation CreateAgentProfile($i: CreateAgentProfileInput!) {
  createAgentProfile(input: $i) {
    __typename
    ...ErrorFields
    ... on CreateAgentProfilePayload {
      agentProfile {
        ...ProfileFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment ProfileFields on AgentProfile {
  id
  name
  kind
  command
  env
  supportsMcp
  permissionPolicy
  builtin
  serverWide
  available
  missingCommand
}`) as unknown as TypedDocumentString<CreateAgentProfileMutation, CreateAgentProfileMutationVariables>;
export const UpdateAgentProfileDocument = new TypedDocumentString(`
    mutation UpdateAgentProfile($i: UpdateAgentProfileInput!) {
  updateAgentProfile(input: $i) {
    __typename
    ...ErrorFields
    ... on AgentProfilePayload {
      agentProfile {
        ...ProfileFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment ProfileFields on AgentProfile {
  id
  name
  kind
  command
  env
  supportsMcp
  permissionPolicy
  builtin
  serverWide
  available
  missingCommand
}`) as unknown as TypedDocumentString<UpdateAgentProfileMutation, UpdateAgentProfileMutationVariables>;
export const DeleteAgentProfileDocument = new TypedDocumentString(`
    mutation DeleteAgentProfile($id: ID!) {
  deleteAgentProfile(agentProfileId: $id) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DeleteAgentProfileMutation, DeleteAgentProfileMutationVariables>;
export const UpdateWorkspaceDocument = new TypedDocumentString(`
    mutation UpdateWorkspace($i: UpdateWorkspaceInput!) {
  updateWorkspace(input: $i) {
    __typename
    ...ErrorFields
    ... on WorkspacePayload {
      workspace {
        id
        name
        defaultWorkflowId
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateWorkspaceMutation, UpdateWorkspaceMutationVariables>;
export const SecretsDocument = new TypedDocumentString(`
    query Secrets($w: ID!) {
  secrets(workspaceId: $w) {
    id
    name
    createdAt
  }
}
    `) as unknown as TypedDocumentString<SecretsQuery, SecretsQueryVariables>;
export const CreateSecretDocument = new TypedDocumentString(`
    mutation CreateSecret($i: CreateSecretInput!) {
  createSecret(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CreateSecretMutation, CreateSecretMutationVariables>;
export const ReplaceSecretDocument = new TypedDocumentString(`
    mutation ReplaceSecret($i: ReplaceSecretInput!) {
  replaceSecret(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ReplaceSecretMutation, ReplaceSecretMutationVariables>;
export const DeleteSecretDocument = new TypedDocumentString(`
    mutation DeleteSecret($id: ID!) {
  deleteSecret(secretId: $id) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DeleteSecretMutation, DeleteSecretMutationVariables>;
export const AccessTokensDocument = new TypedDocumentString(`
    query AccessTokens {
  accessTokens {
    id
    name
    createdAt
    lastUsedAt
    revokedAt
  }
}
    `) as unknown as TypedDocumentString<AccessTokensQuery, AccessTokensQueryVariables>;
export const CreateAccessTokenDocument = new TypedDocumentString(`
    mutation CreateAccessToken($name: String!) {
  createAccessToken(input: {name: $name}) {
    __typename
    ...ErrorFields
    ... on CreateAccessTokenPayload {
      token
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CreateAccessTokenMutation, CreateAccessTokenMutationVariables>;
export const RevokeAccessTokenDocument = new TypedDocumentString(`
    mutation RevokeAccessToken($id: ID!) {
  revokeAccessToken(id: $id) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<RevokeAccessTokenMutation, RevokeAccessTokenMutationVariables>;
export const ExecutorProfilesDocument = new TypedDocumentString(`
    query ExecutorProfiles($w: ID!) {
  executorProfiles(workspaceId: $w) {
    id
    name
    kind
    builtin
    serverWide
    image
    pullPolicy
    dockerfile
    env
    mounts {
      source
      target
      readOnly
    }
    cpus
    memoryMb
    pids
    network
    user
    prepareScript
    capabilities
    unavailableReason
  }
}
    `) as unknown as TypedDocumentString<ExecutorProfilesQuery, ExecutorProfilesQueryVariables>;
export const TestExecutorProfileDocument = new TypedDocumentString(`
    mutation TestExecutorProfile($id: ID!) {
  testExecutorProfile(executorProfileId: $id) {
    __typename
    ... on ExecutorTestPayload {
      ok
      worker
      findings
      error
    }
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<TestExecutorProfileMutation, TestExecutorProfileMutationVariables>;
export const CreateExecutorProfileDocument = new TypedDocumentString(`
    mutation CreateExecutorProfile($i: CreateExecutorProfileInput!) {
  createExecutorProfile(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CreateExecutorProfileMutation, CreateExecutorProfileMutationVariables>;
export const UpdateExecutorProfileDocument = new TypedDocumentString(`
    mutation UpdateExecutorProfile($i: UpdateExecutorProfileInput!) {
  updateExecutorProfile(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateExecutorProfileMutation, UpdateExecutorProfileMutationVariables>;
export const DeleteExecutorProfileDocument = new TypedDocumentString(`
    mutation DeleteExecutorProfile($id: ID!) {
  deleteExecutorProfile(executorProfileId: $id) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DeleteExecutorProfileMutation, DeleteExecutorProfileMutationVariables>;
export const RepositoriesDocument = new TypedDocumentString(`
    query Repositories($w: ID!) {
  repositories(workspaceId: $w) {
    id
    name
    path
    defaultBranch
  }
}
    `) as unknown as TypedDocumentString<RepositoriesQuery, RepositoriesQueryVariables>;
export const CreateRepositoryDocument = new TypedDocumentString(`
    mutation CreateRepository($i: CreateRepositoryInput!) {
  createRepository(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CreateRepositoryMutation, CreateRepositoryMutationVariables>;
export const WorkspaceEventsDocument = new TypedDocumentString(`
    subscription WorkspaceEvents($w: ID!) {
  workspaceEvents(workspaceId: $w) {
    kind
    id
  }
}
    `) as unknown as TypedDocumentString<WorkspaceEventsSubscription, WorkspaceEventsSubscriptionVariables>;
export const ShipTaskDocument = new TypedDocumentString(`
    query ShipTask($id: ID!) {
  account {
    gitIdentity {
      name
      email
    }
  }
  task(id: $id) {
    id
    title
    autoMerge
    fixFailingChecks {
      enabled
      maxRounds
      stopped
    }
    checkFixRounds {
      id
      repositoryId
      round
      checkNames
      state
      createdAt
    }
    pullRequests {
      ...PullRequestFields
    }
    repositories {
      repositoryId
      name
      baseBranch
      branch
      sourceBranch
      codeHost
    }
  }
}
    fragment PullRequestFields on TaskPullRequestView {
  repositoryId
  repository
  provider
  number
  url
  state
  draft
  title
  headBranch
  headSha
  baseBranch
  reviewDecision
  mergeable
  mergeableReason
  reviewComments
  mergedAt
  refreshedAt
  checks {
    name
    status
    conclusion
    url
  }
}`) as unknown as TypedDocumentString<ShipTaskQuery, ShipTaskQueryVariables>;
export const ShipChangesDocument = new TypedDocumentString(`
    query ShipChanges($id: ID!) {
  task(id: $id) {
    id
    changes(scope: UNCOMMITTED) {
      reason
      repositories {
        repositoryId
        ahead
        behind
        note
        files(first: 500) {
          totalCount
          nodes {
            path
            oldPath
            status
          }
        }
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ShipChangesQuery, ShipChangesQueryVariables>;
export const SetGitIdentityDocument = new TypedDocumentString(`
    mutation SetGitIdentity($i: UpdateAccountInput!) {
  updateAccount(input: $i) {
    __typename
    ...ErrorFields
    ... on AccountPayload {
      account {
        gitIdentity {
          name
          email
        }
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<SetGitIdentityMutation, SetGitIdentityMutationVariables>;
export const CommitTaskChangesDocument = new TypedDocumentString(`
    mutation CommitTaskChanges($i: CommitTaskChangesInput!) {
  commitTaskChanges(input: $i) {
    __typename
    ...ErrorFields
    ... on CommitPayload {
      commit {
        repositoryId
        sha
        message
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CommitTaskChangesMutation, CommitTaskChangesMutationVariables>;
export const SuggestCommitMessageDocument = new TypedDocumentString(`
    mutation SuggestCommitMessage($taskId: ID!, $repositoryId: ID) {
  suggestCommitMessage(taskId: $taskId, repositoryId: $repositoryId) {
    __typename
    ...ErrorFields
    ... on SuggestedMessagePayload {
      message
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<SuggestCommitMessageMutation, SuggestCommitMessageMutationVariables>;
export const PushTaskBranchDocument = new TypedDocumentString(`
    mutation PushTaskBranch($i: PushTaskBranchInput!) {
  pushTaskBranch(input: $i) {
    __typename
    ...ErrorFields
    ... on PushPayload {
      push {
        repositoryId
        branch
        sha
        changed
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<PushTaskBranchMutation, PushTaskBranchMutationVariables>;
export const OpenPullRequestDocument = new TypedDocumentString(`
    mutation OpenPullRequest($i: OpenPullRequestInput!) {
  openPullRequest(input: $i) {
    __typename
    ...ErrorFields
    ... on PullRequestPayload {
      pullRequest {
        ...PullRequestFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment PullRequestFields on TaskPullRequestView {
  repositoryId
  repository
  provider
  number
  url
  state
  draft
  title
  headBranch
  headSha
  baseBranch
  reviewDecision
  mergeable
  mergeableReason
  reviewComments
  mergedAt
  refreshedAt
  checks {
    name
    status
    conclusion
    url
  }
}`) as unknown as TypedDocumentString<OpenPullRequestMutation, OpenPullRequestMutationVariables>;
export const MergePullRequestDocument = new TypedDocumentString(`
    mutation MergePullRequest($i: MergePullRequestInput!) {
  mergePullRequest(input: $i) {
    __typename
    ...ErrorFields
    ... on PullRequestPayload {
      pullRequest {
        ...PullRequestFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment PullRequestFields on TaskPullRequestView {
  repositoryId
  repository
  provider
  number
  url
  state
  draft
  title
  headBranch
  headSha
  baseBranch
  reviewDecision
  mergeable
  mergeableReason
  reviewComments
  mergedAt
  refreshedAt
  checks {
    name
    status
    conclusion
    url
  }
}`) as unknown as TypedDocumentString<MergePullRequestMutation, MergePullRequestMutationVariables>;
export const MergeTaskBranchDocument = new TypedDocumentString(`
    mutation MergeTaskBranch($i: MergeTaskBranchInput!) {
  mergeTaskBranch(input: $i) {
    __typename
    ...ErrorFields
    ... on MergeTaskBranchPayload {
      sha
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<MergeTaskBranchMutation, MergeTaskBranchMutationVariables>;
export const UpdateTaskBranchDocument = new TypedDocumentString(`
    mutation UpdateTaskBranch($i: UpdateTaskBranchInput!) {
  updateTaskBranch(input: $i) {
    __typename
    ...ErrorFields
    ... on UpdateTaskBranchPayload {
      repositoryId
      status
      head
      conflicts
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateTaskBranchMutation, UpdateTaskBranchMutationVariables>;
export const UsageDocument = new TypedDocumentString(`
    query Usage($w: ID!, $from: DateTime!, $to: DateTime!, $by: UsageGroupBy!) {
  usage(workspaceId: $w, from: $from, to: $to, groupBy: $by) {
    key
    turns
    completedTurns
    failedTurns
    inputTokens
    outputTokens
    cacheReadTokens
    cacheWriteTokens
    costUsd
  }
}
    `) as unknown as TypedDocumentString<UsageQuery, UsageQueryVariables>;
export const TaskBudgetDocument = new TypedDocumentString(`
    query TaskBudget($id: ID!) {
  task(id: $id) {
    id
    budget {
      ...BudgetFields
    }
  }
}
    fragment BudgetFields on Budget {
  period
  limitTokens
  limitUsd
  reached
  spent {
    tokens
    costUsd
  }
}`) as unknown as TypedDocumentString<TaskBudgetQuery, TaskBudgetQueryVariables>;
export const SetTaskBudgetDocument = new TypedDocumentString(`
    mutation SetTaskBudget($id: ID!, $budget: BudgetInput!) {
  updateTask(input: {taskId: $id, budget: $budget}) {
    __typename
    ...ErrorFields
    ... on TaskPayload {
      task {
        ...TaskFields
        budget {
          ...BudgetFields
        }
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment TaskFields on Task {
  id
  title
  state
  autopilot
  parentId
  pendingAction
  workflowId
  workflowStepId
  externalId
  archivedAt
  createdAt
  updatedAt
  blockReason
  placement {
    executor
    worker
    boxId
    waitingFor
  }
  usage {
    inputTokens
    outputTokens
    costUsd
  }
  changeStats {
    files
    additions
    deletions
  }
  activity {
    agentProfileId
    agentName
    lastActivityAt
    preview
    hasRun
    lastTurnFailed
    needsAnswer
  }
  pullRequests {
    repositoryId
    number
    url
    state
    draft
    checks {
      status
      conclusion
    }
  }
}
fragment BudgetFields on Budget {
  period
  limitTokens
  limitUsd
  reached
  spent {
    tokens
    costUsd
  }
}`) as unknown as TypedDocumentString<SetTaskBudgetMutation, SetTaskBudgetMutationVariables>;
export const TurnContextDocument = new TypedDocumentString(`
    query TurnContext($id: ID!) {
  session(id: $id) {
    id
    turns {
      id
      seq
      usage {
        contextUsed
        contextSize
        model
      }
    }
  }
}
    `) as unknown as TypedDocumentString<TurnContextQuery, TurnContextQueryVariables>;
export const AutomationBudgetDocument = new TypedDocumentString(`
    query AutomationBudget($id: ID!) {
  automation(id: $id) {
    id
    budget {
      ...BudgetFields
    }
  }
}
    fragment BudgetFields on Budget {
  period
  limitTokens
  limitUsd
  reached
  spent {
    tokens
    costUsd
  }
}`) as unknown as TypedDocumentString<AutomationBudgetQuery, AutomationBudgetQueryVariables>;
export const SetAutomationBudgetDocument = new TypedDocumentString(`
    mutation SetAutomationBudget($i: SetAutomationBudgetInput!) {
  setAutomationBudget(input: $i) {
    __typename
    ...ErrorFields
    ... on AutomationBudgetPayload {
      budget {
        ...BudgetFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment BudgetFields on Budget {
  period
  limitTokens
  limitUsd
  reached
  spent {
    tokens
    costUsd
  }
}`) as unknown as TypedDocumentString<SetAutomationBudgetMutation, SetAutomationBudgetMutationVariables>;
export const WorkflowEditorDocument = new TypedDocumentString(`
    query WorkflowEditor($w: ID!) {
  workflows(workspaceId: $w) {
    ...EditorWorkflowFields
  }
}
    fragment EditorStepFields on WorkflowStep {
  id
  name
  position
  isStartStep
  isFinalStep
  autoAdvanceRequiresSignal
  allowManualMove
  prompt
  wipLimit
  events
}
fragment EditorWorkflowFields on Workflow {
  id
  name
  description
  warnings
  steps {
    ...EditorStepFields
  }
}`) as unknown as TypedDocumentString<WorkflowEditorQuery, WorkflowEditorQueryVariables>;
export const CreateWorkflowDocument = new TypedDocumentString(`
    mutation CreateWorkflow($i: CreateWorkflowInput!) {
  createWorkflow(input: $i) {
    __typename
    ...ErrorFields
    ... on WorkflowPayload {
      workflow {
        ...EditorWorkflowFields
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}
fragment EditorStepFields on WorkflowStep {
  id
  name
  position
  isStartStep
  isFinalStep
  autoAdvanceRequiresSignal
  allowManualMove
  prompt
  wipLimit
  events
}
fragment EditorWorkflowFields on Workflow {
  id
  name
  description
  warnings
  steps {
    ...EditorStepFields
  }
}`) as unknown as TypedDocumentString<CreateWorkflowMutation, CreateWorkflowMutationVariables>;
export const UpdateWorkflowDocument = new TypedDocumentString(`
    mutation UpdateWorkflow($i: UpdateWorkflowInput!) {
  updateWorkflow(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateWorkflowMutation, UpdateWorkflowMutationVariables>;
export const DeleteWorkflowDocument = new TypedDocumentString(`
    mutation DeleteWorkflow($id: ID!) {
  deleteWorkflow(workflowId: $id) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DeleteWorkflowMutation, DeleteWorkflowMutationVariables>;
export const CreateWorkflowStepDocument = new TypedDocumentString(`
    mutation CreateWorkflowStep($i: CreateWorkflowStepInput!) {
  createWorkflowStep(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<CreateWorkflowStepMutation, CreateWorkflowStepMutationVariables>;
export const UpdateWorkflowStepDocument = new TypedDocumentString(`
    mutation UpdateWorkflowStep($i: UpdateWorkflowStepInput!) {
  updateWorkflowStep(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<UpdateWorkflowStepMutation, UpdateWorkflowStepMutationVariables>;
export const DeleteWorkflowStepDocument = new TypedDocumentString(`
    mutation DeleteWorkflowStep($id: ID!, $to: ID) {
  deleteWorkflowStep(stepId: $id, moveTasksToStepId: $to) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<DeleteWorkflowStepMutation, DeleteWorkflowStepMutationVariables>;
export const ReorderWorkflowStepsDocument = new TypedDocumentString(`
    mutation ReorderWorkflowSteps($i: ReorderWorkflowStepsInput!) {
  reorderWorkflowSteps(input: $i) {
    __typename
    ...ErrorFields
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ReorderWorkflowStepsMutation, ReorderWorkflowStepsMutationVariables>;
export const ExportWorkflowDocument = new TypedDocumentString(`
    query ExportWorkflow($id: ID!) {
  exportWorkflow(workflowId: $id)
}
    `) as unknown as TypedDocumentString<ExportWorkflowQuery, ExportWorkflowQueryVariables>;
export const ImportWorkflowDocument = new TypedDocumentString(`
    mutation ImportWorkflow($i: ImportWorkflowInput!) {
  importWorkflow(input: $i) {
    __typename
    ...ErrorFields
    ... on WorkflowPayload {
      workflow {
        id
      }
    }
  }
}
    fragment ErrorFields on Error {
  message
  code
}`) as unknown as TypedDocumentString<ImportWorkflowMutation, ImportWorkflowMutationVariables>;