"""AcpRuntime: one ACP agent subprocess driven over stdio with the `agent-client-protocol` package.

Only this module (and acp_client, which it imports) imports `acp`, about half a second, so importing
`kandev.runtime` stays cheap. An agent's error answer to `session/prompt` (the scripted agent's
`/fail TEXT` is JSON-RPC error -32603 with message TEXT) becomes `PromptResult("failed", error=message)`,
with the error's `data.details` appended after ": " when it adds something.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
from collections.abc import Awaitable, Sequence
from dataclasses import replace
from typing import Any, TypeVar, cast

import acp
from acp.schema import (
    ClientCapabilities,
    EnvVariable,
    FileSystemCapabilities,
    HttpHeader,
    HttpMcpServer,
    Implementation,
    McpServerStdio,
    SessionModeState,
)

from kandev import __version__
from kandev.domain.ports import Box, ExecutorError
from kandev.runtime.acp_client import AcpClient
from kandev.runtime.base import (
    CANCELLED,
    FAILED,
    MCP_SERVER_NAME,
    AgentLaunchError,
    AgentProcessExited,
    AgentRuntimeError,
    LaunchInfo,
    LaunchSpec,
    McpServerEntry,
    PermissionHandler,
    PromptFile,
    PromptResult,
    Redactor,
    UpdateHandler,
    UsageReport,
)
from kandev.runtime.confinement import check_can_run
from kandev.runtime.mcp_relay import McpRelay
from kandev.runtime.process import AgentProcess, minimal_env

log = logging.getLogger(__name__)
T = TypeVar("T")

# After the agent exits, how long its last reply may still sit in the pipe.
_EXIT_GRACE = 0.5
_REQUEST_TIMEOUT = 30.0
_DRAIN_TIMEOUT = 5.0


# ACP's auth_required error: the agent (e.g. Claude Code without a login or API key) can't work until signed in.
AUTH_REQUIRED = -32000


def error_text(exc: acp.RequestError, auth_methods: tuple[str, ...] = ()) -> str:
    """A JSON-RPC error as one line: its message, plus `data.details` when that adds something; an
    authentication failure says so and how to fix it, since the agent's own words rarely do."""
    data = exc.data
    detail = data.get("details") if isinstance(data, dict) else data if isinstance(data, str) else None
    text = str(exc)
    text = f"{text}: {detail}" if detail and str(detail) != text else text
    if exc.code != AUTH_REQUIRED:
        return text
    offered = f" (it offers: {', '.join(auth_methods)})" if auth_methods else ""
    return (
        f"the agent is not signed in ({text}){offered}: sign it in once as the user it runs as "
        "(for Claude Code, `claude /login`), or give its agent profile an API key from a workspace secret"
    )


def mcp_servers(spec: LaunchSpec) -> list[Any]:
    """The session's kandev MCP server (http, bearer token; in a box, the stdio bridge to the session's socket)
    when the spec has both URL and token, then the workspace MCP servers selected for the session (their origins
    in `_meta.kandev`)."""
    if not (spec.mcp_url and spec.mcp_token):
        return []
    if spec.relay is not None:
        servers = [_workspace_server(spec.relay.entry())]
    else:
        header = HttpHeader(name="Authorization", value=f"Bearer {spec.mcp_token}")
        servers = [HttpMcpServer(type="http", name=MCP_SERVER_NAME, url=spec.mcp_url, headers=[header])]
    return servers + [_workspace_server(_inside(spec, entry)) for entry in spec.mcp_extra]


def _inside(spec: LaunchSpec, entry: McpServerEntry) -> McpServerEntry:
    """A stdio server as the agent starts it: inside its box, where a host path may read otherwise (a container
    sees an installed npm package under the folder it reads host paths at)."""
    executor, box = spec.executor, spec.box
    if entry.transport != "stdio" or executor is None or box is None:
        return entry
    args = [executor.seen_inside(box, arg) for arg in entry.args]
    return replace(entry, command=executor.seen_inside(box, entry.command), args=args)


