// Operations of the code-host connections settings: a workspace's GitHub and GitLab connections. Tokens only
// ever flow in; the answers name the user, the host and (GitLab) the instance.
import { graphql } from "../gql";
import type { CodeHostConnectionsQuery } from "../gql/graphql";

export const CODE_HOST_CONNECTIONS = graphql(`
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
`);

export const CONNECT_GITHUB = graphql(`
  mutation ConnectGithub($i: ConnectGithubInput!) {
    connectGithub(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const DISCONNECT_GITHUB = graphql(`
  mutation DisconnectGithub($w: ID!) {
    disconnectGithub(input: { workspaceId: $w }) {
      __typename
      ...ErrorFields
    }
  }
`);

export const CONNECT_GITLAB = graphql(`
  mutation ConnectGitlab($i: ConnectGitlabInput!) {
    connectGitlab(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const DISCONNECT_GITLAB = graphql(`
  mutation DisconnectGitlab($w: ID!) {
    disconnectGitlab(input: { workspaceId: $w }) {
      __typename
      ...ErrorFields
    }
  }
`);

export type Connections = CodeHostConnectionsQuery;
