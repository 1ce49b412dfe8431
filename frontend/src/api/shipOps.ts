// Shipping a task's changes (DESIGN.md section 10): what the Ship panel reads (the task's pull requests, fix
// rounds and settings, each repository's code host, the uncommitted files) and the mutations it sends.
import { graphql } from "../gql";
import type { PullRequestFieldsFragment, ShipChangesQuery, ShipTaskQuery } from "../gql/graphql";

graphql(`
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
`);

export const SHIP_TASK = graphql(`
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
`);

// Read apart from SHIP_TASK: a worktree whose worker does not answer fails this query, not the PR card.
export const SHIP_CHANGES = graphql(`
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
`);

export const SET_GIT_IDENTITY = graphql(`
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
`);

export const COMMIT_TASK_CHANGES = graphql(`
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
`);

export const SUGGEST_COMMIT_MESSAGE = graphql(`
  mutation SuggestCommitMessage($taskId: ID!, $repositoryId: ID) {
    suggestCommitMessage(taskId: $taskId, repositoryId: $repositoryId) {
      __typename
      ...ErrorFields
      ... on SuggestedMessagePayload {
        message
      }
    }
  }
`);

export const PUSH_TASK_BRANCH = graphql(`
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
`);

export const OPEN_PULL_REQUEST = graphql(`
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
`);

export const MERGE_PULL_REQUEST = graphql(`
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
`);

export const MERGE_TASK_BRANCH = graphql(`
  mutation MergeTaskBranch($i: MergeTaskBranchInput!) {
    mergeTaskBranch(input: $i) {
      __typename
      ...ErrorFields
      ... on MergeTaskBranchPayload {
        sha
      }
    }
  }
`);

export const UPDATE_TASK_BRANCH = graphql(`
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
`);

export type PullRequest = PullRequestFieldsFragment;
export type PullRequestCheck = PullRequest["checks"][number];
export type ShipTask = ShipTaskQuery["task"];
export type ShipRepository = ShipTask["repositories"][number];
export type FixRound = ShipTask["checkFixRounds"][number];
export type GitIdentity = NonNullable<ShipTaskQuery["account"]["gitIdentity"]>;
export type PendingRepository = ShipChangesQuery["task"]["changes"]["repositories"][number];
export type PendingFile = PendingRepository["files"]["nodes"][number];
export type { MergeMethod, UpdateStrategy } from "../gql/graphql";
