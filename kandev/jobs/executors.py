"""`testExecutorProfile`'s job, on a worker offering what the profile needs: make a box of the profile (its image
built or found, its prepare script run, its limits, network and user), let a small shell probe report what it
sees from inside, then remove the box. A box that cannot be made reports why, the cause named."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

from kandev.domain.context import ServiceContext
from kandev.domain.errors import DomainError
from kandev.domain.ports import EXECUTORS, BoxRequest, ExecutorError
from kandev.domain.sessions.box_setup import box_labels, probe_setup
from kandev.domain.workspace.workdirs import prepare_home
from kandev.jobs.turns import worker_identity
from kandev.jobs.worker_loop import run_as_system
from kandev.platform.handover import ensure_dir, remove_tree

# What the box reports, one fact a line; POSIX sh and /proc only, so any image (or the host's /usr) can run it.
PROBE = r"""
echo "runs as uid:gid $(id -u):$(id -g)"
if [ -w . ]; then echo "working directory $(pwd): writable"; else echo "working directory $(pwd): NOT writable"; fi
if command -v python3 >/dev/null 2>&1; then
  echo "python3 $(python3 -c 'import sys; print(sys.version.split()[0])'): the kandev MCP bridge can run"
else
  echo "no python3: the kandev MCP bridge (python3 /run/kandev/mcp_stdio.py) can't run in this box"
fi
echo "network interfaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
echo "processes visible: $(ls -d /proc/[0-9]* | wc -l)"
"""
_PROBE_SECONDS = 60.0


def test_executor_profile(profile_id: str) -> dict[str, Any]:
    """RQ entry point."""
    return run_as_system(_test, profile_id)


async def _test(ctx: ServiceContext, profile_id: str) -> dict[str, Any]:
    worker = ctx.settings.worker_name or worker_identity()
    report: dict[str, Any] = {"ok": False, "worker": worker, "findings": [], "error": None}
    try:
        setup = await probe_setup(ctx, profile_id)
    except DomainError as error:
        report["error"] = error.message
        return report
    executor = EXECUTORS.get(setup.kind)
    if executor is None:
        report["error"] = f"this worker has no {setup.kind} executor"
        return report
    if setup.run_as is not None:
        prepare_home(ctx.settings.work_path, setup.run_as)
    folder = ctx.settings.work_path / "boxes" / f"probe-{secrets.token_hex(8)}"
    ensure_dir(folder.parent, 0o711)
    ensure_dir(folder, 0o777)  # whoever the box's user is writes here: it is the probe's working directory
    bridge = ensure_dir(folder / "bridge", 0o755)
    request = BoxRequest(
        session_id=f"probe-{profile_id}",
        task_id="probe",
        kind=setup.kind,
        argv=["/bin/sh", "-c", PROBE],
        env=setup.config.env,
        workdir=str(folder),
        config=setup.config,
        run_as=setup.run_as,
        bridge_dir=str(bridge),
        labels=box_labels(ctx.settings, f"probe-{profile_id}", "probe", worker),
        hidden=(str(ctx.settings.data_path), str(ctx.settings.work_path)),
    )
    began = time.perf_counter()
    try:
        box = await executor.launch(request)
    except ExecutorError as error:
        report["error"] = error.message
        remove_tree(folder)
        return report
    try:
        report["findings"].append(f"{setup.kind} box {box.box_id[:12]} started in {time.perf_counter() - began:.2f}s")
        async with asyncio.timeout(_PROBE_SECONDS):
            output = await box.stdout.read()
            status = await box.wait()
        report["findings"] += [line for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
        if status != 0:
            report["error"] = f"the probe exited with status {status}: " + "; ".join(await box.stderr_tail(5))
        else:
            report["ok"] = True
    except TimeoutError:
        report["error"] = f"the probe did not finish within {_PROBE_SECONDS:g}s"
    finally:
        await box.kill_group()
        remove_tree(folder)
    report["findings"].append("the box was stopped and removed")
    return report
