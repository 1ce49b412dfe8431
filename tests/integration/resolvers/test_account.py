"""The caller's own access tokens and workspaces through schema.execute, with KANDEV_AUTH=on."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from kandev.domain.access.tokens import principal_for_token
from kandev.models import AccessToken, Workspace
from tests.conftest import GraphQLCaller
from tests.support.factories import settings_for

TOKENS = "{ accessTokens { id name createdAt lastUsedAt revokedAt } }"
CREATE_TOKEN = """mutation($name: String!) { createAccessToken(input: { name: $name }) { __typename
  ... on CreateAccessTokenPayload { token accessToken { id name createdAt lastUsedAt revokedAt } }
  ... on Error { code message } } }"""
REVOKE_TOKEN = """mutation($id: ID!) { revokeAccessToken(id: $id) { __typename
  ... on AccessTokenPayload { accessToken { id revokedAt } } ... on Error { code message } } }"""
CREATE_WORKSPACE = """mutation($name: String!) { createWorkspace(input: { name: $name }) { __typename
  ... on WorkspacePayload { workspace { id name defaultWorkflowId } } ... on Error { code message } } }"""
UPDATE_WORKSPACE = """mutation($i: UpdateWorkspaceInput!) { updateWorkspace(input: $i) { __typename
  ... on WorkspacePayload { workspace { id name } } ... on Error { code message } } }"""


@pytest.fixture
def settings(database_url, redis_url, tmp_path):
    return settings_for(database_url, redis_url, tmp_path, auth="on")


async def test_a_created_token_is_shown_once_acts_as_its_creator_and_is_listed_without_its_value(services, bob):
    gql = GraphQLCaller(bob)
    created = (await gql(CREATE_TOKEN, name="laptop"))["createAccessToken"]
    assert created["__typename"] == "CreateAccessTokenPayload"
    token = created["token"]
    principal = await principal_for_token(services.ctx.db, token)
    assert principal is not None and principal.login == "bob" and principal.admin is False
    listed = (await gql(TOKENS))["accessTokens"]
    assert [t["id"] for t in listed] == [created["accessToken"]["id"]]
    assert listed[0]["name"] == "laptop" and listed[0]["lastUsedAt"] is not None and listed[0]["revokedAt"] is None
    async with services.ctx.db.read() as session:
        stored_hash = await session.scalar(select(AccessToken.token_hash))
    assert stored_hash is not None and token not in json.dumps(listed) and stored_hash not in json.dumps(listed)


async def test_tokens_are_listed_and_revoked_only_by_their_owner(services, gql, bob):
    bobs = GraphQLCaller(bob)
    bob_token = (await bobs(CREATE_TOKEN, name="bob's"))["createAccessToken"]
    local_token = (await gql(CREATE_TOKEN, name="local's"))["createAccessToken"]
    assert [t["name"] for t in (await bobs(TOKENS))["accessTokens"]] == ["bob's"]
    assert [t["name"] for t in (await gql(TOKENS))["accessTokens"]] == ["local's"]

    foreign = (await bobs(REVOKE_TOKEN, id=local_token["accessToken"]["id"]))["revokeAccessToken"]
    assert foreign["__typename"] == "NotFoundError"
    assert await principal_for_token(services.ctx.db, local_token["token"]) is not None

    revoked = (await bobs(REVOKE_TOKEN, id=bob_token["accessToken"]["id"]))["revokeAccessToken"]
    assert revoked["__typename"] == "AccessTokenPayload" and revoked["accessToken"]["revokedAt"] is not None
    assert await principal_for_token(services.ctx.db, bob_token["token"]) is None
    assert (await bobs(TOKENS))["accessTokens"][0]["revokedAt"] is not None


async def test_an_empty_token_name_is_a_validation_error_and_issues_nothing(services, bob):
    answer = (await GraphQLCaller(bob)(CREATE_TOKEN, name="  "))["createAccessToken"]
    assert answer["__typename"] == "ValidationError"
    async with services.ctx.db.read() as session:
        assert list(await session.scalars(select(AccessToken.id))) == []


async def test_a_second_user_creates_a_workspace_with_the_default_workflow_and_builtin_profiles(bob):
    gql = GraphQLCaller(bob)
    assert (await gql("{ workspaces { id } }"))["workspaces"] == []
    created = (await gql(CREATE_WORKSPACE, name="Bob's work"))["createWorkspace"]
    assert created["__typename"] == "WorkspacePayload"
    workspace = created["workspace"]
    assert (await gql("{ workspaces { id name } }"))["workspaces"] == [{"id": workspace["id"], "name": "Bob's work"}]
    workflows = await gql("query($ws: ID!) { workflows(workspaceId: $ws) { id steps { name } } }", ws=workspace["id"])
    assert [w["id"] for w in workflows["workflows"]] == [workspace["defaultWorkflowId"]]
    assert [s["name"] for s in workflows["workflows"][0]["steps"]] == ["Backlog", "In Progress", "Review", "Done"]
    profiles = await gql("query($ws: ID!) { agentProfiles(workspaceId: $ws) { name builtin } }", ws=workspace["id"])
    assert {"name": "Scripted", "builtin": True} in profiles["agentProfiles"]


async def test_a_workspace_name_must_not_be_empty(services, bob):
    answer = (await GraphQLCaller(bob)(CREATE_WORKSPACE, name=" "))["createWorkspace"]
    assert answer["__typename"] == "ValidationError"
    async with services.ctx.db.read() as session:
        assert await session.scalar(select(Workspace.id).where(Workspace.owner_id == bob.principal.user_id)) is None


async def test_a_workspace_is_renamed_by_its_owner_and_not_found_for_anyone_else(services, gql, bob):
    bobs = GraphQLCaller(bob)
    workspace_id = (await bobs(CREATE_WORKSPACE, name="Old"))["createWorkspace"]["workspace"]["id"]
    renamed = (await bobs(UPDATE_WORKSPACE, i={"workspaceId": workspace_id, "name": "New"}))["updateWorkspace"]
    assert renamed == {"__typename": "WorkspacePayload", "workspace": {"id": workspace_id, "name": "New"}}
    foreign = (await gql(UPDATE_WORKSPACE, i={"workspaceId": workspace_id, "name": "Taken"}))["updateWorkspace"]
    assert foreign["__typename"] == "NotFoundError"
    unknown = (await bobs(UPDATE_WORKSPACE, i={"workspaceId": "nope", "name": "X"}))["updateWorkspace"]
    assert unknown["__typename"] == "NotFoundError"
    async with services.ctx.db.read() as session:
        assert (await session.get(Workspace, workspace_id)).name == "New"
