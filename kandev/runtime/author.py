"""The built-in authoring agent: a deterministic ACP agent (no model) for "describe an automation" chats.

Run it as `python -m kandev.runtime.author`. It speaks ACP exactly as the scripted agent does (it reuses that
program's JSON-RPC loop) and answers each operator message by the rules of kandev.domain.automations.author_draft: it
asks what is missing, checks the schedule with validate_cron and the whole definition with dry_run_preflight,
shows the definition and creates it with create_automation only after a yes, and hands over to the form after
five messages without a viable definition. It never invents a credential: it only names the agent profile it
found with list_available_agents, and when the pre-flight check finds a credential missing (the GitHub
connection, a secret the agent's profile references) it asks for it, pointing to the settings page that adds
it, and creates nothing until a new check finds it, unless the operator says to save it anyway. Every check
is a real MCP call on the session's `kandev` server, visible
in the chat's transcript as a tool call.

The conversation survives a restart of the agent process: it is kept in `.kandev-author.json` in the session's
working directory, per task.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kandev.domain.automations.author_draft import Conversation, Draft, Reply
from kandev.runtime.scripted import ScriptedAgent, Step, _Session, _Turn
from kandev.runtime.scripted_directives import CONTEXT_BLOCK

STATE_FILE = ".kandev-author.json"
# Where a person adds what a pre-flight check found missing (the web client's settings sections).
CONNECTIONS_PAGE = "Settings → Code hosts (/settings/connections)"
SECRETS_PAGE = "Settings → Secrets (/settings/secrets)"
AUTHOR_KIND = "AUTHOR"
_TASK = re.compile(r"^You are working on Kandev task (\S+):", re.M)
_WORKSPACE = re.compile(r"^Workspace: (\S+)$", re.M)


class _Chat:
    """One authoring conversation and what the program learnt around it."""

    def __init__(self, task_id: str, workspace_id: str | None, values: dict[str, Any] | None = None) -> None:
        values = dict(values or {})
        self.task_id = task_id
        self.workspace_id: str | None = values.pop("workspace_id", None) or workspace_id
        self.agent: dict[str, Any] | None = values.pop("agent", None)
        self.mentions: list[str] = values.pop("mentions", [])
        draft = Draft(**values.pop("draft", {}))
        self.conversation = Conversation(draft=draft, **values)

    def to_json(self) -> dict[str, Any]:
        conversation = asdict(self.conversation)
        return {"workspace_id": self.workspace_id, "agent": self.agent, "mentions": self.mentions, **conversation}


def _load(cwd: str, task_id: str, workspace_id: str | None) -> _Chat:
    try:
        chats = json.loads((Path(cwd) / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        chats = {}
    values = chats.get(task_id) if isinstance(chats, dict) else None
    return _Chat(task_id, workspace_id, values if isinstance(values, dict) else None)


def _save(cwd: str, chat: _Chat) -> None:
    path = Path(cwd) / STATE_FILE
    try:
        chats = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        chats = {}
    chats = chats if isinstance(chats, dict) else {}
    chats[chat.task_id] = chat.to_json()
    spare = path.with_name(f"{STATE_FILE}.{os.getpid()}")
    spare.write_text(json.dumps(chats), encoding="utf-8")
    spare.replace(path)  # atomic: a crash leaves the previous conversation, never half of one


def missing_lines(ack: dict[str, Any]) -> list[str]:
    """What a pre-flight answer found missing, each with the settings page that adds it (never a value)."""
    lines = []
    for credential in ack.get("credentials") or []:
        if credential.get("present"):
            continue
        name = str(credential.get("name"))
        page = CONNECTIONS_PAGE if name == "GitHub connection" else SECRETS_PAGE
        lines.append(f"Missing: {name}. Add it in {page}; I won't invent it.")
    return lines


def choose_agent(agents: list[dict[str, Any]], mentions: list[str]) -> dict[str, Any] | None:
    """The profile the automation will run: an available one the operator named, else the first available
    ACP agent, else the first available one (never this authoring agent itself)."""
    usable = [a for a in agents if a.get("available") and a.get("kind") != AUTHOR_KIND]
    said = " ".join(mentions).lower()
    named = [a for a in usable if re.search(rf"\b{re.escape(str(a['name']).lower())}\b", said)]
    acp = [a for a in usable if a.get("kind") == "ACP"]
    for candidates in (named, acp, usable):
        if candidates:
            return candidates[0]
    return None


class AuthorAgent(ScriptedAgent):
    """The scripted agent's ACP loop with an authoring conversation in place of its directives."""

    NAME = "kandev-author"

    def __init__(self) -> None:
        super().__init__()
        self._tasks: dict[str, tuple[str, str | None]] = {}  # ACP session -> (task, workspace) from its context

    def _run(self, turn: _Turn, session_id: str, session: _Session, text: str) -> None:
        context = CONTEXT_BLOCK.search(text)
        if context is not None:
            task, workspace = _TASK.search(context[0]), _WORKSPACE.search(context[0])
            self._tasks[session_id] = (task[1] if task else session_id, workspace[1] if workspace else None)
        task_id, workspace_id = self._tasks.get(session_id, (session_id, None))
        chat = _load(session.cwd, task_id, workspace_id)
        message = CONTEXT_BLOCK.sub("", text).strip()
        chat.mentions.append(message)
        reply = chat.conversation.hear(message)
        turn.check()
        lines = self._act(turn, session_id, session, chat, reply)
        _save(session.cwd, chat)
        self._say(session_id, "\n".join(lines))

    def _act(self, turn: _Turn, session_id: str, session: _Session, chat: _Chat, reply: Reply) -> list[str]:
        if reply.confirm is not None:
            return self._confirmation(turn, session_id, session, chat, reply)
        if reply.create is not None:
            return self._create(turn, session_id, session, chat, reply.create, reply.anyway)
        if reply.handoff is not None:
            return [*reply.messages, "Open the form: it is filled in with what I captured."]
        return reply.messages

    def _call(self, turn: _Turn, session_id: str, session: _Session, tool: str, arguments: dict[str, Any]) -> Any:
        outcome = self._tool(turn, session_id, session, Step("tool", tool=tool, arguments=arguments))
        return outcome.raw if outcome.ok else None

    def _confirmation(self, turn: _Turn, session_id: str, session: _Session, chat: _Chat, reply: Reply) -> list[str]:
        draft = reply.confirm
        assert draft is not None
        listed = self._call(turn, session_id, session, "list_available_agents", self._workspace(chat))
        chat.agent = choose_agent((listed or {}).get("agents") or [], chat.mentions)
        lines = list(reply.messages[:-1])
        trigger = draft.definition()["triggers"][0]
        if trigger["type"] == "scheduled":
            schedule = {"expression": trigger["expression"], "timezone": trigger["timezone"]}
            check = self._call(turn, session_id, session, "validate_cron", schedule)
            if check and check.get("valid"):
                fires = f"Fires: {check['description']}; next: {', '.join(check['next_fires'][:3])}"
                lines = [fires if line.startswith("Fires:") else line for line in lines]
            elif check:
                chat.conversation.awaiting_confirmation = False
                return [f"That schedule doesn't work: {check['error']}", "When should it run?"]
        lines.append(f"Agent: {chat.agent['name'] if chat.agent else '(none available: pick one in the form)'}")
        ack = self._call(turn, session_id, session, "dry_run_preflight", self._definition(chat, draft))
        if ack:  # why it would not run fine (WARN, FAILED), else what it will do
            said = ack.get("summary") if ack.get("status") == "OK" else ack.get("detail") or ack.get("summary")
            lines.append(f"Pre-flight: {ack.get('status')} — {said or ''}".rstrip(" —"))
            lines += missing_lines(ack)
        return [*lines, reply.messages[-1]]

    def _create(
        self, turn: _Turn, session_id: str, session: _Session, chat: _Chat, draft: Draft, anyway: bool
    ) -> list[str]:
        definition = self._definition(chat, draft)
        if not anyway:
            ack = self._call(turn, session_id, session, "dry_run_preflight", definition)
            asked = missing_lines(ack or {})
            if asked:
                chat.conversation.hold()
                return [
                    "I haven't created it yet.",
                    *asked,
                    "Tell me once it is added and I'll check again, or say 'save it anyway' to create it without it.",
                ]
        outcome = self._tool(turn, session_id, session, Step("tool", tool="create_automation", arguments=definition))
        if not outcome.ok:
            return [f"I couldn't create it: {outcome.text}", "Open the form to finish it there."]
        automation = outcome.raw.get("automation") or {}
        return [f"Created the automation '{automation.get('name')}' ({outcome.raw.get('automation_id')})."]

    def _workspace(self, chat: _Chat) -> dict[str, Any]:
        return {"workspace_id": chat.workspace_id} if chat.workspace_id else {}

    def _definition(self, chat: _Chat, draft: Draft) -> dict[str, Any]:
        definition = {**self._workspace(chat), **draft.definition()}
        if chat.agent is not None:
            definition["agent_profile_id"] = chat.agent["id"]
        return definition


def main() -> None:
    """Serve one client over stdin/stdout until it hangs up."""
    AuthorAgent().serve()


if __name__ == "__main__":
    main()
