// The GraphQL operations the client sends, in one place.
import { ERROR_FIELDS } from "./graphql";

export const TASK_FIELDS = `id title state autopilot parentId pendingAction workflowId workflowStepId
  externalId archivedAt createdAt updatedAt blockReason`;

const SESSION_FIELDS = "id name state isPrimary agentProfileId createdAt";
const MESSAGE_FIELDS = "id kind text data turnId seq createdAt updatedAt";
const TURN_FIELDS = "id seq state stopReason error";

export const BOOT = `query Boot { workspaces { id name defaultWorkflowId } }`;

export const CREATE_WORKSPACE = `mutation CreateWorkspace($name: String!) {
  createWorkspace(input: { name: $name }) { ${ERROR_FIELDS} ... on WorkspacePayload { workspace { id name defaultWorkflowId } } }
}`;

export const WORKSPACE = `query Workspace($w: ID!) {
  workflows(workspaceId: $w) { id name steps { id name position isStartStep isFinalStep autoAdvanceRequiresSignal allowManualMove } }
  agentProfiles(workspaceId: $w) { id name kind available missingCommand }
}`;

export const TASKS = `query Tasks($w: ID!, $after: String) {
  tasks(workspaceId: $w, first: 500, after: $after, archived: false) {
    nodes { ${TASK_FIELDS} }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const TASK = `query Task($id: ID!) {
  task(id: $id) { ${TASK_FIELDS} prompt sessions { ${SESSION_FIELDS} } }
}`;

/** Replaced by the optional session fields this server has (see sessionOp). */
const SESSION_EXTRA = "__SESSION_EXTRA__";

export function sessionOp(query: string, extra: string[]): string {
  return query.split(SESSION_EXTRA).join(extra.join(" "));
}

export const SESSION = `query Session($id: ID!) {
  session(id: $id) {
    ${SESSION_FIELDS} ${SESSION_EXTRA}
    turns { ${TURN_FIELDS} }
    queuedPrompts { id text source }
    messages(first: 500, last: 500) { nodes { ${MESSAGE_FIELDS} } }
  }
}`;

export const SESSION_STATUS = `query SessionStatus($id: ID!) {
  session(id: $id) { ${SESSION_FIELDS} ${SESSION_EXTRA} turns { ${TURN_FIELDS} } queuedPrompts { id text source } }
}`;

export const PENDING_PERMISSIONS = `query PendingPermissions($w: ID!, $t: ID) {
  pendingPermissions(workspaceId: $w, taskId: $t) { id taskId sessionId title toolCall options { optionId name kind } }
}`;

export const TASK_EVENTS = `subscription TaskEvents($w: ID!) { taskEvents(workspaceId: $w) { kind task { ${TASK_FIELDS} } } }`;

export const SESSION_EVENTS = `subscription SessionEvents($s: ID!) {
  sessionEvents(sessionId: $s) {
    kind
    session { id state ${SESSION_EXTRA} }
    message { ${MESSAGE_FIELDS} }
    turn { ${TURN_FIELDS} }
  }
}`;

export const CREATE_TASK = `mutation CreateTask($i: CreateTaskInput!) {
  createTask(input: $i) { ${ERROR_FIELDS} ... on CreateTaskPayload { task { ${TASK_FIELDS} } } }
}`;

export const MOVE_TASK = `mutation MoveTask($i: MoveTaskInput!) {
  moveTask(input: $i) { ${ERROR_FIELDS} ... on TaskPayload { task { ${TASK_FIELDS} } } }
}`;

export const UPDATE_TASK = `mutation UpdateTask($i: UpdateTaskInput!) {
  updateTask(input: $i) { ${ERROR_FIELDS} ... on TaskPayload { task { ${TASK_FIELDS} } } }
}`;

export const ARCHIVE_TASK = `mutation ArchiveTask($id: ID!) {
  archiveTask(taskId: $id) { ${ERROR_FIELDS} ... on TaskPayload { task { ${TASK_FIELDS} } } }
}`;

export const START_TASK = `mutation StartTask($i: StartTaskInput!) {
  startTask(input: $i) { ${ERROR_FIELDS} ... on StartTaskPayload { task { ${TASK_FIELDS} } session { ${SESSION_FIELDS} } } }
}`;

export const SEND_MESSAGE = `mutation SendMessage($i: SendMessageInput!) {
  sendMessage(input: $i) { ${ERROR_FIELDS} ... on SendMessagePayload { session { ${SESSION_FIELDS} } queuedPromptId } }
}`;

export const STOP_TASK = `mutation StopTask($id: ID!) {
  stopTask(taskId: $id) { ${ERROR_FIELDS} ... on StopTaskPayload { status } }
}`;

export const RESOLVE_PERMISSION = `mutation ResolvePermission($i: ResolvePermissionInput!) {
  resolvePermission(input: $i) { ${ERROR_FIELDS} ... on ResolvePermissionPayload { request { id } } }
}`;

/** Which optional parts of the API this server has (later backend issues add them). */
export const FEATURES = `query Features {
  query: __type(name: "Query") { fields { name } }
  mutation: __type(name: "Mutation") { fields { name } }
  task: __type(name: "Task") { fields { name } }
  session: __type(name: "Session") { fields { name } }
}`;
