"""The server's state is private: data dir 0700, database files and key 0600, tightened when looser."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

from kandev.platform.data_dir import prepare_data_dir, prepare_work_dir, private_sqlite
from kandev.platform.settings import Settings


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_data_dir_is_private_with_a_private_database_file(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "fresh" / "data", database_url=None)
    prepare_data_dir(settings)
    assert mode(settings.data_path) == 0o700
    assert mode(settings.data_path / "kandev.db") == 0o600


def test_a_loose_existing_data_dir_is_tightened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o755)
    for name in (
        "kandev.db",
        "kandev.db-wal",
        "kandev.db-shm",
        "server.key",
    ):
        (data / name).write_text("x")
        (data / name).chmod(0o644)
    prepare_data_dir(Settings(data_dir=data, database_url=None))
    assert mode(data) == 0o700
    assert {p.name: mode(p) for p in data.iterdir()} == {
        "kandev.db": 0o600,
        "kandev.db-wal": 0o600,
        "kandev.db-shm": 0o600,
        "server.key": 0o600,
    }


def test_sqlite_creates_its_wal_and_shm_files_private_once_the_database_file_is(tmp_path: Path) -> None:
    path = tmp_path / "kandev.db"
    private_sqlite(path)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE t (x)")
    connection.execute("INSERT INTO t VALUES (1)")
    connection.commit()
    try:
        companions = [tmp_path / "kandev.db-wal", tmp_path / "kandev.db-shm"]
        assert all(p.exists() for p in companions)
        assert [mode(p) for p in [path, *companions]] == [0o600, 0o600, 0o600]
    finally:
        connection.close()


def test_the_generated_server_key_is_private_from_the_start(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    key = settings.server_key
    assert len(key) == 64
    assert mode(tmp_path / "data") == 0o700
    assert mode(tmp_path / "data" / "server.key") == 0o600


def test_the_work_dir_is_private_or_only_traversable_for_an_agent_user(tmp_path: Path) -> None:
    alone = Settings(data_dir=tmp_path / "a" / "data")
    assert prepare_work_dir(alone) == tmp_path / "a" / "data-work"
    assert mode(alone.work_path) == 0o700
    shared = Settings(data_dir=tmp_path / "b" / "data", agent_user="nobody")
    prepare_work_dir(shared)
    assert mode(shared.work_path) == 0o711


def test_an_existing_work_dir_keeps_the_modes_its_operator_gave_it(tmp_path: Path) -> None:
    work = tmp_path / "shared"
    work.mkdir()
    work.chmod(0o775)
    prepare_work_dir(Settings(data_dir=tmp_path / "data", work_dir=work))
    assert mode(work) == 0o775
