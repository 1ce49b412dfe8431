"""File modes of the server's state: the data dir (database, key) is the server user's alone, and the
work dir, where agents' working trees live, is reachable but not listable by an agent user."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kandev.platform.settings import Settings

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
# With an agent user the work dir must be traversable by it; listing it stays the server's.
SHARED_WORK_DIR = 0o711
KEY_FILE = "server.key"
# The loopback port of the embedded Redis-protocol server `kandev serve` runs, for `kandev dashboard`.
EMBEDDED_REDIS_PORT_FILE = "redis.port"
SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def private_dir(path: Path, mode: int = PRIVATE_DIR) -> Path:
    """Create `path` (and its parents) and set exactly `mode` on it, tightening a looser existing one."""
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    if (path.stat().st_mode & 0o777) != mode:
        path.chmod(mode)
    return path


def tighten(path: Path, mode: int = PRIVATE_FILE) -> None:
    """Remove every permission bit beyond `mode` from an existing file (missing files are skipped)."""
    try:
        current = path.stat(follow_symlinks=False).st_mode & 0o777
    except FileNotFoundError:
        return
    if current & ~mode:
        path.chmod(current & mode)


def private_sqlite(path: Path) -> None:
    """The SQLite file and its companions 0600; a missing file is created empty (a valid database) so
    SQLite, which gives -wal and -shm its database file's mode, never creates them world-readable."""
    if not path.parent.exists():
        private_dir(path.parent)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE_FILE))
    for suffix in SQLITE_SUFFIXES:
        tighten(path.with_name(path.name + suffix))


def sqlite_path(url: str) -> Path | None:
    """The file of a file-backed SQLite URL, else None."""
    if not url.startswith("sqlite") or ":///" not in url:
        return None
    path = url.split(":///", 1)[1].split("?", 1)[0]
    return None if path in ("", ":memory:") else Path(path)


def prepare_data_dir(settings: Settings) -> Path:
    """The data dir 0700 with its key and embedded database 0600; run by every process that touches it."""
    data = private_dir(settings.data_path)
    tighten(data / KEY_FILE)
    database = sqlite_path(settings.resolved_database_url())
    if database is not None:
        private_sqlite(database)
    return data


def prepare_work_dir(settings: Settings) -> Path:
    """The work dir, created the server user's alone, or traversable (not listable) when agents run as another
    user; an existing one keeps the modes its operator gave it (it may be a shared folder)."""
    path = settings.work_path
    if not path.is_dir():
        private_dir(path, SHARED_WORK_DIR if settings.confines_agents else PRIVATE_DIR)
    return path


def write_embedded_redis_port(data: Path, port: int) -> Path:
    """Record the embedded server's port in the data dir (0600, replaced atomically)."""
    path = data / EMBEDDED_REDIS_PORT_FILE
    tmp = path.with_name(f"{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, PRIVATE_FILE)
    with os.fdopen(fd, "w") as file:
        file.write(f"{port}\n")
    os.replace(tmp, path)
    return path


def read_embedded_redis_port(data: Path) -> int | None:
    """The port `kandev serve` recorded, or None when there is no (valid) record."""
    try:
        text = (data / EMBEDDED_REDIS_PORT_FILE).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and 0 < int(text) < 65536 else None
