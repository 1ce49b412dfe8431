"""A workspace MCP server the agent starts itself (stdio) is handed to it as its box sees it: a container reads the
host's folders (an installed npm package's) under a prefix of its own, a sandbox binds them at their own paths."""

from __future__ import annotations

from pathlib import Path

from kandev.adapters.executors.docker import HOST, DockerExecutor
from kandev.adapters.executors.sandbox import SandboxExecutor
from kandev.domain.ports import BoxRequest
from kandev.domain.workspace.executor_config import BoxConfig
from kandev.runtime.acp_adapter import mcp_servers
from kandev.runtime.base import LaunchSpec, McpServerEntry


def spec_in(executor: DockerExecutor | SandboxExecutor | None, tmp_path: Path) -> tuple[LaunchSpec, Path]:
    packages = tmp_path / "mcp-packages"
    server = packages / "fixture" / "server.js"
    server.parent.mkdir(parents=True)
    server.write_text("")
    box = BoxRequest(
        session_id="s",
        task_id="t",
        kind=executor.kind if executor else "worktree",
        argv=["agent"],
        env={},
        workdir=str(tmp_path / "worktree"),
        config=BoxConfig(),
        readable=(str(packages),),
    )
    entry = McpServerEntry(
        "fixture", "stdio", command=str(server), args=["--root", str(server.parent), "--mode", "/elsewhere/x"]
    )
    spec = LaunchSpec(
        argv=["agent"],
        cwd=str(tmp_path / "worktree"),
        mcp_url="http://127.0.0.1:1/mcp",
        mcp_token="token",
        mcp_extra=[entry],
        executor=executor,
        box=box if executor else None,
    )
    return spec, server


def test_in_a_container_a_package_servers_command_and_path_arguments_read_under_the_host_prefix(tmp_path: Path):
    spec, server = spec_in(DockerExecutor(), tmp_path)
    [_, handed] = mcp_servers(spec)
    assert handed.command == f"{HOST}{server}"
    assert handed.args == ["--root", f"{HOST}{server.parent}", "--mode", "/elsewhere/x"]


def test_in_a_sandbox_or_on_the_host_the_paths_are_handed_as_they_are(tmp_path: Path):
    for executor in (SandboxExecutor(), None):
        spec, server = spec_in(executor, tmp_path / (executor.kind if executor else "host"))
        [_, handed] = mcp_servers(spec)
        assert handed.command == str(server)
        assert handed.args == ["--root", str(server.parent), "--mode", "/elsewhere/x"]
