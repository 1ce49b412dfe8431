"""Checks `kandev` commands make before anything starts: each failure is one line on stderr naming the setting
(never its secret value) and exit status 2, instead of a traceback from deep inside a child process."""

from __future__ import annotations

import errno
import socket
from typing import Any

import typer

from kandev.platform.database import create_engine, database_host
from kandev.platform.redis_client import sync_redis
from kandev.platform.settings import Settings

# Settings whose values may hold a password: an error about them never repeats the value.
_SECRET_SETTINGS = frozenset({"database_url", "redis_url", "secret_key"})


def load_settings(**overrides: Any) -> Settings:
    """The settings, or one line naming each bad KANDEV_* setting and exit status 2 (no traceback)."""
    from pydantic import ValidationError

    try:
        return Settings(**overrides)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            field = str(item["loc"][0]) if item["loc"] else "?"
            message = str(item["msg"]).removeprefix("Value error, ")
            if field not in _SECRET_SETTINGS and item.get("input") is not None:
                message += f" (got {str(item['input'])[:80]!r})"
            option = f" (--{field})" if field in overrides else ""
            problems.append(f"KANDEV_{field.upper()}{option}: {message}")
        typer.echo("error: " + "; ".join(problems), err=True)
        raise typer.Exit(2) from None


def port_problem(host: str, port: int) -> OSError | None:
    """Why `host:port` cannot be listened on right now, or None; bound the way uvicorn binds it."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as error:
        return error
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as error:
            return error
    return None


def require_port(host: str, port: int, setting: str, option: str | None) -> None:
    """Refuse, before anything starts, a port that is taken (suggesting a free one) or can't be bound."""
    problem = port_problem(host, port)
    if problem is None:
        return
    if problem.errno == errno.EADDRINUSE:
        spare = next((p for p in range(port + 1, min(port + 50, 65536)) if port_problem(host, p) is None), None)
        hint = f"; start with {option} {spare}" if option and spare else (f"; try {option}" if option else "")
        typer.echo(f"error: {host}:{port} is already in use ({setting}){hint}, or stop what holds it", err=True)
    else:
        typer.echo(f"error: cannot listen on {host}:{port} ({setting}): {problem.strerror or problem}", err=True)
    raise typer.Exit(2)


def _first_line(error: BaseException) -> str:
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip().splitlines()
    return text[0] if text and text[0] else type(cause).__name__


def require_database(settings: Settings, timeout: float = 10.0) -> None:
    """Connect once to a configured database; unreachable is one line naming its host and KANDEV_DATABASE_URL."""
    if settings.embedded_database:
        return
    import asyncio

    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    url = settings.resolved_database_url()

    async def ping() -> None:
        engine = create_engine(url, pooled=False)
        try:
            async with asyncio.timeout(timeout), engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        finally:
            await engine.dispose()

    try:
        asyncio.run(ping())
    except Exception as error:  # any failure to connect, told in one line
        reason = f"no answer within {timeout:g} s" if isinstance(error, TimeoutError) else _first_line(error)
        password = make_url(url).password
        if password:
            reason = reason.replace(str(password), "***")
        typer.echo(
            f"error: cannot reach the database at {database_host(url)} (KANDEV_DATABASE_URL): {reason}", err=True
        )
        raise typer.Exit(2) from None


def require_reachable_redis(url: str, source: str) -> None:
    """PING `url` once; unreachable is one line naming its host and where the URL came from."""
    import redis

    client = sync_redis(url, socket_timeout=5.0)
    try:
        client.ping()
    except redis.RedisError as error:
        kwargs = client.connection_pool.connection_kwargs
        where = kwargs.get("path") or f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"
        typer.echo(f"error: cannot reach Redis at {where} ({source}): {_first_line(error)}", err=True)
        raise typer.Exit(2) from None
    finally:
        client.close()


def require_services(settings: Settings) -> None:
    """The configured database and Redis answer, or one line says which does not."""
    require_database(settings)
    if settings.redis_url:
        require_reachable_redis(settings.redis_url, "KANDEV_REDIS_URL")
