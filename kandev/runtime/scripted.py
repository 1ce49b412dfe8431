"""The built-in deterministic agent: an ACP agent over stdio that follows the directives in its prompt.

Run it as `python -m kandev.runtime.scripted`. Directives (DESIGN.md, one per line, other lines
ignored, the `<kandev-context>` block stripped first):

    /say TEXT             agent message TEXT (each /say its own message, with its own messageId)
    /tool NAME JSON       call NAME on the session's `kandev` MCP server (a tool call: pending -> done)
    /sleep SECONDS        wait; `session/cancel` ends the turn at once with stop reason `cancelled`
    /fail TEXT            answer session/prompt with JSON-RPC error -32603 and message TEXT
    /end                  end the turn now (end_turn)
    /on-question TEXT     remember TEXT (in `.kandev-scripted.json` in the session cwd) as the answer to
                          every later parent question
    /permission TITLE     (extra, for tests) ask `session/request_permission` and say the outcome

A parent question is recognised by a line holding a JSON object with string fields `task_id` and
`reply_to_question_id` (the reply shape of `message_task_kandev`), anywhere in a later prompt, e.g.
`{"tool": "message_task_kandev", "task_id": "T1", "reply_to_question_id": "Q1"}`; with an answer
remembered it becomes `/tool message_task_kandev {"task_id": ..., "reply_to_question_id": ...,
"prompt": TEXT}`. A prompt with no directive gets one agent message echoing its first non-empty line.

Environment: `KANDEV_SCRIPTED_LOAD=1` advertises `loadSession` (off by default so callers exercise
the synthesized-history path); `KANDEV_SCRIPTED_LOG=FILE` appends `{"session_id", "prompt", "pid"}` per prompt;
`KANDEV_SCRIPTED_AUTH=launch` acts as an agent that is not signed in (it offers a sign-in method and answers
`session/new` and `session/load` with ACP's auth_required error, as Claude Code does without a login),
`KANDEV_SCRIPTED_AUTH=prompt` as one whose sign-in expired (every `session/prompt` gets that error).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import sys
import uuid
from dataclasses import dataclass
from typing import Any, cast

import acp
from acp.helpers import update_current_mode
from acp.schema import (
    AgentCapabilities,
    AuthMethodAgent,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    ToolCallUpdate,
)

from kandev import __version__
from kandev.runtime.acp_updates import block_text
from kandev.runtime.base import END_TURN, MCP_SERVER_NAME
from kandev.runtime.scripted_directives import Step, load_answer, plan, save_answer
from kandev.runtime.scripted_tools import McpTarget, call_tool

FAIL_CODE = -32603
MODES = (("default", "Default"), ("plan", "Plan"))


@dataclass(slots=True)
class _Session:
    cwd: str
    mcp: McpTarget | None
    mode: str = "default"
    turn: asyncio.Task[str] | None = None


def _kandev_server(servers: list[Any] | None) -> McpTarget | None:
    for server in servers or []:
        if getattr(server, "name", None) == MCP_SERVER_NAME and getattr(server, "url", None):
            return McpTarget(server.url, {h.name: h.value for h in getattr(server, "headers", None) or []})
    return None


def _modes(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current, available_modes=[SessionMode(id=i, name=n) for i, n in MODES])


class ScriptedAgent:
    """ACP agent side: sessions live in memory for the life of the process."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._sessions: dict[str, _Session] = {}
        self._tool_ids = itertools.count(1)
        self._load = os.environ.get("KANDEV_SCRIPTED_LOAD") == "1"
        self._log = os.environ.get("KANDEV_SCRIPTED_LOG")
        self._auth = os.environ.get("KANDEV_SCRIPTED_AUTH", "")

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=self._load, mcp_capabilities=McpCapabilities(http=True)),
            agent_info=Implementation(name="kandev-scripted", version=__version__),
            auth_methods=[AuthMethodAgent(id="scripted-login", name="Scripted login")] if self._auth else [],
        )

    def _check_signed_in(self, when: str) -> None:
        if self._auth == when:
            raise acp.RequestError.auth_required({"details": "Invalid API key · Please run /login"})

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        self._check_signed_in("launch")
        session_id = uuid.uuid4().hex
        self._sessions[session_id] = _Session(cwd, _kandev_server(mcp_servers))
        return NewSessionResponse(session_id=session_id, modes=_modes("default"))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        self._check_signed_in("launch")
        # A fresh process knows no sessions: an unknown id is simply adopted (nothing to replay).
        session = self._sessions.setdefault(session_id, _Session(cwd, None))
        session.cwd, session.mcp = cwd, _kandev_server(mcp_servers)
        return LoadSessionResponse(modes=_modes(session.mode))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        session = self._get(session_id)
        if mode_id not in {i for i, _ in MODES}:
            raise acp.RequestError.invalid_params({"details": f"unknown mode {mode_id!r}"})
        session.mode = mode_id
        await self._conn.session_update(session_id=session_id, update=update_current_mode(mode_id))
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        self._check_signed_in("prompt")
        session = self._get(session_id)
        text = "\n".join(block_text(block) for block in prompt)
        self._record(session_id, text)
        session.turn = work = asyncio.create_task(self._run(session_id, session, text))
        try:
            await asyncio.wait({work})
        except asyncio.CancelledError:
            work.cancel()
            raise
        finally:
            session.turn = None
        if work.cancelled():
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason=work.result())  # type: ignore[arg-type]  # _run returns END_TURN

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()

    def _get(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise acp.RequestError.invalid_params({"details": f"unknown session {session_id!r}"})
        return session

    def _record(self, session_id: str, text: str) -> None:
        if self._log:
            with open(self._log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"session_id": session_id, "prompt": text, "pid": os.getpid()}) + "\n")

    async def _run(self, session_id: str, session: _Session, text: str) -> str:
        for step in plan(text, load_answer(session.cwd)):
            if step.kind == "end":
                break
            await self._step(session_id, session, step)
        return END_TURN

    async def _step(self, session_id: str, session: _Session, step: Step) -> None:
        if step.kind == "say":
            await self._say(session_id, step.text)
        elif step.kind == "tool":
            await self._tool(session_id, session, step)
        elif step.kind == "sleep":
            await asyncio.sleep(step.seconds)
        elif step.kind == "fail":
            raise acp.RequestError(FAIL_CODE, step.text or "failed by /fail")
        elif step.kind == "on-question":
            save_answer(session.cwd, step.text)
        elif step.kind == "permission":
            await self._permission(session_id, step.text)

    async def _say(self, session_id: str, text: str) -> None:
        """One agent message per `/say`: its own messageId tells the client where the message starts."""
        update = acp.update_agent_message_text(text)
        update.message_id = f"say-{uuid.uuid4().hex}"
        await self._conn.session_update(session_id=session_id, update=update)

    async def _tool(self, session_id: str, session: _Session, step: Step) -> None:
        call_id = f"call-{next(self._tool_ids)}"
        start = acp.start_tool_call(
            call_id, step.tool or "tool", kind="other", status="pending", raw_input=step.arguments
        )
        await self._conn.session_update(session_id=session_id, update=start)
        if step.error is not None:
            ok, out, raw = False, step.error, None
        else:
            outcome = await call_tool(session.mcp, step.tool, step.arguments)
            ok, out, raw = outcome.ok, outcome.text, outcome.raw
        done = acp.update_tool_call(
            call_id,
            status="completed" if ok else "failed",
            content=[acp.tool_content(acp.text_block(out))],
            raw_output=raw if raw is not None else {"error": out},
        )
        await self._conn.session_update(session_id=session_id, update=done)

    async def _permission(self, session_id: str, title: str) -> None:
        call_id = f"call-{next(self._tool_ids)}"
        options = [
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ]
        answer = await self._conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id=call_id, title=title),
            options=options,
        )
        outcome = answer.outcome
        chosen = getattr(outcome, "option_id", None)
        await self._say(session_id, f"permission {title}: {chosen if chosen else outcome.outcome}")


def main() -> None:
    """Serve one client over stdin/stdout until it hangs up."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    asyncio.run(acp.run_agent(cast(acp.Agent, ScriptedAgent())))


if __name__ == "__main__":
    main()
