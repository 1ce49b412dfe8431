"""Connecting a workspace to GitLab: the token verified on the instance first (GET /api/v4/user), kept as an
encrypted workspace secret, never shown; a refused token or a bad base URL stores nothing."""

from __future__ import annotations

import json
import logging

import pytest
from sqlalchemy import select

from kandev.domain.gitlab.connections import workspace_gitlab_credentials
from kandev.domain.sealed_secrets import cipher
from kandev.models import GitlabConnection, Secret
from tests.conftest import GraphQLCaller
from tests.support.factories import settings_for
from tests.support.users import services_as

CONNECTION = "query($ws: ID!) { gitlabConnection(workspaceId: $ws) { username baseUrl host connectedAt } }"
ANSWER = "__typename ... on Error { code message fields } ... on ValidationError { field }"
CONNECT = (
    "mutation($i: ConnectGitlabInput!) { connectGitlab(input: $i) { "
    f"{ANSWER} ... on ConnectGitlabPayload {{ connection {{ username baseUrl host }} }} }} }}"
)
DISCONNECT = (
    "mutation($i: DisconnectGitlabInput!) { disconnectGitlab(input: $i) { "
    f"{ANSWER} ... on DisconnectGitlabPayload {{ disconnected }} }} }}"
)
GOOD = "glpat-fake-good-7c1e"


async def rows(db):
    async with db.read() as session:
        return (list(await session.scalars(select(GitlabConnection))), list(await session.scalars(select(Secret))))


async def test_a_good_token_connects_the_workspace_and_is_stored_encrypted_as_a_secret(
    gql, db, settings, workspace_id, gitlab
):
    answer = await gql(CONNECT, i={"workspaceId": workspace_id, "token": GOOD})
    assert answer["connectGitlab"] == {
        "__typename": "ConnectGitlabPayload",
        "connection": {"username": "tanuki", "baseUrl": gitlab.url, "host": "127.0.0.1"},
    }
    assert gitlab.requests == ["/api/v4/user"]
    shown = (await gql(CONNECTION, ws=workspace_id))["gitlabConnection"]
    assert shown["username"] == "tanuki" and shown["baseUrl"] == gitlab.url and shown["connectedAt"]
    connections, secrets = await rows(db)
    assert [c.workspace_id for c in connections] == [workspace_id]
    assert connections[0].secret_id == secrets[0].id and secrets[0].name == "GITLAB_CONNECTION_TOKEN"
    assert GOOD.encode() not in secrets[0].ciphertext
    assert cipher(settings.server_key).decrypt(secrets[0].ciphertext).decode() == GOOD
    assert GOOD not in json.dumps(answer) + json.dumps(shown)
    async with db.read() as session:
        credentials = await workspace_gitlab_credentials(session, settings, workspace_id)
    assert credentials is not None
    assert (credentials.base_url, credentials.host, credentials.token) == (gitlab.url, "127.0.0.1", GOOD)


async def test_a_refused_token_is_a_typed_error_that_stores_nothing_and_never_echoes_it(
    gql, db, workspace_id, gitlab, caplog
):
    token = "glpat-refused-4d2b9e"
    with caplog.at_level(logging.DEBUG):
        answer = (await gql(CONNECT, i={"workspaceId": workspace_id, "token": token}))["connectGitlab"]
    assert answer["__typename"] == "ValidationError" and answer["code"] == "VALIDATION"
    assert answer["fields"]["field"] == "token" and answer["fields"]["reason"] == "auth_failed"
    assert gitlab.requests == ["/api/v4/user"]  # it was asked, and said 401
    assert token not in json.dumps(answer) and token not in caplog.text
    assert await rows(db) == ([], [])
    assert (await gql(CONNECTION, ws=workspace_id))["gitlabConnection"] is None


