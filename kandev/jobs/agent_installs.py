"""The RQ job that installs (or updates) a catalogue agent's npm package into the work dir of the worker that runs
it, telling its phase in the job's meta as it goes (kandev.platform.job_queues.install_progress reads it)."""

from __future__ import annotations

import logging

from rq import get_current_job

from kandev.jobs.worker_loop import current_loop
from kandev.platform.settings import Settings
from kandev.runtime import agent_catalogue
from kandev.runtime.agent_catalogue import AgentInstallError

log = logging.getLogger("kandev.jobs")


def install_agent(agent_id: str, update: bool) -> str:
    """RQ entry point (sync): DONE, or FAILED with the install's safe message in the job's meta (a failed install
    is an outcome the person sees, not a job to retry)."""
    worker = current_loop()
    settings = worker.settings if worker is not None else Settings()
    job = get_current_job()

    def tell(phase: str, error: str | None = None) -> None:
        if job is not None:
            job.meta.update(phase=phase, error=error)
            job.save_meta()

    item = agent_catalogue.entry(agent_id)
    try:
        if item is None:
            raise AgentInstallError(f"the agent catalogue has no agent {agent_id!r}")
        agent_catalogue.install(item, settings.work_path, settings.mcp_npm_source, update=update, on_phase=tell)
    except AgentInstallError as exc:
        log.warning("install of agent %s failed: %s", agent_id, exc)
        tell("FAILED", str(exc))
        return "FAILED"
    tell("DONE")
    return "DONE"
