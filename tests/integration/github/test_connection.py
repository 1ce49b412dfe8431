"""Connecting a workspace to GitHub (the token verified first, kept as an encrypted workspace secret, never
shown) and the server-wide GitHub App (admins only)."""

from __future__ import annotations

import json
import logging

import pytest
from sqlalchemy import select

from kandev.domain.sealed_secrets import cipher
from kandev.models import GithubApp, GithubConnection, Secret
from tests.conftest import GraphQLCaller
from tests.support.factories import settings_for
from tests.support.users import services_as

CONNECTION = "query($ws: ID!) { githubConnection(workspaceId: $ws) { login host connectedAt } }"
ANSWER = "__typename ... on Error { code message fields }"
CONNECT = (
    "mutation($i: ConnectGithubInput!) { connectGithub(input: $i) { "
    f"{ANSWER} ... on ConnectGithubPayload {{ connection {{ login host }} }} }} }}"
)
DISCONNECT = (
    "mutation($i: DisconnectGithubInput!) { disconnectGithub(input: $i) { "
    f"{ANSWER} ... on DisconnectGithubPayload {{ disconnected }} }} }}"
)
SET_APP = (
    "mutation($i: SetGithubAppInput!) { setGithubApp(input: $i) { "
    f"{ANSWER} ... on SetGithubAppPayload {{ app {{ appId updatedAt }} }} }} }}"
)
KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretkeymaterial\n-----END RSA PRIVATE KEY-----"


async def rows(db):
    async with db.read() as session:
        return (
            list(await session.scalars(select(GithubConnection))),
            list(await session.scalars(select(Secret))),
            list(await session.scalars(select(GithubApp))),
        )


async def test_a_good_token_connects_the_workspace_and_is_stored_encrypted_as_a_secret(
    gql, db, settings, workspace_id, github
):
    token = "ghp_GoodTokenValue0001"
    github.tokens[token] = "hubot"
    answer = await gql(CONNECT, i={"workspaceId": workspace_id, "token": token})
    assert answer["connectGithub"] == {
        "__typename": "ConnectGithubPayload",
        "connection": {"login": "hubot", "host": "127.0.0.1"},
    }
    shown = (await gql(CONNECTION, ws=workspace_id))["githubConnection"]
    assert shown["login"] == "hubot" and shown["host"] == "127.0.0.1" and shown["connectedAt"]
    connections, secrets, _ = await rows(db)
    assert [c.workspace_id for c in connections] == [workspace_id]
    assert connections[0].secret_id == secrets[0].id and secrets[0].name == "GITHUB_CONNECTION_TOKEN"
    assert token.encode() not in secrets[0].ciphertext
    assert cipher(settings.server_key).decrypt(secrets[0].ciphertext).decode() == token
    assert token not in json.dumps(answer) + json.dumps(shown)


async def test_a_refused_token_is_a_typed_error_that_stores_nothing_and_never_echoes_it(gql, db, workspace_id, caplog):
    token = "ghp_RefusedTokenValue02"
    with caplog.at_level(logging.DEBUG):
        answer = (await gql(CONNECT, i={"workspaceId": workspace_id, "token": token}))["connectGithub"]
    assert answer["__typename"] == "ValidationError" and answer["code"] == "VALIDATION"
    assert answer["fields"]["field"] == "token" and answer["fields"]["reason"] == "auth_failed"
    assert token not in json.dumps(answer) and token not in caplog.text
    assert await rows(db) == ([], [], [])
    assert (await gql(CONNECTION, ws=workspace_id))["githubConnection"] is None


