"""Translate ACP `session/update` payloads into redacted AgentUpdates (duck-typed: no acp import)."""

from __future__ import annotations

from typing import Any

from kandev.runtime.base import AgentUpdate, Redactor, UpdateKind

_CHUNKS: dict[str, UpdateKind] = {
    "agent_message_chunk": "agent_text",
    "agent_thought_chunk": "thought",
    "user_message_chunk": "user_text",
}
_TOOL_FIELDS = ("tool_call_id", "title", "kind", "status", "raw_input", "raw_output")


def block_text(block: Any) -> str:
    """The text of a content block: text blocks, embedded text resources and resource links."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind == "resource":
        return str(getattr(block.resource, "text", ""))
    if kind == "resource_link":
        return str(block.uri)
    return ""


def _dump(model: Any) -> Any:
    dump = getattr(model, "model_dump", None)
    return dump(mode="json", by_alias=False, exclude_none=True) if dump else model


def _tool_content(contents: list[Any] | None) -> tuple[str, list[Any]]:
    """Joined text and JSON of tool call content (content blocks, diffs, terminal refs)."""
    texts: list[str] = []
    for item in contents or []:
        if getattr(item, "type", None) == "content" and (text := block_text(item.content)):
            texts.append(text)
        elif getattr(item, "type", None) == "diff":
            texts.append(f"diff {item.path}")
    return "\n".join(texts), [_dump(item) for item in contents or []]


def translate(update: Any, redactor: Redactor) -> AgentUpdate:
    """One AgentUpdate for one ACP session update; unknown kinds become `other` with their JSON."""
    tag = getattr(update, "session_update", None)
    if tag in _CHUNKS:
        data: dict[str, Any] = {"message_id": update.message_id} if getattr(update, "message_id", None) else {}
        if getattr(update.content, "type", None) != "text":
            data["content"] = _dump(update.content)
        return AgentUpdate(_CHUNKS[tag], redactor.text(block_text(update.content)), redactor.data(data))
    if tag in ("tool_call", "tool_call_update"):
        data = {name: value for name in _TOOL_FIELDS if (value := getattr(update, name, None)) is not None}
        text, content = _tool_content(update.content)
        if update.content is not None:
            data["content"] = content
        if update.locations:
            data["locations"] = [_dump(loc) for loc in update.locations]
        kind: UpdateKind = "tool_call" if tag == "tool_call" else "tool_call_update"
        return AgentUpdate(kind, redactor.text(text), redactor.data(data))
    if tag == "plan":
        entries = [_dump(entry) for entry in update.entries]
        text = "\n".join(f"[{e.get('status', '')}] {e.get('content', '')}" for e in entries)
        return AgentUpdate("plan", redactor.text(text), redactor.data({"entries": entries}))
    if tag == "current_mode_update":
        return AgentUpdate("mode", update.current_mode_id, {"mode_id": update.current_mode_id})
    return AgentUpdate("other", "", redactor.data({"session_update": tag, **(_dump(update) or {})}))
