"""Utility turns a worker runs for Kandev itself, beside the task's conversation: a commit message suggested by the
task's agent (kandev.domain.shipping.suggest prepares it). A fresh ACP session in a throw-away folder, no tools,
every permission denied, one prompt, bounded in time; the agent is closed at once."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from typing import Any

from kandev.domain.context import ServiceContext
from kandev.domain.errors import DomainError, UnprocessableError
from kandev.domain.shipping.suggest import clean_answer, utility_launch
from kandev.runtime.acp_adapter import AcpRuntime
from kandev.runtime.base import FAILED, AgentLaunchError, AgentUpdate, LaunchSpec

UTILITY_SECONDS = 90.0


async def suggest_commit_message(ctx: ServiceContext, request: dict[str, Any]) -> dict[str, Any]:
    """The reads queue's answer to `{"op": "suggest_message", task_id, repository_id}`: {"result": {"message"}}
    or an error answer."""
    try:
        message = await _suggest(ctx, request["task_id"], request["repository_id"])
    except DomainError as error:
        return {"error": error.message, "code": error.code, "reason": error.fields.get("reason")}
    return {"result": {"message": message}}


async def _suggest(ctx: ServiceContext, task_id: str, repository_id: str) -> str:
    launch = await utility_launch(ctx, task_id, repository_id)
    folder = tempfile.mkdtemp(prefix="kandev-utility-")
    if launch.run_as is not None:
        os.chown(folder, launch.run_as.uid, launch.run_as.gid)
    said: list[str] = []

    async def on_update(update: AgentUpdate) -> None:
        if update.kind == "agent_text":
            said.append(update.text)

    runtime = AcpRuntime()
    spec = LaunchSpec(
        argv=launch.argv,
        cwd=folder,
        env=launch.env,
        permission_policy="DENY",
        secrets=launch.secrets,
        run_as=launch.run_as,
        readable=launch.readable,
    )
    try:
        async with asyncio.timeout(UTILITY_SECONDS):
            await runtime.launch(spec, on_update)
            result = await runtime.prompt(launch.prompt)
    except TimeoutError:
        raise UnprocessableError(
            f"the agent did not suggest a message within {UTILITY_SECONDS:g} s: write one", reason="no_suggestion"
        ) from None
    except AgentLaunchError as error:
        raise UnprocessableError(f"the agent could not be started: {error}", reason="no_suggestion") from None
    finally:
        await runtime.close()
        shutil.rmtree(folder, ignore_errors=True)
    if result.stop_reason == FAILED:
        raise UnprocessableError("the agent could not suggest a message: write one", reason="no_suggestion")
    return clean_answer("".join(said))
