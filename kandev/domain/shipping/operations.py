"""One shipping operation of a kind per task repository at a time (kandev.models.ShipOperation): a click claims
the row before anything reaches git or the code host, so a double click is refused instead of pushing, opening
or merging twice; the claim lapses after CLAIM_SECONDS when the process that held it died, and the next attempt
is told so (`recovered`), so it first asks the code host what the lost one did."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import update
from sqlalchemy.engine import CursorResult
from sqlalchemy.exc import IntegrityError

from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, DomainError
from kandev.models import ShipOperation
from kandev.models.base import utcnow

# Longer than any one operation takes (git and code-host calls are bounded well below it).
CLAIM_SECONDS = 330
RUNNING, DONE, FAILED = "RUNNING", "DONE", "FAILED"
_WORDS = {"push": "a push", "open": "opening the pull request", "merge": "a merge", "update": "an update"}


@dataclass
class Claim:
    """A held claim: `recovered` when the previous one of this kind was left running by a process that died;
    `previous` is what the last finished one recorded; set `result` to record what this one did."""

    recovered: bool
    previous: dict[str, Any]
    result: dict[str, Any] = field(default_factory=dict)


@asynccontextmanager
async def claimed(ctx: ServiceContext, task_id: str, repository_id: str, kind: str) -> AsyncIterator[Claim]:
    """Hold the (task, repository, kind) claim for the block; a ConflictError (reason in_progress) when another
    holds it. The row records DONE (with the block's `result`) or FAILED with the error's message."""
    claim = await _take(ctx, task_id, repository_id, kind)
    try:
        yield claim
    except BaseException as error:
        message = error.message if isinstance(error, DomainError) else type(error).__name__
        await _finish(ctx, task_id, repository_id, kind, FAILED, message, None)
        raise
    await _finish(ctx, task_id, repository_id, kind, DONE, None, claim.result)


async def _take(ctx: ServiceContext, task_id: str, repository_id: str, kind: str) -> Claim:
    now = utcnow()
    until = now + timedelta(seconds=CLAIM_SECONDS)
    actor = ctx.principal.actor
    try:
        async with ctx.unit_of_work() as uow:
            row = await uow.db.get(ShipOperation, (task_id, repository_id, kind))
            if row is None:
                uow.db.add(
                    ShipOperation(
                        task_id=task_id,
                        repository_id=repository_id,
                        kind=kind,
                        state=RUNNING,
                        claimed_until=until,
                        actor=actor,
                        attempts=1,
                        result={},
                        updated_at=now,
                    )
                )
                return Claim(False, {})
            lapsed = row.state == RUNNING
            previous = dict(row.result or {})
            taken = cast(
                CursorResult[Any],
                await uow.db.execute(
                    update(ShipOperation)
                    .where(
                        ShipOperation.task_id == task_id,
                        ShipOperation.repository_id == repository_id,
                        ShipOperation.kind == kind,
                        (ShipOperation.state != RUNNING) | (ShipOperation.claimed_until <= now),
                    )
                    .values(
                        state=RUNNING,
                        claimed_until=until,
                        actor=actor,
                        attempts=ShipOperation.attempts + 1,
                        updated_at=now,
                    )
                    .execution_options(synchronize_session=False)
                ),
            )
            if taken.rowcount:
                return Claim(lapsed, previous)
    except IntegrityError:  # a concurrent first claim inserted the row first
        pass
    raise ConflictError(
        f"{_WORDS.get(kind, kind)} of this repository is already under way: wait for it to finish",
        reason="in_progress",
    )


async def _finish(
    ctx: ServiceContext,
    task_id: str,
    repository_id: str,
    kind: str,
    state: str,
    error: str | None,
    result: dict[str, Any] | None,
) -> None:
    async with ctx.unit_of_work() as uow:
        row = await uow.db.get(ShipOperation, (task_id, repository_id, kind))
        if row is None:
            return
        row.state, row.last_error, row.updated_at = state, (error or "")[:500] or None, utcnow()
        if result is not None:
            row.result = result


async def last_result(ctx: ServiceContext, task_id: str, repository_id: str, kind: str) -> dict[str, Any]:
    """What the last finished operation of this kind recorded ({} when none did)."""
    async with ctx.read() as db:
        row = await db.get(ShipOperation, (task_id, repository_id, kind))
        return dict(row.result or {}) if row is not None else {}
