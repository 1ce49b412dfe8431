"""The built-in deterministic agent: an ACP agent over stdio that follows the directives in its prompt.

Run it as `python -m kandev.runtime.scripted`. It speaks ACP's JSON-RPC 2.0 (newline-delimited JSON) with the
standard library alone, each turn on a thread of its own, so a start costs an interpreter and no more: only `/tool`
loads asyncio and the MCP client. Directives (DESIGN.md, one per line, other lines
ignored, the `<kandev-context>` block stripped first):

    /say TEXT             agent message TEXT (each /say its own message, with its own messageId)
    /tool NAME JSON       call NAME on the session's `kandev` MCP server (a tool call: pending -> done)
    /sleep SECONDS        wait; `session/cancel` ends the turn at once with stop reason `cancelled`
    /fail TEXT            answer session/prompt with JSON-RPC error -32603 and message TEXT
    /end                  end the turn now (end_turn)
    /on-question TEXT     remember TEXT (in `.kandev-scripted.json` in the session cwd) as the answer to
                          every later parent question
    /write PATH           write the lines that follow, up to a line `/end-write`, to PATH (relative to the
                          session cwd; folders made as needed): an `edit` tool call
    /delete PATH          delete the file (or link) PATH: a `delete` tool call
    /run COMMAND          run COMMAND with /bin/sh in the session cwd once the client allows it (ACP
                          `session/request_permission`, which the profile's permission policy answers: ALLOW,
                          DENY, or ASK a person): an `execute` tool call with its output and exit status
    /permission TITLE     (extra, for tests) ask `session/request_permission` and say the outcome
    /usage JSON           (extra, for tests) `tokens` (ACP Usage fields) are added to the prompt answer's
                          `usage`; the other fields (`used`, `size`, `cost`) go out verbatim as a `usage_update`
    /attachments          (extra, for tests) say, as JSON, the image and resource blocks the prompt carried
                          (type, mime type, uri, size and sha256 of their bytes)

A parent question is recognised by a line holding a JSON object with string fields `task_id` and
`reply_to_question_id` (the reply shape of `message_task_kandev`), anywhere in a later prompt, e.g.
`{"tool": "message_task_kandev", "task_id": "T1", "reply_to_question_id": "Q1"}`; with an answer
remembered it becomes `/tool message_task_kandev {"task_id": ..., "reply_to_question_id": ...,
"prompt": TEXT}`. A prompt with no directive gets one agent message echoing its first non-empty line; a
Kandev utility request (a prompt opening with `<kandev-utility`, e.g. for a commit message) gets the fixed answer
"Apply the task's changes" and nothing else.

Environment: `KANDEV_SCRIPTED_LOAD=1` advertises `loadSession` (off by default so callers exercise
the synthesized-history path); `KANDEV_SCRIPTED_LOG=FILE` appends `{"session_id", "prompt", "pid"}` per prompt;
`KANDEV_SCRIPTED_AUTH=launch` acts as an agent that is not signed in (it offers a sign-in method and answers
`session/new` and `session/load` with ACP's auth_required error, as Claude Code does without a login),
`KANDEV_SCRIPTED_AUTH=prompt` as one whose sign-in expired (every `session/prompt` gets that error);
`KANDEV_SCRIPTED_PROMPT_CAPABILITIES=image,embeddedContext` (either or both) advertises those
promptCapabilities, so a client may send it image content and embedded resources.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

from kandev import __version__
from kandev.runtime.scripted_directives import Step, load_answer, plan, save_answer
from kandev.runtime.scripted_tools import McpTarget, StdioTarget, ToolOutcome
from kandev.runtime.wire_names import END_TURN, MCP_SERVER_NAME

PROTOCOL_VERSION = 1  # ACP's protocol version (acp.PROTOCOL_VERSION)
FAIL_CODE = -32603
MODES = (("default", "Default"), ("plan", "Plan"))
_REQUIRED = {
    "initialize": ("protocolVersion",),
    "session/new": ("cwd", "mcpServers"),
    "session/load": ("cwd", "mcpServers", "sessionId"),
    "session/set_mode": ("modeId", "sessionId"),
    "session/prompt": ("prompt", "sessionId"),
}
_AUTH_DETAILS = {"details": "Invalid API key · Please run /login"}
# The tail of a `/run` command's output the tool call reports.
_RUN_OUTPUT = 64 * 1024


class RpcError(Exception):
    """A JSON-RPC error answer, shaped as the acp library shapes it (`data` always present)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "data": self.data}


