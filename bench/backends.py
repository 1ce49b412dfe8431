"""Where a benchmark keeps its data: KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL when set, else a
fresh SQLite file and the embedded Redis-protocol server, like `kandev serve`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kandev.migrations import upgrade_to_head


@dataclass(frozen=True)
class Backends:
    database_url: str
    redis_url: str
    folder: Path

    @property
    def database(self) -> str:
        """The database's driver name, for the report."""
        return self.database_url.split(":", 1)[0]


@contextmanager
def backends() -> Iterator[Backends]:
    """The database (migrated) and Redis for one benchmark, and a scratch folder; all gone afterwards."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        redis_url = os.environ.get("KANDEV_BENCH_REDIS_URL")
        server = None
        if not redis_url:
            from kandev.embedded import start_embedded_redis

            server = start_embedded_redis()
            redis_url = server.url
        database_url = os.environ.get("KANDEV_BENCH_DATABASE_URL") or f"sqlite+aiosqlite:///{folder / 'bench.db'}"
        try:
            upgrade_to_head(database_url)
            yield Backends(database_url, redis_url, folder)
        finally:
            if server is not None:
                server.stop()
