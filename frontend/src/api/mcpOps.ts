// Operations of the MCP servers settings page: definitions, the curated templates, and selections.
import { graphql } from "../gql";
import type { McpServersQuery, McpServerTemplatesQuery } from "../gql/graphql";

export const MCP_SERVERS = graphql(`
  query McpServers($w: ID!) {
    mcpServers(workspaceId: $w) {
      id
      name
      kind
      url
      headers
      package
      command
      args
      env
      serverWide
    }
  }
`);

export const MCP_SERVER_TEMPLATES = graphql(`
  query McpServerTemplates {
    mcpServerTemplates {
      key
      name
      title
      description
      publisher
      kind
      url
      package
      headers
      secrets
    }
  }
`);

export const CREATE_MCP_SERVER = graphql(`
  mutation CreateMcpServer($i: CreateMcpServerInput!) {
    createMcpServer(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const UPDATE_MCP_SERVER = graphql(`
  mutation UpdateMcpServer($i: UpdateMcpServerInput!) {
    updateMcpServer(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const DELETE_MCP_SERVER = graphql(`
  mutation DeleteMcpServer($id: ID!) {
    deleteMcpServer(mcpServerId: $id) {
      __typename
      ...ErrorFields
    }
  }
`);

export type McpServerRow = McpServersQuery["mcpServers"][number];
export type McpTemplateRow = McpServerTemplatesQuery["mcpServerTemplates"][number];

export const SELECTED_MCP_SERVERS = graphql(`
  query SelectedMcpServers($s: McpScope!, $t: ID!) {
    selectedMcpServers(scope: $s, targetId: $t) {
      id
    }
  }
`);

export const SELECT_MCP_SERVER = graphql(`
  mutation SelectMcpServer($i: McpSelectionInput!) {
    selectMcpServer(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const DESELECT_MCP_SERVER = graphql(`
  mutation DeselectMcpServer($i: McpSelectionInput!) {
    deselectMcpServer(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const MCP_REGISTRY = graphql(`
  query McpRegistry($w: ID!) {
    mcpRegistry(workspaceId: $w) {
      ...McpRegistryFields
    }
  }
`);

export const REFRESH_MCP_REGISTRY = graphql(`
  mutation RefreshMcpRegistry($w: ID!) {
    refreshMcpRegistry(workspaceId: $w) {
      ...McpRegistryFields
    }
  }
`);

export const MCP_REGISTRY_FIELDS = graphql(`
  fragment McpRegistryFields on McpRegistry {
    status
    fetchedAt
    checkedAt
    error
    entries {
      key
      name
      title
      description
      version
      publisher
      websiteUrl
      suggestedName
      installable
      options {
        index
        kind
        label
        url
        package
        transport
        installable
        reason
        secrets
      }
    }
  }
`);

export const ADD_MCP_REGISTRY_ENTRY = graphql(`
  mutation AddMcpRegistryEntry($i: AddMcpRegistryEntryInput!) {
    addMcpRegistryEntry(input: $i) {
      __typename
      ...ErrorFields
    }
  }
`);

export const SESSION_MCP_SERVERS = graphql(`
  query SessionMcpServers($s: ID!) {
    sessionMcpServers(sessionId: $s) {
      sessionId
      desiredRevision
      appliedRevision
      servers {
        id
        name
        kind
        origins {
          scope
          id
        }
      }
    }
  }
`);
