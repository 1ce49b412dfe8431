// Where a task works: the workspace's repositories with their branches, the executor profiles, the choice the
// person made last (the new-task form starts from it), and changing an idle task's repositories and bases.
import { graphql } from "../gql";
import type { TaskPlacementChoicesQuery } from "../gql/graphql";

export const TASK_PLACEMENT_CHOICES = graphql(`
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
`);

// Branches are read from git per repository, so only when a repository is picked. The schema has no
// `repository(id)` yet: the list is read, and its entry picked.
export const REPOSITORY_BRANCHES = graphql(`
  query RepositoryBranches($w: ID!, $first: Int!) {
    repositories(workspaceId: $w) {
      id
      branches(first: $first)
    }
  }
`);

export const UPDATE_REPOSITORY_BASE_BRANCH = graphql(`
  mutation UpdateRepositoryBaseBranch($i: UpdateRepositoryBaseBranchInput!) {
    updateRepositoryBaseBranch(input: $i) {
      __typename
      ...ErrorFields
      ... on UpdateRepositoryBaseBranchPayload {
        baseBranch
      }
    }
  }
`);

export const ADD_WORKSPACE_SOURCES = graphql(`
  mutation AddWorkspaceSources($i: AddWorkspaceSourcesInput!) {
    addWorkspaceSources(input: $i) {
      __typename
      ...ErrorFields
      ... on AddWorkspaceSourcesPayload {
        changed
      }
    }
  }
`);

export type PlacementRepository = TaskPlacementChoicesQuery["repositories"][number];
export type PlacementExecutor = TaskPlacementChoicesQuery["executorProfiles"][number];
export type TaskChoice = NonNullable<TaskPlacementChoicesQuery["workspaces"][number]["lastTaskChoice"]>;
