// Operations of the settings pages: workspaces, agent and executor profiles, repositories, secrets and
// personal access tokens.
import { graphql } from "../gql";
import type { AccessTokensQuery, AgentProfilesQuery, ExecutorProfilesQuery, RepositoriesQuery, SecretsQuery } from "../gql/graphql";

graphql(`
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
`);

export const AGENT_PROFILES = graphql(`
  query AgentProfiles($w: ID!) {
    agentProfiles(workspaceId: $w) {
      ...ProfileFields
    }
  }
`);

export const CREATE_AGENT_PROFILE = graphql(`
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
`);

export const UPDATE_AGENT_PROFILE = graphql(`
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
`);

export const DELETE_AGENT_PROFILE = graphql(`
  mutation DeleteAgentProfile($id: ID!) {
    deleteAgentProfile(agentProfileId: $id) {
      __typename
      ...ErrorFields
    }
  }
`);

export const UPDATE_WORKSPACE = graphql(`
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
`);

export const SECRETS = graphql(`
  query Secrets($w: ID!) {
    secrets(workspaceId: $w) {
      id
      name
      createdAt
    }
  }
`);

export const CREATE_SECRET = graphql(`
  mutation CreateSecret($i: CreateSecretInput!) {
    createSecret(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const REPLACE_SECRET = graphql(`
  mutation ReplaceSecret($i: ReplaceSecretInput!) {
    replaceSecret(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const DELETE_SECRET = graphql(`
  mutation DeleteSecret($id: ID!) {
    deleteSecret(secretId: $id) {
      __typename
      ...ErrorFields
    }
  }
`);

export const ACCESS_TOKENS = graphql(`
  query AccessTokens {
    accessTokens {
      id
      name
      createdAt
      lastUsedAt
      revokedAt
    }
  }
`);

export const CREATE_ACCESS_TOKEN = graphql(`
  mutation CreateAccessToken($name: String!) {
    createAccessToken(input: { name: $name }) {
      __typename
      ...ErrorFields
      ... on CreateAccessTokenPayload {
        token
      }
    }
  }
`);

export const REVOKE_ACCESS_TOKEN = graphql(`
  mutation RevokeAccessToken($id: ID!) {
    revokeAccessToken(id: $id) {
      __typename
      ...ErrorFields
    }
  }
`);

export type ProfileRow = AgentProfilesQuery["agentProfiles"][number];
export type SecretRow = SecretsQuery["secrets"][number];
export type TokenRow = AccessTokensQuery["accessTokens"][number];

export const EXECUTOR_PROFILES = graphql(`
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
`);

export const TEST_EXECUTOR_PROFILE = graphql(`
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
`);

export const CREATE_EXECUTOR_PROFILE = graphql(`
  mutation CreateExecutorProfile($i: CreateExecutorProfileInput!) {
    createExecutorProfile(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const UPDATE_EXECUTOR_PROFILE = graphql(`
  mutation UpdateExecutorProfile($i: UpdateExecutorProfileInput!) {
    updateExecutorProfile(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const DELETE_EXECUTOR_PROFILE = graphql(`
  mutation DeleteExecutorProfile($id: ID!) {
    deleteExecutorProfile(executorProfileId: $id) {
      __typename
      ...ErrorFields
    }
  }
`);

export const REPOSITORIES = graphql(`
  query Repositories($w: ID!) {
    repositories(workspaceId: $w) {
      id
      name
      path
      defaultBranch
    }
  }
`);

export const CREATE_REPOSITORY = graphql(`
  mutation CreateRepository($i: CreateRepositoryInput!) {
    createRepository(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export type ExecutorRow = ExecutorProfilesQuery["executorProfiles"][number];
export type RepositoryRow = RepositoriesQuery["repositories"][number];

// Which part of the workspace's configuration changed (kind and id only): the pages showing it refetch.
export const WORKSPACE_EVENTS = graphql(`
  subscription WorkspaceEvents($w: ID!) {
    workspaceEvents(workspaceId: $w) {
      kind
      id
    }
  }
`);
