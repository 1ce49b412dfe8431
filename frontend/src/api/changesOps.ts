// A task's changes and the review around them (DESIGN.md section 10): the changed files a page at a time, one
// file's hunks on demand, review threads and the mutations on them. Types derived from the generated ones.
import { graphql } from "../gql";
import type {
  FileChangeFieldsFragment,
  FileHunksQuery,
  ReviewThreadFieldsFragment,
  TaskChangesQuery,
} from "../gql/graphql";

graphql(`
  fragment FileChangeFields on FileChange {
    path
    oldPath
    status
    additions
    deletions
    binary
    tooLarge
    reviewed
    diffKey
    oldMode
    newMode
    symlink
    submodule
    untracked
  }
`);

graphql(`
  fragment ReviewThreadFields on ReviewThread {
    id
    repositoryId
    path
    line
    endLine
    side
    state
    origin
    anchor {
      line
      endLine
      lineText
    }
    comments {
      id
      author {
        kind
        login
      }
      body
      createdAt
    }
    resolvedBy {
      kind
      login
    }
    resolvedAt
    sentInPromptId
    sentAt
    createdAt
    updatedAt
  }
`);

/** Files per page of a repository's changes (the most the server gives at once). */
export const FILES_PAGE = 500;

export const TASK_CHANGES = graphql(`
  query TaskChanges($id: ID!, $first: Int!, $after: String) {
    task(id: $id) {
      id
      changes {
        reason
        repositories {
          repositoryId
          name
          branch
          baseBranch
          ahead
          behind
          note
          stats {
            files
            additions
            deletions
          }
          files(first: $first, after: $after) {
            totalCount
            pageInfo {
              hasNextPage
              endCursor
            }
            nodes {
              ...FileChangeFields
            }
          }
        }
      }
    }
  }
`);

// One file's hunks (its old path too, so a rename stays a rename); `context` 10000 reads a file whole for
// expanding the unchanged lines between hunks.
export const FILE_HUNKS = graphql(`
  query FileHunks($id: ID!, $paths: [String!], $scope: ChangeScope, $context: Int!, $large: Boolean!) {
    task(id: $id) {
      id
      changes(scope: $scope, paths: $paths) {
        repositories {
          repositoryId
          files(first: 10) {
            nodes {
              ...FileChangeFields
              invalidUtf8
              submoduleChange {
                oldCommit
                newCommit
              }
              hunks(context: $context, includeLarge: $large) {
                header
                oldStart
                oldLines
                newStart
                newLines
                lines {
                  kind
                  oldNumber
                  newNumber
                  text
                }
              }
            }
          }
        }
      }
    }
  }
`);

export const REVIEW_THREADS = graphql(`
  query ReviewThreads($id: ID!) {
    task(id: $id) {
      id
      reviewThreads {
        ...ReviewThreadFields
      }
    }
  }
`);

export const ADD_REVIEW_COMMENT = graphql(`
  mutation AddReviewComment($i: AddReviewCommentInput!) {
    addReviewComment(input: $i) {
      __typename
      ...ErrorFields
      ... on ReviewThreadPayload {
        thread {
          ...ReviewThreadFields
        }
      }
    }
  }
`);

export const REPLY_TO_REVIEW_THREAD = graphql(`
  mutation ReplyToReviewThread($i: ReplyToReviewThreadInput!) {
    replyToReviewThread(input: $i) {
      __typename
      ...ErrorFields
      ... on ReviewThreadPayload {
        thread {
          ...ReviewThreadFields
        }
      }
    }
  }
`);

export const RESOLVE_REVIEW_THREAD = graphql(`
  mutation ResolveReviewThread($id: ID!) {
    resolveReviewThread(threadId: $id) {
      __typename
      ...ErrorFields
      ... on ReviewThreadPayload {
        thread {
          ...ReviewThreadFields
        }
      }
    }
  }
`);

export const REOPEN_REVIEW_THREAD = graphql(`
  mutation ReopenReviewThread($id: ID!) {
    reopenReviewThread(threadId: $id) {
      __typename
      ...ErrorFields
      ... on ReviewThreadPayload {
        thread {
          ...ReviewThreadFields
        }
      }
    }
  }
`);

export const DELETE_REVIEW_COMMENT = graphql(`
  mutation DeleteReviewComment($id: ID!) {
    deleteReviewComment(commentId: $id) {
      __typename
      ...ErrorFields
      ... on ReviewThreadPayload {
        threadDeleted
        thread {
          ...ReviewThreadFields
        }
      }
    }
  }
`);

export const SEND_REVIEW_TO_AGENT = graphql(`
  mutation SendReviewToAgent($i: SendReviewToAgentInput!) {
    sendReviewToAgent(input: $i) {
      __typename
      ...ErrorFields
      ... on SendReviewPayload {
        promptId
        threads {
          ...ReviewThreadFields
        }
      }
    }
  }
`);

export const SET_FILE_REVIEWED = graphql(`
  mutation SetFileReviewed($i: SetFileReviewedInput!) {
    setFileReviewed(input: $i) {
      __typename
      ...ErrorFields
      ... on FileReviewedPayload {
        repositoryId
        path
        reviewed
        diffKey
      }
    }
  }
`);

export const DISCARD_CHANGES = graphql(`
  mutation DiscardChanges($i: DiscardChangesInput!) {
    discardChanges(input: $i) {
      __typename
      ...ErrorFields
      ... on DiscardChangesPayload {
        repositoryId
        paths
      }
    }
  }
`);

export type FileChange = FileChangeFieldsFragment;
export type ReviewThread = ReviewThreadFieldsFragment;
export type RepositoryChanges = NonNullable<TaskChangesQuery["task"]>["changes"]["repositories"][number];
export type FileWithHunks = FileHunksQuery["task"]["changes"]["repositories"][number]["files"]["nodes"][number];
export type DiffHunk = FileWithHunks["hunks"][number];
export type { ChangeScope, FileStatus, ReviewSide, ReviewThreadState } from "../gql/graphql";
