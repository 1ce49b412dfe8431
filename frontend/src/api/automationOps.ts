// Operations of the automation pages: the workspace's automations with their health, the agenda, one
// automation's runs, the live automationEvents feed, and Run now / Stop run / re-ack.
import { graphql } from "../gql";
import type { AgendaQuery, AutomationEventsSubscription, AutomationRowFragment, RunRowFragment } from "../gql/graphql";

graphql(`
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
`);

graphql(`
  fragment AckRow on AutomationAck {
    status
    detail
    summary
    ackedAt
  }
`);

graphql(`
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
`);

graphql(`
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
`);

export const AUTOMATIONS = graphql(`
  query Automations($w: ID!) {
    automations(workspaceId: $w) {
      ...AutomationRow
    }
  }
`);

export const AGENDA = graphql(`
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
`);

export const AUTOMATION_RUNS = graphql(`
  query AutomationRuns($id: ID!) {
    automationRuns(automationId: $id, first: 50) {
      nodes {
        ...RunRow
      }
    }
  }
`);

export const AUTOMATION_EVENTS = graphql(`
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
`);

export const RUN_AUTOMATION_NOW = graphql(`
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
`);

export const STOP_RUN = graphql(`
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
`);

export const REACK_AUTOMATION = graphql(`
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
`);

export type AutomationRow = AutomationRowFragment;
export type RunRow = RunRowFragment;
export type Agenda = AgendaQuery["agenda"];
export type AutomationEvent = AutomationEventsSubscription["automationEvents"];

/** A page of the workspace's runs (newest first), to find a run's automation for an old /runs/<id> link. */
export const WORKSPACE_RUNS = graphql(`
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
`);
