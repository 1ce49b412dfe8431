"""What a worker can run, advertised so turns are placed on workers able to run their executor: the capabilities
set by `kandev worker --capabilities` (KANDEV_WORKER_CAPABILITIES), or, when unset, those detected on this host
(sandbox when bubblewrap makes a box here, docker when the Docker daemon answers)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading

from redis import Redis

from kandev.domain.workspace.executor_config import KIND_CAPABILITY
from kandev.models.enums import ExecutorKind
from kandev.platform.job_queues import CAPABILITIES_TTL_SECONDS, capabilities_key
from kandev.platform.settings import Settings
from kandev.wiring import EXECUTORS  # the executors this process registered at composition

log = logging.getLogger("kandev.worker")
_RENEW_SECONDS = 2.0


async def host_executors() -> dict[str, str | None]:
    """Per box executor kind: None when this host can make its boxes, else why not."""
    kinds = [e for e in EXECUTORS if ExecutorKind(e.kind) in KIND_CAPABILITY]
    reasons = await asyncio.gather(*(e.available() for e in kinds))
    return {e.kind: reason for e, reason in zip(kinds, reasons, strict=True)}


def worker_capabilities(settings: Settings) -> frozenset[str]:
    """The configured capabilities, or those detected on this host."""
    if settings.worker_capabilities is not None:
        return frozenset(c for c in settings.worker_capabilities.split(",") if c)
    found = asyncio.run(host_executors())
    return frozenset(KIND_CAPABILITY[ExecutorKind(kind)] for kind, reason in found.items() if reason is None)


class Advertiser(threading.Thread):
    """Tells dispatchers (and box sweeps) that this worker lives and what it offers, from a thread of its own so a
    busy event loop never lets the key lapse; it expires soon after the worker dies, however it dies."""

    def __init__(self, redis: Redis, worker_name: str, capabilities: frozenset[str]) -> None:
        super().__init__(name=f"kandev-advertiser-{worker_name}", daemon=True)
        self._redis, self._key, self._value = redis, capabilities_key(worker_name), ",".join(sorted(capabilities))
        self._stopped = threading.Event()
        self._advertise()

    def _advertise(self) -> None:
        try:
            self._redis.set(self._key, self._value, ex=CAPABILITIES_TTL_SECONDS)
        except Exception:
            log.warning("could not advertise this worker's capabilities", exc_info=True)

    def run(self) -> None:
        while not self._stopped.wait(_RENEW_SECONDS):
            self._advertise()

    def stop(self) -> None:
        self._stopped.set()
        with contextlib.suppress(Exception):
            self._redis.delete(self._key)
