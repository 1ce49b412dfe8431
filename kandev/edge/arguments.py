"""Tool arguments checked against the advertised schema before any handler runs.

Messages are written by hand and never echo a submitted value: a client may have put a secret
in the wrong field, and tool errors end up in agent transcripts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError as SchemaError

from kandev.domain.validation import INT_MAX, INT_MIN, tree_problems

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
_check_type = Draft202012Validator.VALIDATORS["type"]


def _type_in_range(validator: Any, types: Any, instance: Any, schema: dict[str, Any]) -> Iterable[SchemaError]:
    """JSON `integer`s reach GraphQL Int and INTEGER columns, both 32-bit: a larger one is refused here
    instead of failing inside the operation."""
    yield from _check_type(validator, types, instance, schema)
    names = types if isinstance(types, list) else [types]
    number = isinstance(instance, int | float) and not isinstance(instance, bool)
    if "integer" in names and number and not INT_MIN <= instance <= INT_MAX:
        yield SchemaError("integer out of range", validator="range")


_Validator = validators.extend(Draft202012Validator, {"type": _type_in_range})
_validators: dict[int, Any] = {}


def _validator(schema: dict[str, Any]) -> Any:
    key = id(schema)
    if key not in _validators:
        _validators[key] = _Validator(schema)
    return _validators[key]


def _where(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(error: SchemaError) -> str:
    where = _where(error.absolute_path)
    field = f"field '{where}'" if where else "the arguments"
    # jsonschema types these as possibly Unset; a raised error always has them.
    keyword: Any = error.validator
    value: Any = error.validator_value
    schema: Any = error.schema
    instance: Any = error.instance
    if keyword == "required":
        present = instance if isinstance(instance, dict) else {}
        missing = [name for name in value if name not in present]
        inside = f" in '{where}'" if where else ""
        return f"missing required field{'s' if len(missing) > 1 else ''}{inside}: {', '.join(missing)}"
    if keyword == "additionalProperties":
        allowed = set((schema.get("properties") or {}).keys())
        extra = [k for k in (instance or {}) if k not in allowed]
        names = [k for k in extra if _SAFE_NAME.match(k)]
        shown = ", ".join(names) if len(names) == len(extra) else f"{len(extra)} unnamed field(s)"
        return f"unknown field{'s' if len(extra) > 1 else ''}{' in ' + repr(where) if where else ''}: {shown}"
    if keyword == "type":
        expected = " or ".join(value) if isinstance(value, list) else value
        return f"{field} must be of type {expected}"
    if keyword == "enum":
        return f"{field} must be one of: {', '.join(str(v) for v in value)}"
    if keyword in _CONSTRAINTS:
        return f"{field} {_CONSTRAINTS[keyword]} ({keyword} {value})"
    if keyword == "range":
        return f"{field} is out of range ({INT_MIN} to {INT_MAX})"
    return f"{field} is not valid ({keyword})"


def _discriminated(error: SchemaError) -> list[SchemaError] | str:
    """For a oneOf/anyOf over object variants told apart by a `const` field: the errors of the variant
    the instance names, or a sentence listing the allowed names when it names none."""
    branches: dict[Any, list[SchemaError]] = {}
    variants: Any = error.validator_value
    for sub in error.context or []:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    named = [i for i, subs in branches.items() if not any(s.validator == "const" for s in subs)]
    if len(named) == 1:
        return branches[named[0]]
    keys = {
        key: prop["const"]
        for variant in variants
        for key, prop in (variant.get("properties") or {}).items()
        if isinstance(prop, dict) and "const" in prop
    }
    if keys and not isinstance(error.instance, dict):
        return f"field '{_where(error.absolute_path)}' must be of type object"
    if len(keys) == 1 and isinstance(error.instance, dict) and next(iter(keys)) not in error.instance:
        where = _where(error.absolute_path)
        return f"missing required field{' in ' + repr(where) if where else ''}: {next(iter(keys))}"
    if not named and len(keys) == 1:
        key = next(iter(keys))
        values = [v.get("properties", {}).get(key, {}).get("const") for v in variants]
        where = _where([*error.absolute_path, key])
        return f"field '{where}' must be one of: {', '.join(str(v) for v in values)}"
    return [error]


def _flatten(errors: Iterable[SchemaError]) -> list[SchemaError | str]:
    flat: list[SchemaError | str] = []
    for error in errors:
        if error.validator in ("oneOf", "anyOf") and error.context:
            chosen = _discriminated(error)
            if isinstance(chosen, str):
                flat.append(chosen)
            elif chosen != [error]:
                flat.extend(_flatten(chosen))
            else:
                flat.append(error)
        else:
            flat.append(error)
    return flat


def _top_level(path: str) -> str:
    """The argument a problem's path starts in: `sources` of `sources[0].path`."""
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def argument_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Every problem with `arguments`, one sentence each, most specific first; empty when valid."""
    errors = sorted(_validator(schema).iter_errors(arguments), key=lambda e: (list(e.absolute_path), e.validator))
    # NUL and lone surrogates anywhere (the domain's rule for every string): named, never echoed. Only a
    # field the schema declares is named: an unknown key is the caller's data and may be a secret.
    known = set(schema.get("properties") or ())
    messages: list[str] = [
        f"field '{field}' {problem}"
        if re.split(r"[.\[]", field, maxsplit=1)[0] in known
        else f"an unknown field {problem}"
        for field, problem in tree_problems(arguments, "")
    ]
    for error in _flatten(errors):
        message = error if isinstance(error, str) else _describe(error)
        if message not in messages:
            messages.append(message)
    return messages


class ArgumentClash(ValueError):
    """A caller sent a field under both its name and an alias of it."""

    def __init__(self, alias: str, canonical: str) -> None:
        super().__init__(f"send either {canonical} or {alias}, not both")
        self.alias = alias


def resolve_aliases(arguments: dict[str, Any], aliases: dict[str, str]) -> dict[str, Any]:
    """The arguments with each alias renamed to the name it stands for (ArgumentClash when both came)."""
    resolved = dict(arguments)
    for alias, canonical in aliases.items():
        if alias in resolved:
            if canonical in resolved:
                raise ArgumentClash(alias, canonical)
            resolved[canonical] = resolved.pop(alias)
    return resolved
