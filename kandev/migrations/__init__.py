"""Alembic migrations; `upgrade_to_head` is what `kandev db upgrade` and `kandev serve` call."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # Alembic interpolates '%' in options; URLs may carry percent-encoded passwords.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade_to_head(url: str) -> None:
    """Bring the database at `url` to the newest revision (creating a SQLite file's folder)."""
    if url.startswith("sqlite") and ":///" in url:
        path = Path(url.split(":///", 1)[1])
        if str(path) != ":memory:":
            path.parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(url), "head")
