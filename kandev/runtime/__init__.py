"""Agent runtime: launch an agent, prompt it, stream its updates, cancel and close it.

Importing this package is cheap; `kandev.runtime.acp_adapter.AcpRuntime` pulls in the ACP package.
"""

from kandev.runtime.base import (
    AgentLaunchError,
    AgentProcessExited,
    AgentRuntime,
    AgentRuntimeError,
    AgentUpdate,
    LaunchInfo,
    LaunchSpec,
    PermissionHandler,
    PermissionOptionInfo,
    PermissionRequest,
    PromptResult,
    UpdateHandler,
    scripted_command,
)

__all__ = [
    "AgentLaunchError",
    "AgentProcessExited",
    "AgentRuntime",
    "AgentRuntimeError",
    "AgentUpdate",
    "LaunchInfo",
    "LaunchSpec",
    "PermissionHandler",
    "PermissionOptionInfo",
    "PermissionRequest",
    "PromptResult",
    "UpdateHandler",
    "scripted_command",
]
