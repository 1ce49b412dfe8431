"""Tool arguments checked against the advertised schema before any handler runs.

Messages are written by hand and never echo a submitted value: a client may have put a secret
in the wrong field, and tool errors end up in agent transcripts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_CONSTRAINTS = {
    "minLength": "is too short",
    "maxLength": "is too long",
    "pattern": "does not have the expected format",
    "minimum": "is too small",
    "maximum": "is too large",
    "exclusiveMinimum": "is too small",
    "exclusiveMaximum": "is too large",
    "minItems": "has too few items",
    "maxItems": "has too many items",
    "uniqueItems": "has duplicate items",
    "minProperties": "has too few entries",
    "maxProperties": "has too many entries",
    "const": "has a value that is not allowed",
    "format": "does not have the expected format",
}
_validators: dict[int, Draft202012Validator] = {}


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    key = id(schema)
    if key not in _validators:
        _validators[key] = Draft202012Validator(schema)
    return _validators[key]


def _where(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(error: SchemaError) -> str:
    where = _where(error.absolute_path)
    field = f"field '{where}'" if where else "the arguments"
    keyword = error.validator
    if keyword == "required":
        present = error.instance if isinstance(error.instance, dict) else {}
        missing = [name for name in error.validator_value if name not in present]
        inside = f" in '{where}'" if where else ""
        return f"missing required field{'s' if len(missing) > 1 else ''}{inside}: {', '.join(missing)}"
    if keyword == "additionalProperties":
        allowed = set((error.schema.get("properties") or {}).keys())
        extra = [k for k in (error.instance or {}) if k not in allowed]
        names = [k for k in extra if _SAFE_NAME.match(k)]
        shown = ", ".join(names) if len(names) == len(extra) else f"{len(extra)} unnamed field(s)"
        return f"unknown field{'s' if len(extra) > 1 else ''}{' in ' + repr(where) if where else ''}: {shown}"
    if keyword == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"{field} must be of type {expected}"
    if keyword == "enum":
        allowed = ", ".join(str(v) for v in error.validator_value)
        return f"{field} must be one of: {allowed}"
    if keyword in _CONSTRAINTS:
        return f"{field} {_CONSTRAINTS[keyword]} ({keyword} {error.validator_value})"
    return f"{field} is not valid ({keyword})"


def argument_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Every problem with `arguments`, one sentence each, most specific first; empty when valid."""
    errors = sorted(_validator(schema).iter_errors(arguments), key=lambda e: (list(e.absolute_path), e.validator))
    messages: list[str] = []
    for error in errors:
        message = _describe(error)
        if message not in messages:
            messages.append(message)
    return messages
