"""What `kandev serve` runs beside itself on the embedded default, supervised: the Redis-protocol server
(when KANDEV_REDIS_URL is unset), KANDEV_WORKERS `kandev worker` processes and the scheduler."""

from __future__ import annotations

import functools
import logging
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kandev.platform.data_dir import write_embedded_redis_port
from kandev.platform.embedded_redis import start_embedded_redis
from kandev.platform.settings import Settings
from kandev.platform.supervisor import Supervisor, spawn

log = logging.getLogger("kandev.platform.embedded_default")

REDIS = "redis"
SCHEDULER = "scheduler"


def worker_names(settings: Settings) -> list[str]:
    """Stable, unique names (<KANDEV_WORKER_NAME or host>-w1 … -wN): a restarted worker keeps its name,
    and with it its own queue and the sessions routed there."""
    prefix = settings.worker_name or socket.gethostname()
    return [f"{prefix}-w{i}" for i in range(1, settings.workers + 1)]


def child_command(role: str) -> list[str]:
    """`kandev <role>` in this interpreter, isolated: with -I neither the working directory (a folder named
    `kandev` there) nor PYTHON* variables can put another package first."""
    return [sys.executable, "-I", "-m", "kandev.cli", role]


def child_env(settings: Settings) -> dict[str, str]:
    """What the children add to this process's environment: where the shared state is, as absolute paths
    (a relative KANDEV_DATA_DIR must not depend on a child's working directory)."""
    env = {
        "KANDEV_REDIS_URL": settings.redis_url or "",
        "KANDEV_DATA_DIR": str(settings.data_path.resolve()),
        # Agents the workers launch must reach this server's MCP endpoint, on its real port.
        "KANDEV_PUBLIC_URL": settings.resolved_public_url(),
    }
    if settings.work_dir is not None:
        env["KANDEV_WORK_DIR"] = str(settings.work_path.resolve())
    return env


class EmbeddedDefault:
    """The supervised children of `kandev serve`; /healthz asks it whether any worker is alive."""

    def __init__(self, settings: Settings, supervisor: Supervisor) -> None:
        self.settings = settings
        self.supervisor = supervisor
        self.workers = worker_names(settings)
        self.port_file: Path | None = None

    def alive_workers(self) -> list[str]:
        return [name for name in self.workers if self.supervisor.alive(name)]

    def health(self) -> tuple[bool, dict[str, Any]]:
        """(healthy, report): unhealthy when no embedded worker is alive (nothing would run a turn)."""
        alive = len(self.alive_workers())
        report: dict[str, Any] = {"workers": alive, "configured_workers": len(self.workers)}
        for name in (SCHEDULER, REDIS):
            if name in self.supervisor.names():
                report[name] = "ok" if self.supervisor.alive(name) else "restarting"
        return alive > 0, report

    def stop(self, timeout: float = 10.0) -> None:
        self.supervisor.stop(timeout)
        if self.port_file is not None:
            self.port_file.unlink(missing_ok=True)


def _start_redis(host: str, port: int) -> subprocess.Popen[bytes]:
    return start_embedded_redis(host=host, port=port).process


def _recover(settings: Settings, recover: Callable[[Settings], object]) -> None:
    """A restarted embedded Redis is empty: enqueue again, from the database, everything it lost."""
    log.info("recovery after the embedded Redis restarted: %s", recover(settings))


def start_embedded_default(
    settings: Settings, recover: Callable[[Settings], object], supervisor: Supervisor | None = None
) -> EmbeddedDefault:
    """Start the children (Redis first, when embedded; it sets settings.redis_url) and supervise them;
    `recover` (the jobs' recovery) refills a restarted embedded Redis from the database."""
    supervisor = supervisor or Supervisor()
    pool = EmbeddedDefault(settings, supervisor)
    try:
        if settings.embedded_redis:
            server = start_embedded_redis(port=settings.embedded_redis_port)
            settings.redis_url = server.url
            # `kandev dashboard` finds the server here; a restart keeps the port, so the record stays true.
            pool.port_file = write_embedded_redis_port(settings.data_path, server.port)
            parts = urlsplit(server.url)
            host, port = parts.hostname or "127.0.0.1", parts.port or 0
            # A restart takes the same port, so every client's URL stays valid.
            supervisor.add(
                REDIS,
                lambda: _start_redis(host, port),
                running=server.process,
                after_restart=lambda: _recover(settings, recover),
                stop_last=True,
            )
            log.info("embedded Redis-protocol server at %s", server.url)
        env = child_env(settings)
        for name in pool.workers:
            supervisor.add(
                name, functools.partial(spawn, child_command("worker"), env={**env, "KANDEV_WORKER_NAME": name})
            )
        supervisor.add(SCHEDULER, functools.partial(spawn, child_command(SCHEDULER), env=env))
    except BaseException:
        pool.stop(timeout=5.0)
        raise
    supervisor.start_monitor()
    return pool
