"""Value types, errors and the protocol every agent adapter implements; no I/O, no heavy imports."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from kandev.platform.agent_host import scripted_command as scripted_command
from kandev.platform.redaction import REDACTED as REDACTED
from kandev.platform.redaction import Redactor as Redactor
from kandev.runtime.wire_names import END_TURN as END_TURN
from kandev.runtime.wire_names import MCP_SERVER_NAME as MCP_SERVER_NAME

if TYPE_CHECKING:
    from kandev.domain.ports import BoxRequest, Executor
    from kandev.platform.agent_host import AgentUser
    from kandev.runtime.mcp_relay import McpRelay

PermissionPolicy = Literal["ALLOW", "DENY", "ASK"]
UpdateKind = Literal[
    "agent_text", "thought", "tool_call", "tool_call_update", "plan", "user_text", "mode", "usage", "other"
]

# Our stop reason for a turn the agent could not finish (agent error, /fail, crash); the rest are ACP's.
FAILED = "failed"
CANCELLED = "cancelled"


@dataclass(slots=True)
class McpServerEntry:
    """A workspace MCP server as an agent receives it beside `kandev`: http (url, headers) or stdio (command,
    args, env), with secrets already resolved; `meta` goes to the ACP entry's `_meta` (its origins)."""

    name: str
    transport: Literal["http", "stdio"]
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class LaunchSpec:
    """How to start one agent and which ACP session to open or resume."""

    argv: list[str]
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    mcp_url: str | None = None
    mcp_token: str | None = None
    resume_session_id: str | None = None
    permission_policy: PermissionPolicy = "ASK"
    secrets: list[str] = field(default_factory=list)
    # Real agents may install themselves on first start (npx), so the default is generous.
    startup_timeout: float = 60.0
    # The unprivileged OS user the agent runs as (KANDEV_AGENT_USER), and paths it must be able to read.
    run_as: AgentUser | None = None
    readable: list[str] = field(default_factory=list)
    # Workspace MCP servers delivered beside `kandev` (when the profile supports MCP).
    mcp_extra: list[McpServerEntry] = field(default_factory=list)
    # Where the agent runs: an executor and its box request (None: a plain process here, as `argv` in `cwd`), and
    # a box's MCP bridge, which makes `kandev` a stdio server over the session's socket instead of http.
    executor: Executor | None = None
    box: BoxRequest | None = None
    relay: McpRelay | None = None


@dataclass(slots=True)
class LaunchInfo:
    """What the agent told us while it started."""

    acp_session_id: str
    loaded: bool
    supports_load: bool
    modes: list[str]
    current_mode: str | None
    pid: int
    # The initialize answer's promptCapabilities: which content besides text a prompt may carry.
    image_prompts: bool = False
    embedded_context: bool = False


@dataclass(slots=True)
class PromptFile:
    """An attachment handed to the agent inside the prompt: an image block, or an embedded resource (text or
    blob) at `uri`."""

    name: str
    content_type: str
    data: bytes
    uri: str
    as_image: bool


@dataclass(slots=True)
class AgentUpdate:
    """One `session/update` from the agent, already redacted."""

    kind: UpdateKind
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class UsageReport:
    """Usage as the agent reported it, unchecked (the domain bounds it): a turn's tokens from the `session/prompt`
    answer, the context and the turn's cost from `usage_update` notifications; any figure may be missing."""

    input_tokens: Any = None
    output_tokens: Any = None
    cache_read_tokens: Any = None
    cache_write_tokens: Any = None
    cost_usd: Any = None
    context_used: Any = None
    context_size: Any = None
    model: str | None = None


@dataclass(slots=True)
class PromptResult:
    """How a turn ended: an ACP stop reason, or `failed` with an error text; and the turn's usage, if told."""

    stop_reason: str
    error: str | None = None
    exit_code: int | None = None
    usage: UsageReport | None = None


@dataclass(slots=True)
class PermissionOptionInfo:
    """One choice the agent offers in a permission request."""

    option_id: str
    name: str
    kind: str


@dataclass(slots=True)
class PermissionRequest:
    """An agent asking to run a tool call; answered with an option id or None (reject)."""

    tool_call_id: str
    title: str
    options: list[PermissionOptionInfo]
    raw_input: Any = None


UpdateHandler = Callable[[AgentUpdate], Awaitable[None]]
PermissionHandler = Callable[[PermissionRequest], Awaitable[str | None]]


class AgentRuntimeError(Exception):
    """Root of the runtime's errors."""


class AgentLaunchError(AgentRuntimeError):
    """The agent could not be started or did not finish its handshake."""


class AgentProcessExited(AgentRuntimeError):
    """The agent process ended while we still needed it."""

    def __init__(self, exit_code: int | None, stderr_tail: list[str], reason: str | None = None) -> None:
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        status = "was killed" if exit_code is None else _describe_status(exit_code)
        text = f"{reason}: agent process {status}" if reason else f"agent process {status}"
        if stderr_tail:
            text += "; last lines of its stderr:\n" + "\n".join(stderr_tail)
        super().__init__(text)


def _describe_status(code: int) -> str:
    # asyncio reports death by signal N as -N.
    return f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"


class AgentRuntime(Protocol):
    """One agent process speaking one session; a turn job launches, prompts and closes it."""

    async def launch(
        self, spec: LaunchSpec, on_update: UpdateHandler, on_permission: PermissionHandler | None = None
    ) -> LaunchInfo: ...

    async def prompt(self, text: str, files: Sequence[PromptFile] = ()) -> PromptResult: ...

    async def cancel(self, grace_seconds: float = 1.0) -> None: ...

    async def set_mode(self, mode_id: str) -> None: ...

    async def close(self) -> None: ...
