"""Translation of ACP session updates into AgentUpdates."""

from __future__ import annotations

import acp
from acp.helpers import update_current_mode
from acp.schema import AvailableCommandsUpdate

from kandev.runtime.acp_updates import translate
from kandev.runtime.base import REDACTED, Redactor

NO_SECRETS = Redactor([])


def test_agent_message_chunks_become_agent_text() -> None:
    update = translate(acp.update_agent_message_text("hello"), NO_SECRETS)
    assert (update.kind, update.text, update.data) == ("agent_text", "hello", {})


def test_thought_and_user_chunks_keep_their_kind() -> None:
    assert translate(acp.update_agent_thought_text("hmm"), NO_SECRETS).kind == "thought"
    assert translate(acp.update_user_message_text("hi"), NO_SECRETS).kind == "user_text"


def test_tool_call_start_carries_id_title_status_and_input() -> None:
    start = acp.start_tool_call("c1", "echo", kind="other", status="pending", raw_input={"x": 1})
    update = translate(start, NO_SECRETS)
    assert update.kind == "tool_call"
    assert update.data == {
        "tool_call_id": "c1",
        "title": "echo",
        "kind": "other",
        "status": "pending",
        "raw_input": {"x": 1},
    }


def test_tool_call_update_carries_result_text_and_output() -> None:
    progress = acp.update_tool_call(
        "c1", status="completed", content=[acp.tool_content(acp.text_block("done"))], raw_output={"ok": True}
    )
    update = translate(progress, NO_SECRETS)
    assert update.kind == "tool_call_update" and update.text == "done"
    assert update.data["status"] == "completed" and update.data["raw_output"] == {"ok": True}
    assert update.data["content"][0]["content"]["text"] == "done"


def test_plans_list_their_entries() -> None:
    update = translate(acp.update_plan([acp.plan_entry("step one", status="in_progress")]), NO_SECRETS)
    assert update.kind == "plan" and update.text == "[in_progress] step one"
    assert update.data["entries"][0]["content"] == "step one"


def test_mode_changes_become_mode_updates() -> None:
    update = translate(update_current_mode("plan"), NO_SECRETS)
    assert (update.kind, update.text, update.data) == ("mode", "plan", {"mode_id": "plan"})


def test_unknown_updates_become_other_with_their_json() -> None:
    update = translate(
        AvailableCommandsUpdate(session_update="available_commands_update", available_commands=[]), NO_SECRETS
    )
    assert update.kind == "other" and update.data["session_update"] == "available_commands_update"


def test_secrets_are_redacted_from_texts_and_data() -> None:
    redactor = Redactor(["hunter2"])
    assert translate(acp.update_agent_message_text("pw hunter2"), redactor).text == f"pw {REDACTED}"
    start = acp.start_tool_call("c1", "login hunter2", raw_input={"password": "hunter2"})
    assert translate(start, redactor).data["raw_input"] == {"password": REDACTED}
    assert translate(start, redactor).data["title"] == f"login {REDACTED}"
