"""Request bodies (and GET parameters) read as JSON, with a typed refusal for each way one can be bad: not
UTF-8, not JSON, or nested beyond what any real input needs (deep nesting would otherwise break the
recursive code every later reader runs, as a 500)."""

from __future__ import annotations

import json
from typing import Any

from kandev.domain.errors import ValidationError

# The deepest real input, a rich-output presentation inside a GraphQL request's variables, nests under 10
# levels; 64 leaves room and keeps every recursive walk over the value (text checks, coercion) shallow.
MAX_JSON_DEPTH = 64


def decode_json_body(raw: bytes | str) -> Any:
    """The JSON value of `raw`; a ValidationError on field `body` (reason `invalid_utf8`, `invalid_json` or
    `too_deep`) when it can't be one."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise ValidationError("the body is not valid UTF-8", field="body", reason="invalid_utf8") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep() from None
    except ValueError:
        raise ValidationError("the body is not valid JSON", field="body", reason="invalid_json") from None
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise _too_deep()
    return value


def _too_deep() -> ValidationError:
    return ValidationError(
        f"the body nests deeper than {MAX_JSON_DEPTH} levels", field="body", reason="too_deep", limit=MAX_JSON_DEPTH
    )


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
