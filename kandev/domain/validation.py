"""Small input rules shared by services."""

from __future__ import annotations

import json
import re
from typing import Any

from kandev.domain.errors import ValidationError

MAX_TITLE_LENGTH = 200
MAX_EXTERNAL_ID_LENGTH = 500


def clean_title(value: str | None, field: str = "title") -> str:
    """Trimmed, non-empty, at most 200 characters."""
    title = (value or "").strip()
    if not title:
        raise ValidationError("title must not be empty", field=field)
    if len(title) > MAX_TITLE_LENGTH:
        raise ValidationError(f"title must be at most {MAX_TITLE_LENGTH} characters", field=field)
    return title


def clean_name(value: str | None, field: str = "name") -> str:
    name = (value or "").strip()
    if not name:
        raise ValidationError(f"{field} must not be empty", field=field)
    if len(name) > MAX_TITLE_LENGTH:
        raise ValidationError(f"{field} must be at most {MAX_TITLE_LENGTH} characters", field=field)
    return name


def clean_external_id(value: str | None) -> str | None:
    """Trimmed; empty means absent."""
    if value is None:
        return None
    value = value.strip()
    if len(value) > MAX_EXTERNAL_ID_LENGTH:
        raise ValidationError(f"external_id must be at most {MAX_EXTERNAL_ID_LENGTH} characters", field="external_id")
    return value or None


# -- limits every surface shares (GraphQL, MCP, REST) ---------------------------------------------

# The largest page a list returns: the web client's board loads 500 tasks a page, and more in one
# response only makes a single request slower without showing anything more.
PAGE_SIZE_LIMIT = 500


def check_first(first: int) -> None:
    """A connection's page size: 0 (just the page info) up to PAGE_SIZE_LIMIT."""
    if not 0 <= first <= PAGE_SIZE_LIMIT:
        raise ValidationError(f"first must be between 0 and {PAGE_SIZE_LIMIT}", field="first")


# GraphQL Int and the database's INTEGER columns are 32-bit; a larger number can only be a mistake.
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
# A prompt is text a person or an agent wrote: 1 MiB is far beyond any real one and keeps a single
# request from filling the queue, the transcript and every agent's context.
MAX_PROMPT_BYTES = 1024 * 1024
# Agent-profile environment: API keys and small settings, never files.
MAX_ENV_VALUE_BYTES = 32 * 1024
MAX_ENV_ENTRIES = 100
MAX_ENV_NAME_LENGTH = 256
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def text_problem(value: str) -> str | None:
    """Why a string can't be stored, or None: NUL (PostgreSQL refuses it, C strings end at it) and lone
    UTF-16 surrogates (not encodable as UTF-8) are never valid text."""
    if "\0" in value:
        return "must not contain NUL characters"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must be valid Unicode (it contains a lone surrogate)"
    return None


def _shown(key: object) -> str:
    # A key is named only when it looks like a field name: keys can be data too (env names, chart labels).
    return key if isinstance(key, str) and _FIELD_NAME.fullmatch(key) else "<key>"


def tree_problems(value: object, path: str) -> list[tuple[str, str]]:
    """(field, problem) for every unstorable string (values and object keys) in a JSON-like value."""
    found: list[tuple[str, str]] = []
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            found.append((path, problem))
    elif isinstance(value, dict):
        for key, item in value.items():
            key_problem = text_problem(key) if isinstance(key, str) else None
            if key_problem:
                found.append((path, f"has a key that {key_problem}"))
                continue
            found.extend(tree_problems(item, f"{path}.{_shown(key)}" if path else _shown(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(tree_problems(item, f"{path}[{index}]"))
    return found


def check_tree(value: object, path: str) -> None:
    """Raise a ValidationError naming the first unstorable string in `value` (never echoing it)."""
    problems = tree_problems(value, path)
    if problems:
        field, problem = problems[0]
        raise ValidationError(f"{field} {problem}", field=field)


def check_prompt(value: str | None, field: str = "prompt") -> None:
    """Prompts are valid text of at most MAX_PROMPT_BYTES (UTF-8)."""
    if value is None:
        return
    check_tree(value, field)
    if len(value) > MAX_PROMPT_BYTES // 4 and len(value.encode("utf-8")) > MAX_PROMPT_BYTES:
        raise ValidationError(f"{field} must be at most {MAX_PROMPT_BYTES} bytes (1 MiB)", field=field)


def check_env(env: dict[str, str] | None, field: str = "env") -> None:
    """Bounded count, name and value sizes; names and values valid text."""
    if env is None:
        return
    if len(env) > MAX_ENV_ENTRIES:
        raise ValidationError(f"{field} must have at most {MAX_ENV_ENTRIES} entries", field=field)
    for name, value in env.items():
        if len(name) > MAX_ENV_NAME_LENGTH:
            raise ValidationError(f"{field} names must be at most {MAX_ENV_NAME_LENGTH} characters", field=field)
        check_tree(value, f"{field}.{_shown(name)}")
        if len(value.encode("utf-8")) > MAX_ENV_VALUE_BYTES:
            raise ValidationError(
                f"{field} values must be at most {MAX_ENV_VALUE_BYTES} bytes (32 KiB) each",
                field=f"{field}.{_shown(name)}",
            )


# -- JSON that arrives as bytes (request bodies, GET parameters, webhook deliveries) ---------------

# The deepest real input, a rich-output presentation inside a GraphQL request's variables, nests under 10
# levels; 64 leaves room and keeps every recursive walk over the value (text checks, coercion, storage)
# far from Python's recursion limit, which a deeper value would hit as an unexpected error.
MAX_JSON_DEPTH = 64


def decode_json(raw: bytes | str, field: str = "body") -> Any:
    """The JSON value of `raw`; a ValidationError on `field` with reason `invalid_utf8`, `invalid_json` (NaN
    and Infinity included, which JSON does not have) or `too_deep` when it can't be one."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise ValidationError(f"the {field} is not valid UTF-8", field=field, reason="invalid_utf8") from None
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise _too_deep(field) from None
    except ValueError:
        raise ValidationError(f"the {field} is not valid JSON", field=field, reason="invalid_json") from None
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise _too_deep(field)
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _too_deep(field: str) -> ValidationError:
    message = f"the {field} nests deeper than {MAX_JSON_DEPTH} levels"
    return ValidationError(message, field=field, reason="too_deep", limit=MAX_JSON_DEPTH)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects in `value` nest more than `limit` levels (walked without recursion)."""
    pending: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while pending:
        node, depth = pending.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
