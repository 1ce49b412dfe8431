// Operations of the agent catalogue: what Kandev knows how to run, what is installed here, and the install jobs
// (Install / Update) whose progress the catalogue shows.
import { graphql } from "../gql";
import type { AgentCatalogueQuery } from "../gql/graphql";

graphql(`
  fragment CatalogueFields on AgentCatalogueEntry {
    id
    name
    command
    install {
      npmPackage
      version
      binaryUrl
    }
    envKeys
    docsUrl
    verified
    installed
    installedCommand
    installJob {
      state
      update
      error
      startedAt
      endedAt
    }
  }
`);

export const AGENT_CATALOGUE = graphql(`
  query AgentCatalogue {
    agentCatalogue {
      ...CatalogueFields
    }
  }
`);

export const INSTALL_AGENT = graphql(`
  mutation InstallAgent($id: String!) {
    installAgent(id: $id) {
      __typename
      ...ErrorFields
      ... on AgentInstallPayload {
        agent {
          ...CatalogueFields
        }
      }
    }
  }
`);

export const UPDATE_AGENT = graphql(`
  mutation UpdateAgent($id: String!) {
    updateAgent(id: $id) {
      __typename
      ...ErrorFields
      ... on AgentInstallPayload {
        agent {
          ...CatalogueFields
        }
      }
    }
  }
`);

export type CatalogueEntry = AgentCatalogueQuery["agentCatalogue"][number];