def _workspace_server(entry: McpServerEntry) -> Any:
    if entry.transport == "http":
        headers = [HttpHeader(name=k, value=v) for k, v in entry.headers.items()]
        return HttpMcpServer(type="http", name=entry.name, url=entry.url, headers=headers, field_meta=entry.meta)
    env = [EnvVariable(name=k, value=v) for k, v in entry.env.items()]
    return McpServerStdio(name=entry.name, command=entry.command, args=entry.args, env=env, field_meta=entry.meta)


def _launch_info(
    session_id: str, loaded: bool, supports_load: bool, modes: SessionModeState | None, pid: int, init: Any
) -> LaunchInfo:
    mode_ids = [m.id for m in modes.available_modes] if modes else []
    caps = init.agent_capabilities.prompt_capabilities if init.agent_capabilities else None
    return LaunchInfo(
        session_id,
        loaded,
        supports_load,
        mode_ids,
        modes.current_mode_id if modes else None,
        pid,
        image_prompts=bool(caps and caps.image),
        embedded_context=bool(caps and caps.embedded_context),
    )


def prompt_blocks(text: str, files: Sequence[PromptFile]) -> list[Any]:
    """The prompt's text, then each file as ACP image content or an embedded resource (text when it is text)."""
    blocks: list[Any] = [acp.text_block(text)]
    for file in files:
        if file.as_image:
            blocks.append(acp.image_block(base64.b64encode(file.data).decode(), file.content_type, uri=file.uri))
        elif file.content_type.startswith("text/"):
            resource: Any = acp.embedded_text_resource(file.uri, file.data.decode(), mime_type=file.content_type)
            blocks.append(acp.resource_block(resource))
        else:
            blob = base64.b64encode(file.data).decode()
            blocks.append(acp.resource_block(acp.embedded_blob_resource(file.uri, blob, mime_type=file.content_type)))
    return blocks


def _model_of(answer: Any) -> str | None:
    """The current value of the session's `model` config option, when the agent offers one."""
    for option in getattr(answer, "config_options", None) or []:
        if getattr(option, "category", None) == "model" or getattr(option, "id", None) == "model":
            value = getattr(option, "current_value", None)
            return str(value)[:200] if value else None
    return None


