"""A local fake of two model APIs, Anthropic Messages and OpenAI Responses (streaming server-sent events), that
plays one scripted coding turn: call a Kandev MCP tool, write a file, then answer, each reply with known usage.

Stateless: each reply is decided from the conversation the agent sends, so agent retries and side requests
(titles, summaries) get sensible answers. Every request is recorded for the test's assertions."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KANDEV_TOOL = "list_tasks_kandev"
WRITTEN_FILE = "hello.txt"
WRITTEN_TEXT = "hello from a real agent\n"
FINAL_TEXT = "All done: the file is written."
# Per model reply; the test checks Kandev recorded what the agent reported of these.
USAGE = {"input": 120, "output": 30, "cache_read": 40, "cache_write": 8}


@dataclass
class FakeModelApi:
    """The running fake: its base URL, and what it was asked and answered."""

    base_url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, path: str, body: dict[str, Any], reply: str) -> None:
        with self.lock:
            self.requests.append({"path": path, "body": body})
            self.replies.append(reply)

    def steps(self) -> list[str]:
        with self.lock:
            return list(self.replies)


def _anthropic_step(body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The next step of the script for a Messages request: ('kandev'|'write', tool_use) or ('answer', None)."""
    tools = [t.get("name", "") for t in body.get("tools") or []]
    kandev = next((t for t in tools if t.endswith(KANDEV_TOOL)), None)
    results = {
        block.get("tool_use_id")
        for message in body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    }
    if kandev is None or "Write" not in tools:
        return "side", None
    if "toolu_kandev" not in results:
        return "kandev", {"id": "toolu_kandev", "name": kandev, "input": {}}
    if "toolu_write" not in results:
        return "write", {"id": "toolu_write", "name": "Write", "input": {"file_path": "", "content": WRITTEN_TEXT}}
    return "answer", None