@pytest.mark.parametrize(
    "base_url",
    ["ftp://gitlab.example", "https://user:pw-9f3c@gitlab.example", "https://gitlab.example/?x=1", "not a url"],
)
async def test_a_bad_base_url_is_refused_by_field_before_anything_is_called(gql, db, workspace_id, gitlab, base_url):
    answer = (await gql(CONNECT, i={"workspaceId": workspace_id, "token": GOOD, "baseUrl": base_url}))["connectGitlab"]
    assert answer["__typename"] == "ValidationError" and answer["field"] == "baseUrl"
    assert "pw-9f3c" not in json.dumps(answer)
    assert gitlab.requests == [] and await rows(db) == ([], [])


async def test_reconnecting_replaces_the_token_and_disconnecting_forgets_it(gql, db, workspace_id, gitlab):
    gitlab.tokens["glpat-second-81aa0c"] = "reviewer-ann"
    await gql(CONNECT, i={"workspaceId": workspace_id, "token": GOOD})
    again = await gql(CONNECT, i={"workspaceId": workspace_id, "token": "glpat-second-81aa0c", "baseUrl": gitlab.url})
    assert again["connectGitlab"]["connection"]["username"] == "reviewer-ann"
    connections, secrets = await rows(db)
    assert len(connections) == 1 and len(secrets) == 1
    gone = await gql(DISCONNECT, i={"workspaceId": workspace_id})
    assert gone["disconnectGitlab"]["disconnected"] is True
    assert await rows(db) == ([], [])
    assert (await gql(DISCONNECT, i={"workspaceId": workspace_id}))["disconnectGitlab"]["disconnected"] is False


async def test_an_unreachable_instance_is_unprocessable_and_stores_nothing(gql, db, workspace_id):
    unreachable = "http://127.0.0.1:9"  # the discard port: nothing listens
    answer = (await gql(CONNECT, i={"workspaceId": workspace_id, "token": GOOD, "baseUrl": unreachable}))[
        "connectGitlab"
    ]
    assert answer["__typename"] == "ConflictError" and answer["code"] == "UNPROCESSABLE"
    assert GOOD not in json.dumps(answer)
    assert await rows(db) == ([], [])


async def test_deleting_the_token_secret_ends_the_connection(services, gql, db, workspace_id):
    await gql(CONNECT, i={"workspaceId": workspace_id, "token": GOOD})
    (secret,) = await services.secrets.list(workspace_id)
    await services.secrets.delete(secret.id)
    assert (await gql(CONNECTION, ws=workspace_id))["gitlabConnection"] is None
    assert await rows(db) == ([], [])


class TestWithAuthOn:
    @pytest.fixture
    def settings(self, database_url, redis_url, tmp_path, gitlab):
        return settings_for(database_url, redis_url, tmp_path, auth="on", gitlab_url=gitlab.url)

    async def test_another_users_workspace_connection_is_not_found(self, services, gitlab):
        bob = await services_as(services, "bob")
        bobs_workspace = (await bob.workspaces.create("Bob's")).id
        eve = GraphQLCaller(await services_as(services, "eve"))
        answer = await eve(CONNECT, i={"workspaceId": bobs_workspace, "token": GOOD})
        assert answer["connectGitlab"]["__typename"] == "NotFoundError"
        assert gitlab.requests == []

    async def test_only_an_admin_may_point_the_connection_at_another_instance(self, services, gitlab):
        bob = await services_as(services, "bob")
        workspace = (await bob.workspaces.create("Bob's")).id
        other = gitlab.url.replace("127.0.0.1", "localhost")
        refused = await GraphQLCaller(bob)(CONNECT, i={"workspaceId": workspace, "token": GOOD, "baseUrl": other})
        assert refused["connectGitlab"]["__typename"] == "PermissionDeniedError"
        assert gitlab.requests == []
        default = await GraphQLCaller(bob)(CONNECT, i={"workspaceId": workspace, "token": GOOD})
        assert default["connectGitlab"]["__typename"] == "ConnectGitlabPayload"
