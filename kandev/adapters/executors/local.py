"""The plain executors (WORKTREE, LOCAL, SCRATCH): the agent is a process on the worker's host under its keeper,
as the agent's OS identity when there is one; its working directory is where it works. Nothing is boxed."""

from __future__ import annotations

import os

from kandev.domain.ports import Box, BoxRequest, BoxState, ExecutorError
from kandev.runtime.process import AgentProcess, minimal_env


class LocalExecutor:
    """Executor port over a plain agent process; its pid is the box id."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    async def launch(self, request: BoxRequest) -> Box:
        env = minimal_env(request.env, request.run_as)
        try:
            box = await AgentProcess.spawn(request.argv, env, request.workdir, user=request.run_as)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ExecutorError(f"cannot start {request.argv[:1]}: {reason}", reason="start_failed") from None
        box.kind = self.kind
        return box

    async def stop(self, box_id: str) -> None:
        return None  # a process is ended by its runtime (kill_group), never by id: its pid may be reused

    async def inspect(self, box_id: str) -> BoxState | None:
        pid = box_id.partition(":")[2]
        return BoxState(box_id, running=True) if pid.isdigit() and os.path.exists(f"/proc/{pid}") else None

    async def remove(self, box_id: str) -> None:
        return None

    async def boxes(self, labels: dict[str, str]) -> list[BoxState]:
        return []

    async def available(self) -> str | None:
        return None

    def seen_inside(self, request: BoxRequest, arg: str) -> str:
        return arg  # not boxed: the host's paths