def _working_dir(body: dict[str, Any], fallback: str) -> str:
    """The agent's working directory as its system prompt states it (Claude Code: "Working directory: ...")."""
    system = body.get("system")
    texts = [system] if isinstance(system, str) else [b.get("text", "") for b in system or [] if isinstance(b, dict)]
    for text in texts:
        if (match := re.search(r"Working directory: (\S+)", text)) is not None:
            return match.group(1)
    return fallback


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_stream(body: dict[str, Any], cwd_hint: str) -> tuple[str, list[bytes]]:
    step, tool = _anthropic_step(body)
    model = body.get("model") or "claude-fake"
    usage = {
        "input_tokens": USAGE["input"],
        "output_tokens": 1,
        "cache_read_input_tokens": USAGE["cache_read"],
        "cache_creation_input_tokens": USAGE["cache_write"],
    }
    start = {"id": f"msg_{step}", "type": "message", "role": "assistant", "model": model, "content": []}
    start.update(stop_reason=None, stop_sequence=None, usage=usage)
    events = [_sse("message_start", {"type": "message_start", "message": start})]
    if tool is not None:
        if tool["name"] == "Write":
            tool["input"]["file_path"] = f"{_working_dir(body, cwd_hint)}/{WRITTEN_FILE}"
        block = {"type": "tool_use", "id": tool["id"], "name": tool["name"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool["input"])}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": FINAL_TEXT if step == "answer" else "Fake title"}
        stop = "end_turn"
    events += [
        _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": USAGE["output"]},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return step, events


def _responses_step(body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The next step for a Responses request: a function call to the Kandev tool, a shell command writing the
    file (Codex asks permission for it), or the answer."""
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    # MCP tools come as plain functions (`mcp__kandev__…`) or grouped in a `namespace` tool (Codex 0.16).
    named = [
        ({"namespace": t["name"]} if t.get("type") == "namespace" else {}, inner)
        for t in tools
        for inner in t.get("tools") or [t]
    ]
    kandev = next(
        ({**where, "name": i["name"]} for where, i in named if str(i.get("name", "")).endswith(KANDEV_TOOL)), None
    )
    shell = next((t["name"] for t in tools if t.get("name") in ("shell", "exec_command", "shell_command")), None)
    outputs = {
        item.get("call_id")
        for item in body.get("input") or []
        if isinstance(item, dict) and item.get("type", "").endswith("_call_output")
    }
    if kandev is None or shell is None:
        return "side", None
    if "call_kandev" not in outputs:
        return "kandev", {"call_id": "call_kandev", **kandev, "arguments": "{}"}
    if "call_write" not in outputs:
        command = f"printf '%s' '{WRITTEN_TEXT.strip()}' > {WRITTEN_FILE} && echo >> {WRITTEN_FILE}"
        args: dict[str, Any]
        if shell == "exec_command":
            args = {"cmd": command, "sandbox_permissions": "require_escalated", "justification": "write the file"}
        elif shell == "shell_command":
            args = {"command": command, "sandbox_permissions": "require_escalated", "justification": "write the file"}
        else:
            args = {"command": ["bash", "-lc", command], "with_escalated_permissions": True}
        return "write", {"call_id": "call_write", "name": shell, "arguments": json.dumps(args)}
    return "answer", None


def responses_stream(body: dict[str, Any]) -> tuple[str, list[bytes]]:
    step, call = _responses_step(body)
    response = {"id": f"resp_{step}", "object": "response", "model": body.get("model") or "gpt-fake"}
    events = [_sse("response.created", {"type": "response.created", "response": {**response, "status": "in_progress"}})]
    if call is not None:
        item = {"type": "function_call", "id": f"fc_{step}", "status": "completed", **call}
    else:
        text = FINAL_TEXT if step == "answer" else "Fake title"
        item = {
            "type": "message",
            "id": f"msg_{step}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        events.append(
            _sse(
                "response.output_text.delta",
                {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "delta": text},
            )
        )
    events.append(
        _sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item})
    )
    usage = {
        "input_tokens": USAGE["input"] + USAGE["cache_read"],
        "input_tokens_details": {"cached_tokens": USAGE["cache_read"]},
        "output_tokens": USAGE["output"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": USAGE["input"] + USAGE["cache_read"] + USAGE["output"],
    }
    completed = {**response, "status": "completed", "usage": usage, "output": [item]}
    events.append(_sse("response.completed", {"type": "response.completed", "response": completed}))
    return step, events


class _Handler(BaseHTTPRequestHandler):
    fake: FakeModelApi
    cwd_hint: str

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.fake.record(self.path, {}, "get")
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"type": "not_found", "message": "not here"}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?", 1)[0]
        if path.endswith("/messages/count_tokens"):
            self.fake.record(path, body, "count")
            self._json(200, {"input_tokens": 10})
            return
        if path.endswith("/messages"):
            step, events = anthropic_stream(body, self.cwd_hint)
        elif path.endswith("/responses"):
            step, events = responses_stream(body)
        else:
            self.fake.record(path, body, "unknown")
            self._json(404, {"error": {"type": "not_found", "message": "not here"}})
            return
        self.fake.record(path, body, step)
        if not body.get("stream", False) and path.endswith("/messages"):
            self._json(200, _collapse(events))
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for event in events:
            self.wfile.write(event)
            self.wfile.flush()
        self.close_connection = True


def _collapse(events: list[bytes]) -> dict[str, Any]:
    """A non-streaming Messages answer made of the streamed events (for side requests)."""
    parsed = [json.loads(e.decode().split("data: ", 1)[1]) for e in events]
    message = dict(parsed[0]["message"])
    block = dict(parsed[1]["content_block"])
    delta = parsed[2]["delta"]
    if block["type"] == "text":
        block["text"] = delta["text"]
    else:
        block["input"] = json.loads(delta["partial_json"])
    message.update(content=[block], stop_reason=parsed[4]["delta"]["stop_reason"])
    message["usage"] = {**message["usage"], "output_tokens": USAGE["output"]}
    return message


@contextmanager
def fake_model_api(cwd_hint: str = ".") -> Iterator[FakeModelApi]:
    """The fake on a free loopback port, for as long as the block runs."""
    fake = FakeModelApi()
    handler = type("Handler", (_Handler,), {"fake": fake, "cwd_hint": cwd_hint})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="fake-model-api", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