class AcpRuntime:
    """An AgentRuntime over an ACP agent subprocess (one process, one ACP session)."""

    def __init__(self) -> None:
        self.info: LaunchInfo | None = None
        self._proc: Box | None = None
        self._relay: McpRelay | None = None
        self._conn: Any = None
        self._client: AcpClient | None = None
        self._redactor = Redactor(())
        self._turn_done: asyncio.Event | None = None
        self._closing: asyncio.Task[None] | None = None
        # The model the agent says it uses (its `model` config option), for usage records.
        self.model: str | None = None
        # The names of the sign-in methods the agent offered in `initialize`, for an auth_required error.
        self._auth_methods: tuple[str, ...] = ()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def box(self) -> Box | None:
        """Where the agent runs (its process, sandbox or container), once launched."""
        return self._proc

    @property
    def alive(self) -> bool:
        """Launched, not closed, and its process still running: a warm agent can take another prompt."""
        return (
            self.info is not None
            and self._closing is None
            and self._proc is not None
            and (self._proc.returncode is None)
        )

    async def launch(
        self, spec: LaunchSpec, on_update: UpdateHandler, on_permission: PermissionHandler | None = None
    ) -> LaunchInfo:
        """Spawn, `initialize`, then `session/load` (resume) or `session/new`; AgentLaunchError if not."""
        if self._proc is not None:
            raise AgentRuntimeError("this runtime has already launched an agent")
        self._redactor = Redactor(spec.secrets)
        if not os.path.isdir(spec.cwd):
            raise AgentLaunchError(f"working directory {spec.cwd!r} does not exist")
        if spec.run_as is not None and (spec.executor is None or spec.executor.kind != "docker"):
            check_can_run(spec.run_as, spec.argv, spec.cwd, spec.readable)
        self._proc = await self._start(spec)
        self._client = AcpClient(spec.permission_policy, self._redactor, on_update, on_permission)
        try:
            self._conn = acp.connect_to_agent(
                cast(acp.Client, self._client), self._proc.stdin, self._proc.stdout, observers=[self._client.observe]
            )
            info = await self._race_exit(self._handshake(spec), spec.startup_timeout)
        except TimeoutError:
            await self.close()
            raise AgentLaunchError(f"agent did not answer its handshake within {spec.startup_timeout:g}s") from None
        except acp.RequestError as exc:
            await self.close()
            message = f"agent refused to start: {error_text(exc, self._auth_methods)}"
            raise AgentLaunchError(self._redactor.text(message)) from None
        except AgentProcessExited as exc:
            # One error type for "could not start"; the exit details stay on __cause__.
            await self.close()
            raise AgentLaunchError(str(exc)) from exc
        except BaseException:
            await self.close()
            raise
        self.info, self._client.session_id = info, info.acp_session_id
        return info

    async def _start(self, spec: LaunchSpec) -> Box:
        """The agent's box: a process here, or the spec's executor's box with the session's MCP bridge open."""
        if spec.executor is None or spec.box is None:
            try:
                env = minimal_env(spec.env, spec.run_as)
                return await AgentProcess.spawn(spec.argv, env, spec.cwd, user=spec.run_as)
            except (OSError, ValueError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                raise AgentLaunchError(self._redactor.text(f"cannot start {spec.argv[:1]}: {reason}")) from None
        self._relay = spec.relay
        try:
            if spec.relay is not None:
                await spec.relay.start()
            return await spec.executor.launch(spec.box)
        except BaseException as exc:
            if spec.relay is not None:
                await spec.relay.close()
            self._relay = None
            if isinstance(exc, ExecutorError):
                raise AgentLaunchError(self._redactor.text(exc.message)) from None
            if isinstance(exc, OSError):
                raise AgentLaunchError(f"the box's MCP bridge could not be opened: {exc.strerror or exc}") from None
            raise

    async def prompt(self, text: str, files: Sequence[PromptFile] = ()) -> PromptResult:
        """Run one turn; every update of it has reached `on_update` when this returns."""
        conn, client = self._require()
        if self._turn_done is not None and not self._turn_done.is_set():
            raise AgentRuntimeError("a prompt is already running on this agent")
        self._turn_done = done = asyncio.Event()
        try:
            result = await self._run_prompt(conn, client, prompt_blocks(text, files))
        finally:
            done.set()
        await client.delivered()
        return result

    async def cancel(self, grace_seconds: float = 1.0) -> None:
        """`session/cancel`, up to `grace_seconds` for the turn to end, then kill the process group."""
        if self._proc is None:
            return
        if self._client is not None:
            self._client.stopping = True
        turn = self._turn_done
        if self._closing is None and turn is not None and not turn.is_set():
            # A wedged agent may not read its stdin: the notification itself must not block us.
            with contextlib.suppress(Exception):
                async with asyncio.timeout(grace_seconds):
                    await self._conn.cancel(session_id=self._client_session())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace_seconds):
                    await turn.wait()
        await self.close()

    async def set_mode(self, mode_id: str) -> None:
        """`session/set_mode`; the agent confirms with a `mode` update."""
        conn, _ = self._require()
        request = conn.set_session_mode(session_id=self._client_session(), mode_id=mode_id)
        try:
            await self._race_exit(request, _REQUEST_TIMEOUT)
        except acp.RequestError as exc:
            message = f"agent refused mode {mode_id!r}: {error_text(exc)}"
            raise AgentRuntimeError(self._redactor.text(message)) from None

    async def close(self) -> None:
        """Kill the process group, deliver the updates already received, stop; idempotent."""
        if self._closing is None:
            in_pump = self._client is not None and self._client.in_pump()
            self._closing = asyncio.create_task(self._shutdown(0 if in_pump else _DRAIN_TIMEOUT))
        await asyncio.shield(self._closing)

    async def _handshake(self, spec: LaunchSpec) -> LaunchInfo:
        conn, proc = self._conn, self._proc
        assert proc is not None
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False
            ),
            client_info=Implementation(name="kandev", version=__version__),
        )
        supports_load = bool(init.agent_capabilities and init.agent_capabilities.load_session)
        self._auth_methods = tuple(m.name for m in init.auth_methods or ())
        servers = mcp_servers(spec)
        if spec.resume_session_id and supports_load:
            try:
                loaded = await conn.load_session(cwd=proc.cwd, session_id=spec.resume_session_id, mcp_servers=servers)
            except acp.RequestError as exc:
                # The agent lost that session: a new one it is, and the caller synthesizes history.
                log.info("session/load refused, new session instead: %s", self._redactor.text(error_text(exc)))
            else:
                self.model = _model_of(loaded)
                modes = loaded.modes if loaded else None
                return _launch_info(spec.resume_session_id, True, supports_load, modes, proc.pid, init)
        created = await conn.new_session(cwd=proc.cwd, mcp_servers=servers)
        self.model = _model_of(created)
        return _launch_info(created.session_id, False, supports_load, created.modes, proc.pid, init)

    async def _run_prompt(self, conn: Any, client: AcpClient, blocks: list[Any]) -> PromptResult:
        client.begin_turn()
        request = conn.prompt(session_id=self._client_session(), prompt=blocks)
        try:
            answer = await self._race_exit(request)
        except acp.RequestError as exc:
            if client.stopping:
                return PromptResult(CANCELLED)
            return PromptResult(FAILED, self._redactor.text(error_text(exc, self._auth_methods)))
        except AgentProcessExited as exc:
            # We killed it ourselves (cancel/close): that is a cancelled turn, not a crash.
            if client.stopping:
                return PromptResult(CANCELLED)
            return PromptResult(FAILED, str(exc), exc.exit_code)
        return PromptResult(str(answer.stop_reason), usage=self._usage(answer, client))

    def _usage(self, answer: Any, client: AcpClient) -> UsageReport | None:
        """The turn's usage: tokens from the answer (the acp package drops an invalid `usage`), the context
        and cost from the turn's `usage_update`s."""
        tokens = getattr(answer, "usage", None)
        cost, (used, size) = client.turn_cost(), client.context
        if tokens is None and cost is None and used is None and size is None:
            return None
        return UsageReport(
            input_tokens=getattr(tokens, "input_tokens", None),
            output_tokens=getattr(tokens, "output_tokens", None),
            cache_read_tokens=getattr(tokens, "cached_read_tokens", None),
            cache_write_tokens=getattr(tokens, "cached_write_tokens", None),
            cost_usd=cost,
            context_used=used,
            context_size=size,
            model=self.model,
        )

    async def _race_exit(self, request: Awaitable[T], timeout: float | None = None) -> T:
        """Await `request` unless the agent exits (AgentProcessExited) or `timeout` passes (TimeoutError)."""
        proc = self._proc
        assert proc is not None
        reply = asyncio.ensure_future(request)
        exited = asyncio.ensure_future(proc.wait())
        try:
            done, _ = await asyncio.wait({reply, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if reply not in done and exited in done:
                await asyncio.wait({reply}, timeout=_EXIT_GRACE)
            if reply.done():
                try:
                    return reply.result()
                except ConnectionError:
                    raise await self._exit_error() from None
            if exited.done():
                raise await self._exit_error()
            raise TimeoutError
        finally:
            reply.cancel()
            exited.cancel()

    async def _exit_error(self) -> AgentProcessExited:
        proc = self._proc
        assert proc is not None
        code: int | None
        try:
            async with asyncio.timeout(2.0):
                code = await proc.wait()
        except TimeoutError:
            # It closed its stdout but lives on: useless to us, so it goes.
            code = await proc.kill_group()
        tail = [self._redactor.text(line) for line in await proc.stderr_tail(20)]
        return AgentProcessExited(code, tail, await proc.exit_reason())

    def _require(self) -> tuple[Any, AcpClient]:
        if self._conn is None or self._client is None or self._closing is not None or self.info is None:
            raise AgentRuntimeError("the agent is not running")
        return self._conn, self._client

    def _client_session(self) -> str | None:
        return self.info.acp_session_id if self.info else None

    async def _shutdown(self, drain_timeout: float) -> None:
        if self._client is not None:
            self._client.stopping = True
        if self._proc is not None:
            await self._proc.kill_group()
        if self._relay is not None:
            await self._relay.close()
        if self._conn is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await self._conn.close()
        if self._client is not None:
            # Updates that arrived before the end still belong in the transcript.
            await self._client.stop(drain_timeout)
