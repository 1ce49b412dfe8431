"""KANDEV_DATABASE_URL as providers print it: postgres:// and postgresql:// run on asyncpg; others are refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kandev.platform.database import async_database_url, create_engine, database_host
from kandev.platform.settings import Settings


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgres://u:p@db.example:5433/kandev", "postgresql+asyncpg://u:p@db.example:5433/kandev"),
        ("postgresql://u:p@db.example/kandev", "postgresql+asyncpg://u:p@db.example/kandev"),
        ("POSTGRESQL://u:p@db.example/kandev", "postgresql+asyncpg://u:p@db.example/kandev"),
        ("postgresql+asyncpg://u:p@db.example/kandev", "postgresql+asyncpg://u:p@db.example/kandev"),
        (
            "sqlite:////var/lib/kandev/kandev.db",
            "sqlite+aiosqlite:////var/lib/kandev/kandev.db",
        ),
    ],
)
def test_postgres_and_sqlite_urls_are_normalised_to_their_async_driver(url: str, expected: str):
    assert async_database_url(url) == expected
    assert Settings(database_url=url).resolved_database_url() == expected


def test_libpq_sslmode_becomes_asyncpgs_ssl_and_a_percent_encoded_password_survives():
    url = async_database_url("postgres://u:p%40ss@db.example/kandev?sslmode=require")
    assert url == "postgresql+asyncpg://u:p%40ss@db.example/kandev?ssl=require"
    assert create_engine(url, pooled=False).url.password == "p@ss"


@pytest.mark.parametrize("url", ["mysql://u:hunter2@h/db", "postgresql+psycopg2://u:hunter2@h/db", "db.example/kandev"])
def test_other_drivers_are_refused_with_the_url_to_write_and_without_the_password(url: str):
    with pytest.raises(ValidationError) as caught:
        Settings(database_url=url)
    message = caught.value.errors()[0]["msg"]
    assert "postgresql+asyncpg://USER:PASSWORD@HOST:5432/DBNAME" in message and "hunter2" not in message


def test_the_engine_factory_accepts_a_plain_postgres_url_too():
    # Alembic's env and jobs build engines from URLs that may not have passed through Settings.
    engine = create_engine("postgres://u:p@db.example/kandev", pooled=False)
    assert engine.url.drivername == "postgresql+asyncpg"


def test_messages_name_the_host_and_port_never_the_password():
    assert database_host("postgresql+asyncpg://u:hunter2@db.example/kandev") == "db.example:5432"
    assert database_host("postgresql+asyncpg://u:hunter2@db.example:6543/kandev") == "db.example:6543"
