"""Agent profiles and workspace secrets through schema.execute."""

from __future__ import annotations

import logging

from sqlalchemy import select

from kandev.models import Secret

PROFILES = "query($ws: ID!) { agentProfiles(workspaceId: $ws) { id name kind available builtin command } }"
CREATE_PROFILE = """mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) { __typename
  ... on CreateAgentProfilePayload { agentProfile { id name kind command env supportsMcp permissionPolicy available } }
  ... on Error { code message } ... on ValidationError { field } } }"""
CREATE_SECRET = """mutation($i: CreateSecretInput!) { createSecret(input: $i) { __typename
  ... on SecretPayload { secret { id name } } ... on Error { code message } } }"""


async def test_the_builtin_profiles_are_the_scripted_agent_and_presets_marked_by_availability(gql, workspace_id):
    profiles = (await gql(PROFILES, ws=workspace_id))["agentProfiles"]
    by_name = {p["name"]: p for p in profiles}
    assert by_name["Scripted"]["kind"] == "SCRIPTED" and by_name["Scripted"]["available"] is True
    for preset in ("Claude Code", "Codex", "Gemini CLI"):
        assert by_name[preset]["kind"] == "ACP" and by_name[preset]["builtin"] is True
        assert by_name[preset]["available"] is False  # not installed on a test machine


async def test_profiles_can_be_created_updated_and_deleted_with_typed_errors(gql, workspace_id):
    created = (
        await gql(
            CREATE_PROFILE,
            i={
                "workspaceId": workspace_id,
                "name": "Local ACP",
                "kind": "ACP",
                "command": ["python3", "-m", "agent"],
                "env": {"TOKEN": "${secret:API_TOKEN}"},
                "permissionPolicy": "DENY",
            },
        )
    )["createAgentProfile"]
    assert created["__typename"] == "CreateAgentProfilePayload"
    profile = created["agentProfile"]
    assert profile["available"] is True and profile["permissionPolicy"] == "DENY" and profile["supportsMcp"] is True
    duplicate = await gql(CREATE_PROFILE, i={"workspaceId": workspace_id, "name": "Local ACP", "command": ["x"]})
    assert duplicate["createAgentProfile"]["__typename"] == "ConflictError"
    no_command = await gql(CREATE_PROFILE, i={"workspaceId": workspace_id, "name": "Empty", "kind": "ACP"})
    assert no_command["createAgentProfile"]["field"] == "command"
    updated = await gql(
        """mutation($i: UpdateAgentProfileInput!) { updateAgentProfile(input: $i) {
        ... on AgentProfilePayload { agentProfile { name permissionPolicy command } } } }""",
        i={"agentProfileId": profile["id"], "name": "Renamed", "permissionPolicy": "ALLOW"},
    )
    assert updated["updateAgentProfile"]["agentProfile"] == {
        "name": "Renamed",
        "permissionPolicy": "ALLOW",
        "command": ["python3", "-m", "agent"],
    }
    deleted = await gql(
        "mutation($id: ID!) { deleteAgentProfile(agentProfileId: $id) { __typename } }", id=profile["id"]
    )
    assert deleted["deleteAgentProfile"]["__typename"] == "AgentProfilePayload"
    names = [p["name"] for p in (await gql(PROFILES, ws=workspace_id))["agentProfiles"]]
    assert "Renamed" not in names


async def test_a_secret_is_stored_encrypted_listed_by_name_and_never_logged(gql, db, workspace_id, caplog):
    value = "sk-super-secret-value-123"
    caplog.set_level(logging.DEBUG)
    created = await gql(CREATE_SECRET, i={"workspaceId": workspace_id, "name": "API_TOKEN", "value": value})
    assert created["createSecret"]["secret"]["name"] == "API_TOKEN"
    listed = await gql("query($ws: ID!) { secrets(workspaceId: $ws) { id name } }", ws=workspace_id)
    assert [s["name"] for s in listed["secrets"]] == ["API_TOKEN"]
    assert value not in str(listed) and value not in str(created)
    async with db.read() as s:
        row = await s.scalar(select(Secret))
    assert value.encode() not in row.ciphertext
    assert value not in caplog.text
    bad = (await gql(CREATE_SECRET, i={"workspaceId": workspace_id, "name": "bad name", "value": "x"}))["createSecret"]
    assert bad["__typename"] == "ValidationError"
    again = (await gql(CREATE_SECRET, i={"workspaceId": workspace_id, "name": "API_TOKEN", "value": "y"}))[
        "createSecret"
    ]
    assert again["__typename"] == "ConflictError"
    removed = await gql("mutation($id: ID!) { deleteSecret(secretId: $id) { __typename } }", id=row.id)
    assert removed["deleteSecret"]["__typename"] == "SecretPayload"


REPLACE_SECRET = """mutation($i: ReplaceSecretInput!) { replaceSecret(input: $i) { __typename
    ... on Error { message } ... on SecretPayload { secret { id name } } } }"""


async def test_a_secret_gets_a_new_value_under_its_name_and_a_bad_one_or_another_user_changes_nothing(
    gql, db, services, bob, workspace_id, caplog
):
    from kandev.domain.sealed_secrets import resolve_env
    from tests.conftest import GraphQLCaller

    caplog.set_level(logging.DEBUG)
    created = await gql(CREATE_SECRET, i={"workspaceId": workspace_id, "name": "API_KEY", "value": "sk-old-value"})
    secret_id = created["createSecret"]["secret"]["id"]
    replaced = await gql(REPLACE_SECRET, i={"secretId": secret_id, "value": "sk-new-value-456"})
    assert replaced["replaceSecret"]["secret"] == {"id": secret_id, "name": "API_KEY"}
    assert "sk-new-value-456" not in str(replaced) and "sk-new-value-456" not in caplog.text

    async def value() -> str:
        async with db.read() as s:
            env, _ = await resolve_env(s, services.ctx.settings.server_key, workspace_id, {"K": "${secret:API_KEY}"})
        return env["K"]

    assert await value() == "sk-new-value-456"
    empty = (await gql(REPLACE_SECRET, i={"secretId": secret_id, "value": ""}))["replaceSecret"]
    assert empty["__typename"] == "ValidationError"
    theirs = (await GraphQLCaller(bob).raw(REPLACE_SECRET, i={"secretId": secret_id, "value": "sk-bobs"})).data
    assert theirs["replaceSecret"]["__typename"] == "NotFoundError"
    assert await value() == "sk-new-value-456"
