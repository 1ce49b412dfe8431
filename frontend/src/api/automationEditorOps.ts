// Operations of the automation editor: an automation's settings, the schedule check and the saves.
import { graphql } from "../gql";
import type { AuthoringDraftQuery, AutomationForEditQuery, CronCheckQuery } from "../gql/graphql";

graphql(`
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
`);

export const AUTOMATION_FOR_EDIT = graphql(`
  query AutomationForEdit($id: ID!) {
    automation(id: $id) {
      ...AutomationEditFields
    }
  }
`);

export const CRON_CHECK = graphql(`
  query CronCheck($e: String!, $tz: String!) {
    validateCron(expression: $e, timezone: $tz, count: 5) {
      valid
      error
      description
      nextFires
    }
  }
`);

graphql(`
  fragment AutomationSaved on AutomationPayload {
    webhookSecret
    automation {
      ...AutomationEditFields
    }
  }
`);

export const CREATE_AUTOMATION = graphql(`
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
`);

export const UPDATE_AUTOMATION = graphql(`
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
`);

export type EditedAutomation = AutomationForEditQuery["automation"];
export type CronCheck = CronCheckQuery["validateCron"];

graphql(`
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
`);

export const START_AUTHORING = graphql(`
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
`);

export const AUTHORING_CHAT = graphql(`
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
`);

export const AUTHORING_DRAFT = graphql(`
  query AuthoringDraft($task: ID!) {
    authoringDraft(taskId: $task) {
      ...AuthoringDraftFields
    }
  }
`);

export type Authoring = AuthoringDraftQuery["authoringDraft"];
