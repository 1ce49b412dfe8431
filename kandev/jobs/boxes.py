"""Boxes on a worker: what a turn launches its agent in when its executor is a box kind (SANDBOX, DOCKER), and the
sweep that removes the boxes nobody runs any more: those of a worker that died (kill -9 included: its
advertisement expires within seconds, and a worker restarted under the same name sweeps its own at start) and
those whose session ended or whose task was deleted. Only this installation's boxes are looked at (their
`kandev.instance` label)."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import select

from kandev.domain.context import ServiceContext
from kandev.domain.ports import EXECUTORS, BoxRequest, Executor
from kandev.domain.session_rows import is_terminal
from kandev.domain.sessions.box_setup import INSTANCE, MANAGED, SESSION, WORKER, box_labels
from kandev.domain.sessions.turn_setup import TurnSetup
from kandev.domain.workspace.executor_config import BOX_KINDS, KIND_CAPABILITY
from kandev.models import Session, Task
from kandev.platform.job_queues import capabilities_key
from kandev.runtime.mcp_relay import McpRelay, bridge_folder

log = logging.getLogger("kandev.boxes")

BOX_CAPABILITIES = frozenset(KIND_CAPABILITY.values())
SWEEP_SECONDS = 5.0


def box_launch(
    ctx: ServiceContext, setup: TurnSetup, session_id: str, worker: str
) -> tuple[Executor | None, BoxRequest | None, McpRelay | None] | None:
    """The executor, box request and MCP bridge of a box executor ((None, None, None): a plain process here);
    None when this worker has no such executor."""
    if setup.box is None:
        return None, None, None
    executor = EXECUTORS.get(setup.box.kind)
    if executor is None:
        return None
    settings = ctx.settings
    # Made for every box (it holds a prepare script too); it lets a connection in only with the session's token.
    relay = McpRelay(bridge_folder(settings.work_path, session_id), setup.mcp_token, setup.mcp_url)
    request = BoxRequest(
        session_id=session_id,
        task_id=setup.task_id,
        kind=setup.box.kind,
        argv=setup.argv,
        env=setup.env,
        workdir=setup.cwd,
        config=setup.box.config,
        run_as=setup.run_as,
        readable=setup.box.readable,
        writable=setup.box.writable,
        bridge_dir=str(relay.folder),
        labels=box_labels(settings, session_id, setup.task_id, worker),
        hidden=(str(settings.data_path), str(settings.work_path)),
    )
    return executor, request, relay


async def sweep_boxes(ctx: ServiceContext, worker: str, *, starting: bool = False) -> int:
    """Remove this installation's boxes whose worker is gone (or is this one, `starting` afresh) or whose session
    ended; returns how many went."""
    removed = 0
    ours = {MANAGED: "1", INSTANCE: ctx.settings.instance_label}
    for executor in EXECUTORS:
        if executor.kind not in BOX_KINDS or await executor.available() is not None:
            continue
        boxes = await executor.boxes(ours)
        if not boxes:
            continue
        sessions = {box.labels.get(SESSION, "") for box in boxes if box.labels}
        live_workers = await _live_workers(ctx, {box.labels.get(WORKER, "") for box in boxes if box.labels})
        ended = await _ended_sessions(ctx, sessions)
        for box in boxes:
            labels = box.labels or {}
            owner = labels.get(WORKER, "")
            dead = owner not in live_workers or (starting and owner == worker)
            if dead or labels.get(SESSION, "") in ended:
                log.info("removing box %s of session %s (worker %s)", box.box_id[:12], labels.get(SESSION), owner)
                await executor.remove(box.box_id)
                removed += 1
    return removed


async def sweep_forever(ctx: ServiceContext, worker: str) -> None:
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        try:
            await sweep_boxes(ctx, worker)
        except Exception:
            log.exception("worker %s: the box sweep failed", worker)


async def _live_workers(ctx: ServiceContext, names: set[str]) -> set[str]:
    ordered = sorted(names)
    alive = await ctx.bus.redis.mget([capabilities_key(name) for name in ordered]) if ordered else []
    return {name for name, value in zip(ordered, alive, strict=True) if value is not None}


async def _ended_sessions(ctx: ServiceContext, session_ids: set[str]) -> set[str]:
    """Of these sessions, those that ended, are gone, or whose task was deleted."""
    async with ctx.read() as db:
        rows = await db.execute(
            select(Session, Task.deleted_at).join(Task, Task.id == Session.task_id).where(Session.id.in_(session_ids))
        )
        live = {session.id for session, deleted in rows.tuples() if deleted is None and not is_terminal(session)}
    return session_ids - live
