"""The checks a workspace MCP definition must pass before it is saved; every error is typed and echoes no value."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from kandev.domain.errors import ValidationError
from kandev.domain.sealed_secrets import SECRET_REFERENCE
from kandev.domain.validation import check_env
from kandev.models.enums import McpServerKind

# Agents prefix tool names with the server name (mcp__NAME__tool), and `/tool SERVER/NAME` splits on '/'.
SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
RESERVED_NAMES = {"kandev"}
PACKAGE_NAME = re.compile(r"(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*")
EXACT_VERSION = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}")
MAX_URL_LENGTH = 2000
MAX_HEADERS = 20
MAX_ARGS = 100
MAX_ARG_LENGTH = 4096
LOCAL_PROCESS_KINDS = {McpServerKind.NPM, McpServerKind.EXECUTABLE}


@dataclass
class McpServerFields:
    """A definition as submitted; which fields apply depends on the kind."""

    name: str | None = None
    kind: McpServerKind | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    package: str | None = None
    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None


def clean_server_name(value: str | None) -> str:
    name = (value or "").strip()
    if not SERVER_NAME.fullmatch(name):
        raise ValidationError(
            "an MCP server name is 1-64 letters, digits, '_' or '-' and starts with a letter or digit", field="name"
        )
    if name.lower() in RESERVED_NAMES:
        raise ValidationError("the name 'kandev' is Kandev's own MCP server", field="name", reason="reserved")
    return name


def check_url(value: str | None) -> str:
    url = (value or "").strip()
    if not url:
        raise ValidationError("a remote MCP server needs a URL", field="url")
    if len(url) > MAX_URL_LENGTH or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise ValidationError(f"the URL must be at most {MAX_URL_LENGTH} characters without spaces", field="url")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018  # raises on a malformed port
    except ValueError:
        raise ValidationError("the URL is not a valid URL", field="url") from None
    if parts.scheme not in ("http", "https"):
        raise ValidationError("the URL must be http or https", field="url", reason="scheme")
    if parts.username is not None or parts.password is not None:
        raise ValidationError(
            "the URL must not carry credentials; bind a workspace secret in a header instead",
            field="url",
            reason="credentials",
        )
    if not host:
        raise ValidationError("the URL needs a host", field="url")
    if SECRET_REFERENCE.search(url):
        raise ValidationError("secrets go in headers, never in the URL", field="url", reason="credentials")
    return url


def check_headers(headers: dict[str, str] | None) -> dict[str, str]:
    """Header values bind workspace secrets by reference: each holds at least one ${secret:NAME}."""
    if headers is None:
        return {}
    if not isinstance(headers, dict) or len(headers) > MAX_HEADERS:
        raise ValidationError(f"headers must be an object of at most {MAX_HEADERS} entries", field="headers")
    for name, value in headers.items():
        if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
            raise ValidationError("header names must be HTTP tokens", field="headers")
        if not isinstance(value, str) or "\r" in value or "\n" in value or "\0" in value or len(value) > 8192:
            raise ValidationError("header values must be one line of text", field=f"headers.{name}")
        if not SECRET_REFERENCE.search(value):
            raise ValidationError(
                "header values bind a workspace secret by reference, e.g. 'Bearer ${secret:API_TOKEN}'",
                field=f"headers.{name}",
                reason="literal_header",
            )
    return dict(headers)


def split_package(value: str | None) -> tuple[str, str]:
    """'name@x.y.z' (scoped names too) into name and an exact version; ranges and tags are refused."""
    spec = (value or "").strip()
    at = spec.rfind("@")
    if at <= 0:
        raise ValidationError("an npm MCP server needs an exact version: package@x.y.z", field="package")
    name, version = spec[:at], spec[at + 1 :]
    if len(name) > 214 or not PACKAGE_NAME.fullmatch(name):
        raise ValidationError("the package name is not a valid npm package name", field="package")
    if not EXACT_VERSION.fullmatch(version):
        raise ValidationError(
            "the package version must be exact (x.y.z), not a range or a tag", field="package", reason="not_exact"
        )
    return name, version


def check_command(value: str | None) -> str:
    command = (value or "").strip()
    if not command or not os.path.isabs(command):
        raise ValidationError("an executable MCP server needs an absolute path", field="command")
    if "\0" in command or len(command) > 1000:
        raise ValidationError("the command path is not a valid path", field="command")
    if not (os.path.isfile(command) and os.access(command, os.X_OK)):
        raise ValidationError("the command is not an existing executable file", field="command", reason="missing")
    return command


def check_args(args: list[str] | None) -> list[str]:
    if args is None:
        return []
    if not isinstance(args, list) or len(args) > MAX_ARGS:
        raise ValidationError(f"args must be a list of at most {MAX_ARGS} strings", field="args")
    for arg in args:
        if not isinstance(arg, str) or "\0" in arg or len(arg) > MAX_ARG_LENGTH:
            raise ValidationError("args must be strings without NUL characters", field="args")
    return list(args)


def check_server_env(env: dict[str, str] | None) -> dict[str, str]:
    if env is None:
        return {}
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ValidationError("env must be an object of string values", field="env")
    for key in env:
        if not key or "=" in key or "\0" in key:
            raise ValidationError("env names must be non-empty and contain no '='", field="env")
    check_env(env)
    return dict(env)


def inapplicable(fields: McpServerFields, kind: McpServerKind) -> str | None:
    """The first submitted field that the kind does not use."""
    used = {
        McpServerKind.REMOTE: {"url", "headers"},
        McpServerKind.NPM: {"package", "args", "env"},
        McpServerKind.EXECUTABLE: {"command", "args", "env"},
    }[kind]
    for name in ("url", "headers", "package", "command", "args", "env"):
        if getattr(fields, name) is not None and name not in used:
            return name
    return None
