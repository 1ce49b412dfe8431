"""Alembic migrations; `upgrade_to_head` is what `kandev db upgrade` and `kandev serve` call."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from kandev.platform.data_dir import private_sqlite, sqlite_path

MIGRATIONS_DIR = Path(__file__).parent


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # Alembic interpolates '%' in options; URLs may carry percent-encoded passwords.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade_to_head(url: str) -> None:
    """Bring the database at `url` to the newest revision (a SQLite file is created private first)."""
    path = sqlite_path(url)
    if path is not None:
        private_sqlite(path)
    command.upgrade(alembic_config(url), "head")