async def test_reconnecting_replaces_the_token_and_disconnecting_forgets_it(gql, db, workspace_id, github):
    github.tokens["ghp_SecondTokenValue03"] = "other"
    await gql(CONNECT, i={"workspaceId": workspace_id, "token": "good-token"})
    again = await gql(CONNECT, i={"workspaceId": workspace_id, "token": "ghp_SecondTokenValue03"})
    assert again["connectGithub"]["connection"]["login"] == "other"
    connections, secrets, _ = await rows(db)
    assert len(connections) == 1 and len(secrets) == 1
    gone = await gql(DISCONNECT, i={"workspaceId": workspace_id})
    assert gone["disconnectGithub"]["disconnected"] is True
    assert await rows(db) == ([], [], [])
    assert (await gql(DISCONNECT, i={"workspaceId": workspace_id}))["disconnectGithub"]["disconnected"] is False


async def test_an_unreachable_github_is_a_conflict_that_stores_nothing(gql, db, workspace_id, github):
    github.rate_limited_until = 2_000_000_000
    answer = (await gql(CONNECT, i={"workspaceId": workspace_id, "token": "good-token"}))["connectGithub"]
    assert answer["__typename"] == "ConflictError" and answer["code"] == "UNPROCESSABLE"
    assert await rows(db) == ([], [], [])


async def test_the_local_admin_sets_the_github_app_with_key_and_secret_encrypted(gql, db, settings):
    answer = await gql(SET_APP, i={"appId": "12345", "privateKey": KEY, "webhookSecret": "hook-secret-value"})
    assert answer["setGithubApp"]["app"]["appId"] == "12345"
    assert "secretkeymaterial" not in json.dumps(answer)
    _, _, apps = await rows(db)
    fernet = cipher(settings.server_key)
    assert fernet.decrypt(apps[0].private_key_ciphertext).decode() == KEY
    assert fernet.decrypt(apps[0].webhook_secret_ciphertext).decode() == "hook-secret-value"
    assert b"hook-secret-value" not in apps[0].webhook_secret_ciphertext


async def test_a_bad_app_id_or_key_is_refused_by_field(gql):
    bad_id = await gql(SET_APP, i={"appId": "abc", "privateKey": KEY, "webhookSecret": "s"})
    bad_key = await gql(SET_APP, i={"appId": "1", "privateKey": "not a key", "webhookSecret": "s"})
    assert bad_id["setGithubApp"]["fields"]["field"] == "appId"
    assert bad_key["setGithubApp"]["fields"]["field"] == "privateKey"


class TestWithAuthOn:
    @pytest.fixture
    def settings(self, database_url, redis_url, tmp_path, github):
        return settings_for(database_url, redis_url, tmp_path, auth="on", github_api_url=github.url)

    async def test_a_non_admin_can_not_set_the_github_app_and_an_admin_can(self, services, db):
        bob = GraphQLCaller(await services_as(services, "bob"))
        refused = await bob(SET_APP, i={"appId": "1", "privateKey": KEY, "webhookSecret": "s3cret"})
        assert refused["setGithubApp"]["__typename"] == "PermissionDeniedError"
        assert (await rows(db))[2] == []
        alice = GraphQLCaller(await services_as(services, "alice", admin=True))
        done = await alice(SET_APP, i={"appId": "1", "privateKey": KEY, "webhookSecret": "s3cret"})
        assert done["setGithubApp"]["__typename"] == "SetGithubAppPayload"

    async def test_another_users_workspace_connection_is_not_found(self, services, github):
        bob = await services_as(services, "bob")
        bobs_workspace = (await bob.workspaces.create("Bob's")).id
        eve = GraphQLCaller(await services_as(services, "eve"))
        answer = await eve(CONNECT, i={"workspaceId": bobs_workspace, "token": "good-token"})
        assert answer["connectGithub"]["__typename"] == "NotFoundError"
        assert not any(path == "/user" for path in github.requests)


async def test_deleting_the_token_secret_ends_the_connection(services, gql, db, workspace_id):
    await gql(CONNECT, i={"workspaceId": workspace_id, "token": "good-token"})
    (secret,) = await services.secrets.list(workspace_id)
    await services.secrets.delete(secret.id)
    assert (await gql(CONNECTION, ws=workspace_id))["githubConnection"] is None
    assert await rows(db) == ([], [], [])
