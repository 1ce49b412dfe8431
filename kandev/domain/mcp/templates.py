"""Kandev-curated MCP server templates, shown in the marketplace beside any configured registry's entries. Each is
a definition to review and add, with exact package versions and the secrets it expects by reference."""

from __future__ import annotations

from dataclasses import dataclass, field

from kandev.domain.sealed_secrets import SECRET_REFERENCE
from kandev.models.enums import McpServerKind


@dataclass(frozen=True)
class McpTemplate:
    key: str
    name: str
    title: str
    description: str
    publisher: str
    kind: McpServerKind
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    package: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def secrets(self) -> tuple[str, ...]:
        """The workspace secrets its headers and env reference, in order of first use."""
        values = [*self.headers.values(), *self.env.values()]
        return tuple(dict.fromkeys(name for value in values for name in SECRET_REFERENCE.findall(value)))


TEMPLATES: tuple[McpTemplate, ...] = (
    McpTemplate(
        key="github",
        name="github",
        title="GitHub",
        description="GitHub's hosted MCP server: repositories, issues and pull requests.",
        publisher="GitHub",
        kind=McpServerKind.REMOTE,
        url="https://api.githubcopilot.com/mcp/",
        headers={"Authorization": "Bearer ${secret:GITHUB_TOKEN}"},
    ),
    McpTemplate(
        key="context7",
        name="context7",
        title="Context7",
        description="Up-to-date library documentation for prompts.",
        publisher="Upstash",
        kind=McpServerKind.REMOTE,
        url="https://mcp.context7.com/mcp",
        headers={"CONTEXT7_API_KEY": "${secret:CONTEXT7_API_KEY}"},
    ),
    McpTemplate(
        key="memory",
        name="memory",
        title="Memory",
        description="A knowledge-graph memory kept by the reference MCP server (runs a local process).",
        publisher="Model Context Protocol",
        kind=McpServerKind.NPM,
        package="@modelcontextprotocol/server-memory@2026.8.31",
    ),
    McpTemplate(
        key="sequential-thinking",
        name="sequential-thinking",
        title="Sequential thinking",
        description="Structured step-by-step reasoning tool (runs a local process).",
        publisher="Model Context Protocol",
        kind=McpServerKind.NPM,
        package="@modelcontextprotocol/server-sequential-thinking@2026.8.31",
    ),
    McpTemplate(
        key="playwright",
        name="playwright",
        title="Playwright",
        description="Browser automation through Playwright (runs a local process).",
        publisher="Microsoft",
        kind=McpServerKind.NPM,
        package="@playwright/mcp@0.0.86",
    ),
)