def _invalid_params(data: Any) -> RpcError:
    return RpcError(-32602, "Invalid params", data)


class _Cancelled(Exception):
    """The turn was cancelled by `session/cancel` (or the client hung up)."""


class _Turn:
    """One running `session/prompt`: cancelling it wakes whatever the turn waits on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._wakers: list[Callable[[], None]] = []
        # `/usage` tokens, answered as the turn's `usage`.
        self.usage: dict[str, Any] = {}

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            self._cancelled, wakers = True, list(self._wakers)
        for wake in wakers:
            wake()

    def on_cancel(self, wake: Callable[[], None]) -> None:
        """Call `wake` when the turn is cancelled (now, if it already is)."""
        with self._lock:
            if not self._cancelled:
                self._wakers.append(wake)
                return
        wake()

    def check(self) -> None:
        if self._cancelled:
            raise _Cancelled

    def wait(self, event: threading.Event, timeout: float | None = None) -> None:
        """Wait for `event` (or `timeout`), raising _Cancelled as soon as the turn is cancelled."""
        self.on_cancel(event.set)
        event.wait(timeout)
        self.check()


class _Session:
    __slots__ = ("blocks", "cwd", "mcp", "mode", "servers", "turn")

    def __init__(self, cwd: str, mcp: McpTarget | StdioTarget | None, servers: Any = None) -> None:
        self.cwd = cwd
        self.mcp = mcp
        # Every MCP server entry of the last session/new or session/load, as received.
        self.servers: list[dict[str, Any]] = [s for s in servers or [] if isinstance(s, dict)]
        self.mode = "default"
        self.turn: _Turn | None = None
        # The content blocks of the prompt being run.
        self.blocks: list[Any] = []


class _Pending:
    """An outgoing request awaiting the client's answer."""

    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: RpcError | None = None


def block_text(block: Any) -> str:
    """The text of a content block: text blocks, embedded text resources and resource links."""
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource":
        resource = block.get("resource")
        return str(resource.get("text", "")) if isinstance(resource, dict) else ""
    if kind == "resource_link":
        return str(block.get("uri", ""))
    return ""


def _kandev_server(servers: Any) -> McpTarget | StdioTarget | None:
    """The session's `kandev` server: http, or in a box the stdio bridge to the session's socket."""
    return _server_target([s for s in servers or [] if isinstance(s, dict)], MCP_SERVER_NAME)


def _server_target(servers: list[dict[str, Any]], name: str) -> McpTarget | StdioTarget | None:
    """The named server received in session/new: http (url, headers) or stdio (command, args, env)."""
    for server in servers:
        if server.get("name") != name:
            continue
        if server.get("url"):
            return McpTarget(server["url"], {h["name"]: h["value"] for h in server.get("headers") or []})
        if server.get("command"):
            env = {e["name"]: e["value"] for e in server.get("env") or []}
            return StdioTarget(server["command"], list(server.get("args") or []), env)
    return None


def mcp_report(servers: list[dict[str, Any]]) -> str:
    """`/mcp-servers`: the names and origins (Kandev's `_meta.kandev.origins`) received, as JSON."""
    report = []
    for server in servers:
        meta = server.get("_meta")
        kandev = meta.get("kandev") if isinstance(meta, dict) else None
        origins = kandev.get("origins") if isinstance(kandev, dict) else None
        report.append({"name": server.get("name"), "origins": origins if isinstance(origins, list) else []})
    return json.dumps({"mcp_servers": report}, sort_keys=True)


