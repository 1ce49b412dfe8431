"""MCP Registry metadata (the official registry's `GET /v0/servers` format) read into plain, bounded entries.
Everything in it is publisher supplied: text is cut to length and stripped of control characters (clients show it as
plain text), and only an exact-version npm package or an http(s) remote is offered for installation."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from kandev.domain.mcp.rules import EXACT_VERSION, HEADER_NAME, PACKAGE_NAME, SERVER_NAME
from kandev.domain.sealed_secrets import SECRET_NAME

OFFICIAL_META = "io.modelcontextprotocol.registry/official"
MAX_ENTRIES = 500
MAX_OPTIONS = 8
MAX_SECRETS = 10
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
REMOTE_TRANSPORTS = {"streamable-http", "sse"}


def plain(value: Any, limit: int) -> str:
    """Publisher text as bounded plain text (never markup: the client renders it as text)."""
    if not isinstance(value, str):
        return ""
    text = _CONTROL.sub("", value).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class RegistryOption:
    """One way to install an entry: a remote endpoint or an npm package; `reason` says why it isn't offered."""

    kind: str | None  # "REMOTE" | "NPM" | None (not installable)
    label: str
    transport: str
    url: str | None = None
    package: str | None = None
    secrets: list[str] = field(default_factory=list)
    bindings: dict[str, str] = field(default_factory=dict)  # header or env name -> ${secret:NAME}
    reason: str | None = None

    @property
    def installable(self) -> bool:
        return self.kind is not None and self.reason is None


@dataclass
class RegistryEntry:
    key: str
    name: str
    title: str
    description: str
    version: str
    publisher: str
    status: str  # "ACTIVE" | "DEPRECATED" | "DELETED"
    website_url: str | None
    options: list[RegistryOption]

    @property
    def installable(self) -> bool:
        return self.status == "ACTIVE" and any(o.installable for o in self.options)

    def suggested_name(self) -> str:
        """A definition name from the registry name's last segment ("io.github.acme/docs-mcp" -> "docs-mcp")."""
        base = re.sub(r"[^A-Za-z0-9_-]+", "-", self.name.rsplit("/", 1)[-1]).strip("-_")[:64] or "registry-server"
        return base if SERVER_NAME.fullmatch(base) and base.lower() != "kandev" else "registry-server"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> RegistryEntry:
        options = [RegistryOption(**o) for o in data.get("options", [])]
        return RegistryEntry(**{**data, "options": options})


def _secret_name(value: Any) -> str | None:
    name = re.sub(r"[^A-Za-z0-9_]+", "_", plain(value, 100)).strip("_").upper()
    if name and name[0].isdigit():
        name = "_" + name
    return name if name and SECRET_NAME.fullmatch(name) else None


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]{0,99})\}")


def _bind_secrets(option: RegistryOption, items: Any, key: re.Pattern[str]) -> None:
    """Bind each secret input (header or environment variable) the publisher declares to workspace secrets by
    reference: a value template's {placeholders} ("Bearer {api_key}") each become ${secret:API_KEY}, else the
    whole value is the secret named like the input."""
    for item in (items if isinstance(items, list) else [])[:MAX_SECRETS]:
        if not isinstance(item, dict) or not (item.get("isSecret") or item.get("is_secret")):
            continue
        raw = plain(item.get("name"), 100)
        if not key.fullmatch(raw):
            continue
        template = plain(item.get("value"), 500)
        names = [n for n in (_secret_name(p) for p in _PLACEHOLDER.findall(template)) if n]
        if names:
            value = _PLACEHOLDER.sub(lambda m: f"${{secret:{_secret_name(m.group(1))}}}", template)
        elif (name := _secret_name(raw)) is not None:
            names, value = [name], f"${{secret:{name}}}"
        else:
            continue
        option.bindings[raw] = value
        option.secrets.extend(n for n in names if n not in option.secrets)


