"""Prompt and title templates of automations: `{{...}}` placeholders filled from a firing's trigger, in one pass.

Placeholders (spaces inside the braces are ignored):

- `{{trigger.type}}`, `{{trigger.timestamp}}` (RFC 3339 UTC, `2026-06-01T09:00:00Z`);
- `{{data.<path>}}`: the trigger data (`{{data}}` alone is all of it);
- `{{pr.<field>}}` for GitHub PR runs, the spec's fields: number, title, url, author, repo, branch,
  base_branch, body;
- `{{webhook.body}}`: the request body as received (the re-serialized payload when the raw text is not kept),
  and `{{webhook.<path>}}` into the parsed payload (`{{webhook}}` alone is all of it).

A path is dot-separated: a segment names a key of an object or, when all digits, an index of an array
(`{{webhook.commits.0.message}}`). Strings are inserted as they are, numbers as text, booleans as true/false,
null as nothing, objects and arrays as compact JSON. A placeholder that resolves to nothing is removed.

Trigger payloads are untrusted, so rendering is inert: no expression is evaluated, a value is never
scanned for placeholders again (a payload holding `{{data.secret}}` stays that text), and the output stops at
a byte bound however large the payload.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from kandev.domain.validation import MAX_PROMPT_BYTES

PR_FIELDS = frozenset({"number", "title", "url", "author", "repo", "branch", "base_branch", "body"})

_PLACEHOLDER = re.compile(r"\{\{([^{}]*)\}\}")
_INDEX = re.compile(r"[0-9]+")
_MISSING = object()


@dataclass(frozen=True)
class TemplateContext:
    """What one firing offers its templates; `webhook` is the parsed payload, `webhook_body` the raw text."""

    trigger_type: str
    trigger_timestamp: datetime
    data: object  # any JSON value (a webhook's array or scalar body included)
    pr: Mapping[str, object] | None = None
    webhook_body: str | None = None
    webhook: object | None = None

    def __post_init__(self) -> None:
        if self.trigger_timestamp.tzinfo is None or self.trigger_timestamp.utcoffset() is None:
            raise ValueError("trigger_timestamp must be timezone-aware")


def render(template: str, context: TemplateContext, *, limit: int = MAX_PROMPT_BYTES) -> str:
    """`template` with every placeholder filled or removed, at most `limit` UTF-8 bytes long."""
    pieces: list[str] = []
    size = 0
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        for piece in (template[position : match.start()], _text(_resolve(match[1].strip(), context))):
            pieces.append(piece)
            size += len(piece.encode(errors="surrogatepass"))
            if size > limit:
                return _clip("".join(pieces), limit)
        position = match.end()
    pieces.append(template[position:])
    return _clip("".join(pieces), limit)


def _resolve(name: str, context: TemplateContext) -> object:
    root, _, path = name.partition(".")
    if root == "trigger":
        if path == "type":
            return context.trigger_type
        if path == "timestamp":
            return context.trigger_timestamp.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        return _MISSING
    if root == "data":
        return _walk(context.data, path)
    if root == "pr":
        if context.pr is None or path not in PR_FIELDS:
            return _MISSING
        return context.pr.get(path, _MISSING)
    if root == "webhook":
        if path == "body":
            if context.webhook_body is not None:
                return context.webhook_body
            return _MISSING if context.webhook is None else _json(context.webhook)
        return _MISSING if context.webhook is None else _walk(context.webhook, path)
    return _MISSING


def _walk(value: object, path: str) -> object:
    """The value at a dotted path (`items.0.name`), or _MISSING."""
    if not path:
        return value
    for segment in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(segment, _MISSING)
        elif isinstance(value, Sequence) and not isinstance(value, str | bytes) and _INDEX.fullmatch(segment):
            index = int(segment)
            value = value[index] if index < len(value) else _MISSING
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def _text(value: object) -> str:
    """A resolved value as prompt text, storable whatever the payload held (no NUL, no lone surrogate)."""
    if value is _MISSING or value is None:
        text = ""
    elif isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float | Mapping | list | tuple):
        text = _json(value)
    else:
        text = str(value)
    return text.replace("\x00", "").encode(errors="replace").decode()


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _clip(text: str, limit: int) -> str:
    """At most `limit` UTF-8 bytes, never splitting a character."""
    encoded = text.encode(errors="surrogatepass")
    if len(encoded) <= limit:
        return text
    for end in range(limit, max(limit - 4, 0), -1):
        try:
            return encoded[:end].decode(errors="surrogatepass")
        except UnicodeDecodeError:
            continue
    return ""