def attachments_report(blocks: list[Any]) -> str:
    """`/attachments`: the image and resource blocks received, with the size and sha256 of their bytes."""
    report = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") not in ("image", "resource"):
            continue
        source = block if block["type"] == "image" else block.get("resource") or {}
        if "text" in source:
            data = str(source["text"]).encode()
        else:
            data = base64.b64decode(str(source.get("data") or source.get("blob") or ""))
        report.append(
            {
                "type": block["type"],
                "mime_type": source.get("mimeType"),
                "uri": source.get("uri"),
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
    return json.dumps({"attachments": report}, sort_keys=True)


def _modes(current: str) -> dict[str, Any]:
    return {"currentModeId": current, "availableModes": [{"id": i, "name": n} for i, n in MODES]}


def _text(text: str) -> dict[str, Any]:
    return {"text": text, "type": "text"}


class ScriptedAgent:
    """ACP agent side: sessions live in memory for the life of the process; each turn runs in its own thread."""

    NAME = "kandev-scripted"

    def __init__(self, out: IO[bytes] | None = None) -> None:
        self._out = out if out is not None else sys.stdout.buffer
        self._write_lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}
        self._tool_ids = itertools.count(1)
        self._request_ids = itertools.count(0)
        self._pending: dict[Any, _Pending] = {}
        self._turns: set[_Turn] = set()
        self._closed = False
        self._load = os.environ.get("KANDEV_SCRIPTED_LOAD") == "1"
        self._log = os.environ.get("KANDEV_SCRIPTED_LOG")
        self._auth = os.environ.get("KANDEV_SCRIPTED_AUTH", "")
        caps = {c.strip() for c in os.environ.get("KANDEV_SCRIPTED_PROMPT_CAPABILITIES", "").split(",")}
        self._prompt_caps = {"image": "image" in caps, "embeddedContext": "embeddedContext" in caps}

    # -- transport: newline-delimited JSON-RPC 2.0 ---------------------------------------------------

    def serve(self, lines: IO[bytes] | None = None) -> None:
        """Serve one client until it hangs up; running turns are then cancelled without an answer."""
        for line in lines if lines is not None else sys.stdin.buffer:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                print("scripted agent: ignoring a line that is not JSON", file=sys.stderr)
                continue
            if isinstance(message, dict):
                self._receive(message)
        self._closed = True
        for turn in list(self._turns):
            turn.cancel()

    def _send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        with self._write_lock:
            if self._closed:
                return
            try:
                self._out.write(data)
                self._out.flush()
            except OSError:  # the client is gone; the read loop ends at its EOF
                self._closed = True

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _request(self, turn: _Turn, method: str, params: dict[str, Any]) -> Any:
        """Ask the client and wait for its answer (a turn's cancellation stops the wait)."""
        request_id = next(self._request_ids)
        pending = self._pending[request_id] = _Pending()
        try:
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            turn.wait(pending.done)
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    def _receive(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            if "id" in message:
                self._answered(message)
            return
        params = message.get("params")
        if "id" not in message:
            if method == "session/cancel" and isinstance(params, dict):
                self.cancel(params.get("sessionId"))
            return
        if method == "session/prompt":
            threading.Thread(target=self._respond, args=(message, method, params), daemon=True).start()
        else:
            self._respond(message, method, params)

    def _answered(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        pending = self._pending.get(request_id) if isinstance(request_id, int) else None
        if pending is None:
            return
        if "error" in message:
            error = message.get("error") or {}
            pending.error = RpcError(error.get("code", -32603), error.get("message", "Error"), error.get("data"))
        else:
            pending.result = message.get("result")
        pending.done.set()

    def _respond(self, message: dict[str, Any], method: str, params: Any) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = self._handle(method, params if isinstance(params, dict) else {})
        except RpcError as exc:
            reply["error"] = exc.to_json()
        except Exception as exc:  # as the acp library answers an unexpected failure
            print(f"scripted agent: {method} failed: {exc!r}", file=sys.stderr)
            reply["error"] = RpcError(FAIL_CODE, "Internal error", {"details": str(exc)}).to_json()
        self._send(reply)

    def _handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method not in _REQUIRED:
            raise RpcError(-32601, "Method not found", {"method": method})
        missing = [name for name in _REQUIRED[method] if name not in params]
        if missing:
            raise _invalid_params(
                {"errors": [{"type": "missing", "loc": [n], "msg": "Field required"} for n in missing]}
            )
        if method == "initialize":
            return self.initialize()
        if method == "session/new":
            return self.new_session(params["cwd"], params["mcpServers"])
        if method == "session/load":
            return self.load_session(params["cwd"], params["sessionId"], params["mcpServers"])
        if method == "session/set_mode":
            return self.set_session_mode(params["sessionId"], params["modeId"])
        return self.prompt(params["sessionId"], params["prompt"])

    # -- ACP methods ---------------------------------------------------------------------------------

    def initialize(self) -> dict[str, Any]:
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": self._load,
                "mcpCapabilities": {"http": True},
                "promptCapabilities": self._prompt_caps,
            },
            "authMethods": [{"id": "scripted-login", "name": "Scripted login"}] if self._auth else [],
            "agentInfo": {"name": self.NAME, "version": __version__},
        }

    def _check_signed_in(self, when: str) -> None:
        if self._auth == when:
            raise RpcError(-32000, "Authentication required", dict(_AUTH_DETAILS))

    def new_session(self, cwd: str, mcp_servers: Any) -> dict[str, Any]:
        self._check_signed_in("launch")
        session_id = os.urandom(16).hex()
        self._sessions[session_id] = _Session(cwd, _kandev_server(mcp_servers), mcp_servers)
        return {"sessionId": session_id, "modes": _modes("default")}

    def load_session(self, cwd: str, session_id: str, mcp_servers: Any) -> dict[str, Any]:
        self._check_signed_in("launch")
        # A fresh process knows no sessions: an unknown id is simply adopted (nothing to replay).
        session = self._sessions.setdefault(session_id, _Session(cwd, None))
        session.cwd, session.mcp = cwd, _kandev_server(mcp_servers)
        session.servers = [s for s in mcp_servers or [] if isinstance(s, dict)]
        return {"modes": _modes(session.mode)}

    def set_session_mode(self, session_id: str, mode_id: str) -> dict[str, Any]:
        session = self._get(session_id)
        if mode_id not in {i for i, _ in MODES}:
            raise _invalid_params({"details": f"unknown mode {mode_id!r}"})
        session.mode = mode_id
        self._update(session_id, {"currentModeId": mode_id, "sessionUpdate": "current_mode_update"})
        return {}

    def prompt(self, session_id: str, prompt: Any) -> dict[str, Any]:
        self._check_signed_in("prompt")
        session = self._get(session_id)
        if not isinstance(prompt, list):
            raise _invalid_params(
                {"errors": [{"type": "list_type", "loc": ["prompt"], "msg": "Input should be a valid list"}]}
            )
        text = "\n".join(block_text(block) for block in prompt)
        self._record(session_id, text)
        session.turn = turn = _Turn()
        session.blocks = prompt
        self._turns.add(turn)
        try:
            self._run(turn, session_id, session, text)
        except _Cancelled:
            return {"stopReason": "cancelled"}
        finally:
            self._turns.discard(turn)
            if session.turn is turn:
                session.turn = None
        return {"stopReason": END_TURN, "usage": turn.usage} if turn.usage else {"stopReason": END_TURN}

    def cancel(self, session_id: Any) -> None:
        session = self._sessions.get(session_id) if isinstance(session_id, str) else None
        if session is not None and session.turn is not None:
            session.turn.cancel()

    def _get(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise _invalid_params({"details": f"unknown session {session_id!r}"})
        return session

    def _record(self, session_id: str, text: str) -> None:
        if self._log:
            with open(self._log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"session_id": session_id, "prompt": text, "pid": os.getpid()}) + "\n")

    def _update(self, session_id: str, update: dict[str, Any]) -> None:
        self._notify("session/update", {"sessionId": session_id, "update": update})

    # -- the directives ------------------------------------------------------------------------------

    def _run(self, turn: _Turn, session_id: str, session: _Session, text: str) -> None:
        for step in plan(text, load_answer(session.cwd)):
            turn.check()
            if step.kind == "end":
                break
            self._step(turn, session_id, session, step)
        turn.check()

    def _step(self, turn: _Turn, session_id: str, session: _Session, step: Step) -> None:
        if step.kind == "say":
            self._say(session_id, step.text)
        elif step.kind == "tool":
            self._tool(turn, session_id, session, step)
        elif step.kind == "sleep":
            turn.wait(threading.Event(), step.seconds)
        elif step.kind == "fail":
            raise RpcError(FAIL_CODE, step.text or "failed by /fail")
        elif step.kind == "on-question":
            save_answer(session.cwd, step.text)
        elif step.kind == "permission":
            self._permission(turn, session_id, step.text)
        elif step.kind == "mcp-servers":
            self._say(session_id, mcp_report(session.servers))
        elif step.kind in ("write", "delete"):
            self._change_file(session_id, session, step)
        elif step.kind == "run":
            self._run_command(turn, session_id, session, step)
        elif step.kind == "attachments":
            self._say(session_id, attachments_report(session.blocks))
        elif step.kind == "usage":
            self._usage(turn, session_id, step.text)

    def _usage(self, turn: _Turn, session_id: str, text: str) -> None:
        try:
            report = json.loads(text)
        except ValueError:
            return
        if not isinstance(report, dict):
            return
        tokens = report.pop("tokens", None)
        if isinstance(tokens, dict):
            for key, value in tokens.items():
                turn.usage[key] = turn.usage.get(key, 0) + value if isinstance(value, int) else value
        if report:
            self._update(session_id, {**report, "sessionUpdate": "usage_update"})

    def _tool_call(self, session_id: str, kind: str, title: str, raw_input: dict[str, Any], **extra: Any) -> str:
        """Announce a tool call (pending); returns its id."""
        call_id = f"call-{next(self._tool_ids)}"
        start = {"toolCallId": call_id, "title": title, "kind": kind, "status": "pending", "rawInput": raw_input}
        self._update(session_id, {**start, **extra, "sessionUpdate": "tool_call"})
        return call_id

    def _tool_done(self, session_id: str, call_id: str, ok: bool, text: str, raw: dict[str, Any]) -> None:
        done = {
            "toolCallId": call_id,
            "status": "completed" if ok else "failed",
            "content": [{"content": _text(text), "type": "content"}],
            "rawOutput": raw,
            "sessionUpdate": "tool_call_update",
        }
        self._update(session_id, done)

    def _change_file(self, session_id: str, session: _Session, step: Step) -> None:
        """`/write` and `/delete`: an edit or delete tool call on a file of the working directory."""
        path = os.path.join(session.cwd, step.text)
        writing = step.kind == "write"
        title = f"{'Write' if writing else 'Delete'} {step.text}"
        locations = [{"path": path}]
        call_id = self._tool_call(
            session_id, "edit" if writing else "delete", title, {"path": step.text}, locations=locations
        )
        if step.error is not None:
            self._tool_done(session_id, call_id, False, step.error, {"error": step.error})
            return
        try:
            if writing:
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                with open(path, "w", encoding="utf-8") as file:
                    file.write(step.content)
                said = f"wrote {len(step.content.encode('utf-8'))} bytes to {step.text}"
            else:
                os.remove(path)
                said = f"deleted {step.text}"
        except OSError as exc:
            failed = f"{step.kind} {step.text}: {exc.strerror or exc}"
            self._tool_done(session_id, call_id, False, failed, {"error": failed})
            return
        self._tool_done(session_id, call_id, True, said, {"path": step.text})

    def _run_command(self, turn: _Turn, session_id: str, session: _Session, step: Step) -> None:
        """`/run`: asks permission for the command (the client's policy answers), then runs it in the cwd."""
        title = f"Run: {step.text}"
        call_id = self._tool_call(session_id, "execute", title, {"command": step.text})
        if step.error is not None:
            self._tool_done(session_id, call_id, False, step.error, {"error": step.error})
            return
        asked = {"title": title, "kind": "execute", "rawInput": {"command": step.text}}
        if self._ask(turn, session_id, call_id, asked) != "allow":
            refused = f"not permitted to run: {step.text}"
            self._tool_done(session_id, call_id, False, refused, {"error": refused})
            return
        process = subprocess.Popen(
            ["/bin/sh", "-c", step.text],
            cwd=session.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        turn.on_cancel(lambda: _kill_group(process))
        output, _ = process.communicate()
        turn.check()
        text = output[-_RUN_OUTPUT:].decode("utf-8", "replace")
        said = f"{text}{'' if not text or text.endswith(chr(10)) else chr(10)}exit status {process.returncode}"
        self._tool_done(
            session_id, call_id, process.returncode == 0, said, {"exit_code": process.returncode, "output": text}
        )

    def _ask(self, turn: _Turn, session_id: str, call_id: str, tool_call: dict[str, Any]) -> str | None:
        """The option the client chose for a permission request about `tool_call` (None: cancelled)."""
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        tool_call = {**tool_call, "toolCallId": call_id}
        params = {"sessionId": session_id, "toolCall": tool_call, "options": options}
        answer = self._request(turn, "session/request_permission", params)
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") not in ("selected", "cancelled"):
            raise _invalid_params({"details": f"not a permission outcome: {answer!r}"})
        chosen = outcome.get("optionId")
        return chosen if isinstance(chosen, str) else None

    def _say(self, session_id: str, text: str) -> None:
        """One agent message per `/say`: its own messageId tells the client where the message starts."""
        message_id = f"say-{os.urandom(16).hex()}"
        self._update(
            session_id, {"content": _text(text), "messageId": message_id, "sessionUpdate": "agent_message_chunk"}
        )

    def _tool(self, turn: _Turn, session_id: str, session: _Session, step: Step) -> ToolOutcome:
        """A tool call as the client sees it (pending, then completed or failed) and its outcome."""
        call_id = f"call-{next(self._tool_ids)}"
        title = step.tool or "tool"
        start = {"toolCallId": call_id, "title": title, "kind": "other", "status": "pending"}
        self._update(session_id, {**start, "rawInput": dict(step.arguments), "sessionUpdate": "tool_call"})
        if step.error is not None:
            outcome = ToolOutcome(False, step.error)
        elif "/" in step.tool:  # SERVER/NAME: a tool of another server received in session/new
            server, _, tool = step.tool.partition("/")
            target = _server_target(session.servers, server)
            if target is None:
                outcome = ToolOutcome(False, f"no MCP server named {server!r} was given in session/new")
            else:
                outcome = _call_tool(turn, target, tool, step.arguments)
        else:
            outcome = _call_tool(turn, session.mcp, step.tool, step.arguments)
        ok, out, raw = outcome
        done = {
            "toolCallId": call_id,
            "status": "completed" if ok else "failed",
            "content": [{"content": _text(out), "type": "content"}],
            "rawOutput": raw if raw is not None else {"error": out},
            "sessionUpdate": "tool_call_update",
        }
        self._update(session_id, done)
        return outcome

    def _permission(self, turn: _Turn, session_id: str, title: str) -> None:
        chosen = self._ask(turn, session_id, f"call-{next(self._tool_ids)}", {"title": title})
        self._say(session_id, f"permission {title}: {chosen or 'cancelled'}")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """The command and everything it started (its own process group)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _call_tool(
    turn: _Turn, target: McpTarget | StdioTarget | None, name: str, arguments: Mapping[str, Any]
) -> ToolOutcome:
    """Run the MCP call on an event loop of this turn's own; asyncio and the MCP client load only here."""
    import asyncio
    import contextlib

    from kandev.runtime.scripted_tools import call_tool  # lazy: start-up: the MCP client, for /tool turns alone

    async def call() -> ToolOutcome:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None

        def cancel() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has already finished
                loop.call_soon_threadsafe(task.cancel)

        turn.on_cancel(cancel)
        return await call_tool(target, name, dict(arguments))

    try:
        return asyncio.run(call())
    except asyncio.CancelledError:
        raise _Cancelled from None


def main() -> None:
    """Serve one client over stdin/stdout until it hangs up."""
    ScriptedAgent().serve()


if __name__ == "__main__":
    main()
