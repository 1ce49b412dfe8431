// Operations of the workflow editor: a workspace's workflows with every step field, step and workflow writes, YAML.
import { graphql } from "../gql";
import type { WorkflowEditorQuery } from "../gql/graphql";

graphql(`
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
`);

graphql(`
  fragment EditorWorkflowFields on Workflow {
    id
    name
    description
    warnings
    steps {
      ...EditorStepFields
    }
  }
`);

export const WORKFLOW_EDITOR = graphql(`
  query WorkflowEditor($w: ID!) {
    workflows(workspaceId: $w) {
      ...EditorWorkflowFields
    }
  }
`);

export const CREATE_WORKFLOW = graphql(`
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
`);

export const UPDATE_WORKFLOW = graphql(`
  mutation UpdateWorkflow($i: UpdateWorkflowInput!) {
    updateWorkflow(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const DELETE_WORKFLOW = graphql(`
  mutation DeleteWorkflow($id: ID!) {
    deleteWorkflow(workflowId: $id) {
      __typename
      ...ErrorFields
    }
  }
`);

export const CREATE_WORKFLOW_STEP = graphql(`
  mutation CreateWorkflowStep($i: CreateWorkflowStepInput!) {
    createWorkflowStep(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const UPDATE_WORKFLOW_STEP = graphql(`
  mutation UpdateWorkflowStep($i: UpdateWorkflowStepInput!) {
    updateWorkflowStep(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const DELETE_WORKFLOW_STEP = graphql(`
  mutation DeleteWorkflowStep($id: ID!, $to: ID) {
    deleteWorkflowStep(stepId: $id, moveTasksToStepId: $to) {
      __typename
      ...ErrorFields
    }
  }
`);

export const REORDER_WORKFLOW_STEPS = graphql(`
  mutation ReorderWorkflowSteps($i: ReorderWorkflowStepsInput!) {
    reorderWorkflowSteps(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const EXPORT_WORKFLOW = graphql(`
  query ExportWorkflow($id: ID!) {
    exportWorkflow(workflowId: $id)
  }
`);

export const IMPORT_WORKFLOW = graphql(`
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
`);

export type EditorWorkflow = WorkflowEditorQuery["workflows"][number];
export type EditorStep = EditorWorkflow["steps"][number];
