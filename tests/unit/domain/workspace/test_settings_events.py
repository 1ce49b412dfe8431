"""Who hears a server-wide workspaceEvents message: an access token's change only its owner, as a person."""

from __future__ import annotations

from kandev.domain.context import Principal
from kandev.domain.workspace.settings_events import ACCESS_TOKEN, WORKSPACE, heard_by
from kandev.platform.event_bus import SettingsEventPayload

TOKEN = SettingsEventPayload(kind=ACCESS_TOKEN, id="tok-row-1", owner_id="user-ann")


def test_an_access_token_change_is_heard_by_its_owner():
    assert heard_by(TOKEN, Principal(user_id="user-ann", login="ann"))


def test_an_access_token_change_is_not_heard_by_another_user_even_one_who_sees_everything():
    assert not heard_by(TOKEN, Principal(user_id="user-bob", login="bob"))
    assert not heard_by(TOKEN, Principal(user_id="user-bob", login="bob", sees_everything=True))


def test_an_access_token_change_is_not_heard_by_an_agent_session_acting_for_its_owner():
    session = Principal(user_id="user-ann", login="ann", session_id="s1", task_id="t1", workspace_id="w1")
    assert not heard_by(TOKEN, session)


def test_a_new_workspace_is_still_heard_by_whoever_sees_everything():
    assert heard_by(
        SettingsEventPayload(kind=WORKSPACE, id="w2", owner_id="user-ann"),
        Principal(user_id="user-bob", login="bob", sees_everything=True),
    )
