"""RQ job of outgoing notifications, on the default queue: one attempt at one delivery."""

from __future__ import annotations

from kandev.domain.notifications.deliveries import deliver
from kandev.jobs.worker_loop import run_as_system


def deliver_notification(delivery_id: str) -> str:
    """RQ entry point (sync): attempt the delivery when it is due (a duplicate or repeated job does nothing)."""
    return run_as_system(deliver, delivery_id)
