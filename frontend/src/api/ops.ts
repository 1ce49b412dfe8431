// The GraphQL operations the client sends, in one place. Each `graphql(...)` document is checked
// against ../schema.graphql and typed by `npm run codegen` (src/gql/); a literal string, so codegen can read it.
import { graphql } from "../gql";
import type {
  BootQuery,
  MessageFieldsFragment,
  PendingPermissionsQuery,
  SessionFieldsFragment,
  SessionState,
  SessionStatusFieldsFragment,
  TaskEventsSubscription,
  TaskFieldsFragment,
  TaskQuery,
  TurnFieldsFragment,
  WorkspaceQuery,
} from "../gql/graphql";

graphql(`
  fragment ErrorFields on Error {
    message
    code
  }
`);

graphql(`
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
`);

graphql(`
  fragment SessionFields on Session {
    id
    name
    state
    isPrimary
    agentProfileId
    createdAt
  }
`);

graphql(`
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
`);

graphql(`
  fragment TurnFields on Turn {
    id
    seq
    state
    stopReason
    error
  }
`);

graphql(`
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
`);

export const BOOT = graphql(`
  query Boot {
    workspaces {
      id
      name
      defaultWorkflowId
    }
  }
`);

export const CREATE_WORKSPACE = graphql(`
  mutation CreateWorkspace($name: String!) {
    createWorkspace(input: { name: $name }) {
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
`);

export const WORKSPACE = graphql(`
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
`);

// One page of live tasks, newest first: the sidebar's (no step) or one board column's. Pages are small
// (TASK_PAGE in state/app.ts): a workspace of thousands shows after one page per visible column.
export const TASKS = graphql(`
  query Tasks($w: ID!, $step: ID, $first: Int!, $after: String) {
    tasks(workspaceId: $w, workflowStepId: $step, first: $first, after: $after, archived: false) {
      nodes {
        ...TaskFields
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

export const TASK = graphql(`
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
`);

// A transcript loads newest first, a page at a time: the newest page with the session, older ones as the
// reader scrolls up (TRANSCRIPT_PAGE in hooks/useSession.ts).
export const SESSION = graphql(`
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
`);

export const OLDER_MESSAGES = graphql(`
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
`);

export const SESSION_STATUS = graphql(`
  query SessionStatus($id: ID!) {
    session(id: $id) {
      ...SessionStatusFields
    }
  }
`);

export const PENDING_PERMISSIONS = graphql(`
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
`);

export const TASK_EVENTS = graphql(`
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
`);

export const SESSION_EVENTS = graphql(`
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
`);

export const CREATE_TASK = graphql(`
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
`);

export const MOVE_TASK = graphql(`
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
`);

export const UPDATE_TASK = graphql(`
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
`);

export const ARCHIVE_TASK = graphql(`
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
`);

export const START_TASK = graphql(`
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
`);

export const SEND_MESSAGE = graphql(`
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
`);

export const STOP_TASK = graphql(`
  mutation StopTask($id: ID!) {
    stopTask(taskId: $id) {
      __typename
      ...ErrorFields
      ... on StopTaskPayload {
        status
      }
    }
  }
`);

export const MARK_STEP_COMPLETE = graphql(`
  mutation MarkStepComplete($s: ID!) {
    markStepComplete(sessionId: $s) {
      __typename
      ...ErrorFields
    }
  }
`);

export const RESOLVE_PERMISSION = graphql(`
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
`);

// Operator clarifications (ask_user_question_kandev) and what an autopilot child waits on.
// `questions` is JSON: [{id, prompt, title?, options?: [{label, description?}]}].
export const PENDING_QUESTIONS = graphql(`
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
`);

export const ANSWER_CLARIFICATION = graphql(`
  mutation AnswerClarification($i: AnswerClarificationInput!) {
    answerClarification(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const REJECT_CLARIFICATION = graphql(`
  mutation RejectClarification($id: ID!) {
    rejectClarification(clarificationId: $id) {
      __typename
      ...ErrorFields
    }
  }
`);

export const PARENT_QUESTION = graphql(`
  query ParentQuestion($id: ID!) {
    task(id: $id) {
      pendingParentQuestion {
        id
        context
        questions
      }
    }
  }
`);

// A rich-output file block's content, fetched only when the reader asks for it (a file can be up to 1 MiB).
export const FILE_PREVIEW = graphql(`
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
`);

// The names the app uses for what these operations return: derived from the generated types, never written by hand.
export type { SessionState } from "../gql/graphql";
export type Workspace = BootQuery["workspaces"][number];
export type Workflow = WorkspaceQuery["workflows"][number];
export type WorkflowStep = Workflow["steps"][number];
export type AgentProfile = WorkspaceQuery["agentProfiles"][number];
export type Task = TaskFieldsFragment;
export type TaskDetail = TaskQuery["task"];
export type TaskEvent = TaskEventsSubscription["taskEvents"];
export type SessionSummary = SessionFieldsFragment;
export type Message = MessageFieldsFragment;
export type Turn = TurnFieldsFragment;
export type QueuedPrompt = SessionStatusFieldsFragment["queuedPrompts"][number];
export type PermissionRequest = PendingPermissionsQuery["pendingPermissions"][number];

export const TERMINAL_SESSION_STATES: readonly SessionState[] = ["COMPLETED", "FAILED", "CANCELLED"];
