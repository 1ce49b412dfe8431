// Operations of usage, cost and budgets: the Stats page's totals, a task's spend and budget, the context window of a
// session's turns, and an automation's monthly budget.
import { graphql } from "../gql";
import type { AutomationBudgetQuery, UsageQuery } from "../gql/graphql";

graphql(`
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
`);

export const USAGE = graphql(`
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
`);

export const TASK_BUDGET = graphql(`
  query TaskBudget($id: ID!) {
    task(id: $id) {
      id
      budget {
        ...BudgetFields
      }
    }
  }
`);

export const SET_TASK_BUDGET = graphql(`
  mutation SetTaskBudget($id: ID!, $budget: BudgetInput!) {
    updateTask(input: { taskId: $id, budget: $budget }) {
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
`);

// The context window the newest turn ended with (or reported so far, while it runs).
export const TURN_CONTEXT = graphql(`
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
`);

export const AUTOMATION_BUDGET = graphql(`
  query AutomationBudget($id: ID!) {
    automation(id: $id) {
      id
      budget {
        ...BudgetFields
      }
    }
  }
`);

export const SET_AUTOMATION_BUDGET = graphql(`
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
`);

export type UsageRow = UsageQuery["usage"][number];
export type BudgetView = NonNullable<AutomationBudgetQuery["automation"]["budget"]>;
