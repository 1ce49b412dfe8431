"""The provider review operations are an agent's, about its own task: a person (or the external MCP
endpoint) calling them is refused before any code host is asked."""

from __future__ import annotations

PR = "query { taskPullRequest(input: {}) { __typename ... on Error { code } } }"
MR = "query { taskMergeRequest(input: {}) { __typename ... on Error { code } } }"
UPDATE_PR = 'mutation { updateTaskPullRequest(input: {title: "x"}) { __typename ... on Error { code } } }'
UPDATE_MR = 'mutation { updateTaskMergeRequest(input: {title: "x"}) { __typename ... on Error { code } } }'


async def test_a_person_can_not_read_or_change_a_task_pull_or_merge_request(gql):
    answers = [
        (await gql(PR))["taskPullRequest"],
        (await gql(MR))["taskMergeRequest"],
        (await gql(UPDATE_PR))["updateTaskPullRequest"],
        (await gql(UPDATE_MR))["updateTaskMergeRequest"],
    ]
    assert answers == [{"__typename": "PermissionDeniedError", "code": "PERMISSION_DENIED"}] * 4