def _remote(remote: dict[str, Any]) -> RegistryOption:
    transport = plain(remote.get("type") or remote.get("transport_type"), 40)
    url = plain(remote.get("url"), 2000)
    option = RegistryOption(kind="REMOTE", label=f"remote ({transport or 'unknown'})", transport=transport, url=url)
    _bind_secrets(option, remote.get("headers"), HEADER_NAME)
    try:
        parts = urlsplit(url)
        ok_url = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.username is None
    except ValueError:
        ok_url = False
    if transport not in REMOTE_TRANSPORTS:
        option.reason = "only streamable-http and sse remotes can be added"
    elif not ok_url or any(ch.isspace() for ch in url):
        option.reason = "only http(s) remote URLs without credentials can be added"
    return option


def _package(package: dict[str, Any]) -> RegistryOption:
    registry_type = plain(
        package.get("registryType") or package.get("registry_type") or package.get("registry_name"), 40
    )
    identifier = plain(package.get("identifier") or package.get("name"), 214)
    version = plain(package.get("version"), 100)
    transport_field = package.get("transport")
    transport = plain(transport_field.get("type") if isinstance(transport_field, dict) else transport_field, 40)
    transport = transport or "stdio"
    option = RegistryOption(
        kind="NPM", label=f"{registry_type or 'package'} {identifier}", transport=transport, package=None
    )
    _bind_secrets(option, package.get("environmentVariables") or package.get("environment_variables"), ENV_NAME)
    if registry_type != "npm":
        option.kind, option.reason = None, f"{registry_type or 'this'} packages can't be added (npm only)"
    elif not PACKAGE_NAME.fullmatch(identifier):
        option.reason = "the package name is not a valid npm name"
    elif not EXACT_VERSION.fullmatch(version):
        option.reason = "only an exact package version (x.y.z) can be added"
    elif transport != "stdio":
        option.reason = "only stdio packages can be added"
    else:
        option.package = f"{identifier}@{version}"
    return option


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _status(item: dict[str, Any], server: dict[str, Any]) -> str:
    official = _object(_object(item.get("_meta")).get(OFFICIAL_META))
    status = official.get("status") or server.get("status") or "active"
    status = status.lower() if isinstance(status, str) else "active"
    return {"active": "ACTIVE", "deprecated": "DEPRECATED"}.get(status, "DELETED")


def parse_entry(item: Any) -> RegistryEntry | None:
    """One element of `servers` (the wrapped {server, _meta} form, or a bare server); None when unusable."""
    if not isinstance(item, dict):
        return None
    server: dict[str, Any] = item["server"] if isinstance(item.get("server"), dict) else item
    name = plain(server.get("name"), 200)
    if not name:
        return None
    version = plain(server.get("version") or _object(server.get("version_detail")).get("version"), 100)
    options: list[RegistryOption] = []
    for remote in (server.get("remotes") or [])[:MAX_OPTIONS] if isinstance(server.get("remotes"), list) else []:
        if isinstance(remote, dict):
            options.append(_remote(remote))
    for package in (server.get("packages") or [])[:MAX_OPTIONS] if isinstance(server.get("packages"), list) else []:
        if isinstance(package, dict):
            options.append(_package(package))
    website = plain(server.get("websiteUrl") or server.get("website_url"), 2000)
    return RegistryEntry(
        key=f"{name}@{version}" if version else name,
        name=name,
        title=plain(server.get("title"), 200) or name.rsplit("/", 1)[-1],
        description=plain(server.get("description"), 1000),
        version=version,
        publisher=name.split("/", 1)[0] if "/" in name else name,
        status=_status(item, server),
        website_url=website if website.startswith(("https://", "http://")) else None,
        options=options[:MAX_OPTIONS],
    )


def parse_page(body: Any) -> tuple[list[RegistryEntry], str | None]:
    """The entries of one `GET /v0/servers` page and its next cursor."""
    if not isinstance(body, dict) or not isinstance(body.get("servers"), list):
        raise ValueError("not an MCP Registry server list")
    entries = [e for e in (parse_entry(item) for item in body["servers"][:MAX_ENTRIES]) if e is not None]
    metadata = _object(body.get("metadata"))
    cursor = metadata.get("nextCursor") or metadata.get("next_cursor")
    return entries, cursor if isinstance(cursor, str) and 0 < len(cursor) <= 500 else None
