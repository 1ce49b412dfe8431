"""The `kandev` command: serve, worker, scheduler, db upgrade."""

from __future__ import annotations

import logging
import os
import signal
import sys

import typer

from kandev.config import Settings
from kandev.data_dir import prepare_data_dir, prepare_work_dir

app = typer.Typer(
    help="Kandev orchestrates AI coding agents as tasks. Settings come from KANDEV_* environment variables.",
    no_args_is_help=True,
    add_completion=False,
)
db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True)
app.add_typer(db_app, name="db")
token_app = typer.Typer(help="Personal access tokens (required by /graphql when KANDEV_AUTH=on).", no_args_is_help=True)
app.add_typer(token_app, name="token")

log = logging.getLogger("kandev")


def _setup_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


@app.command()
def serve(
    host: str = typer.Option(None, help="Bind address (default KANDEV_HOST, 127.0.0.1)."),
    port: int = typer.Option(None, help="Port (default KANDEV_PORT, 8420)."),
) -> None:
    """Run the API server. With no KANDEV_DATABASE_URL / KANDEV_REDIS_URL it runs everything embedded:
    SQLite in KANDEV_DATA_DIR, a Redis-protocol server, one worker and the scheduler."""
    import uvicorn

    from kandev.app import create_app
    from kandev.embedded import start_embedded_redis
    from kandev.migrations import upgrade_to_head
    from kandev.supervisor import ChildProcesses

    _setup_logging()
    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = Settings(**overrides)
    _prepare_dirs(settings)
    if settings.agent_user and settings.embedded_redis:
        # RQ jobs are code the worker runs: a Redis any local process can reach would undo the confinement.
        typer.echo(
            "error: KANDEV_AGENT_USER needs KANDEV_REDIS_URL (a password-protected Redis): "
            "the embedded Redis accepts any local connection, the agent user's too",
            err=True,
        )
        raise typer.Exit(2)
    if settings.auth == "on" and not settings.agent_user:
        log.warning(
            "KANDEV_AUTH=on without KANDEV_AGENT_USER: agents run with this server's rights and can read its files"
        )
    _ensure_web_client()
    if settings.embedded_database:
        log.info("embedded database: %s", settings.resolved_database_url())
        upgrade_to_head(settings.resolved_database_url())

    redis_server = None
    children = ChildProcesses()
    try:
        if settings.embedded_redis:
            redis_server = start_embedded_redis()
            settings.redis_url = redis_server.url
            log.info("embedded Redis-protocol server at %s", redis_server.url)
        if settings.embedded_redis or settings.embedded_database:
            env = {**os.environ, "KANDEV_REDIS_URL": settings.redis_url or ""}
            env["KANDEV_DATA_DIR"] = str(settings.data_path)
            # Agents the worker launches must reach this server's MCP endpoint, on its real port.
            env["KANDEV_PUBLIC_URL"] = settings.resolved_public_url()
            for role in ("worker", "scheduler"):
                children.start(role, [sys.executable, "-m", "kandev.cli", role], env=env)
        # uvicorn restores these after its graceful shutdown and re-raises the signal it got; a
        # handler (instead of the default, which would kill us) lets the cleanup below run.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: None)
        uvicorn.Server(
            uvicorn.Config(create_app(settings), host=settings.host, port=settings.port, log_level="info")
        ).run()
    finally:
        children.stop_all()
        if redis_server is not None:
            redis_server.stop()


def _ensure_web_client() -> None:
    """In a source checkout without `frontend/dist`, build the web client with npm (if there is one);
    when that fails the server still starts, serving the API only."""
    import shutil
    import subprocess

    from kandev.app import FRONTEND_DIST

    source = FRONTEND_DIST.parent
    if (FRONTEND_DIST / "index.html").exists() or not (source / "package.json").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        log.warning("the web client is not built and npm is not on PATH: serving the API only")
        return
    log.info("the web client is not built: building it now (npm install + npm run build in %s)", source)
    steps: list[list[str]] = []
    if not (source / "node_modules").is_dir():
        lock = (source / "package-lock.json").exists()
        steps.append([npm, "ci" if lock else "install", "--no-audit", "--no-fund"])
    steps.append([npm, "run", "build"])
    for step in steps:
        try:
            done = subprocess.run(step, cwd=source, capture_output=True, text=True, timeout=600, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            log.warning("building the web client failed (%s): serving the API only", type(error).__name__)
            return
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
            log.warning(
                "building the web client failed (`%s` exited %s): serving the API only\n%s",
                " ".join(step[1:]),
                done.returncode,
                "\n".join(tail),
            )
            return
    log.info("web client built into %s", FRONTEND_DIST)


@app.command()
def worker(burst: bool = typer.Option(False, help="Exit once the queues are empty.")) -> None:
    """Run an RQ worker for agent turns and background jobs (needs KANDEV_REDIS_URL)."""
    from kandev.jobs.worker import run_worker

    _setup_logging()
    settings = _require_redis(Settings())
    _prepare_dirs(settings)
    run_worker(settings, burst=burst)


@app.command()
def scheduler() -> None:
    """Run the scheduler loop: periodic recovery (reap dead turns, re-enqueue queued prompts); needs
    KANDEV_REDIS_URL."""
    from kandev.jobs.scheduler import run_scheduler

    _setup_logging()
    settings = _require_redis(Settings())
    prepare_data_dir(settings)
    run_scheduler(settings)


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Migrate the database (KANDEV_DATABASE_URL, or the embedded SQLite file) to the newest schema."""
    from kandev.migrations import upgrade_to_head

    settings = Settings()
    prepare_data_dir(settings)
    upgrade_to_head(settings.resolved_database_url())
    typer.echo("database is at the newest revision")


@token_app.command("create")
def token_create(
    name: str = typer.Option(..., "--name", help="What the token is for."),
    user: str = typer.Option("local", "--user", help="Login of the user the token acts as (created if new)."),
) -> None:
    """Create a personal access token and print it once; only its hash is stored."""
    import asyncio

    from kandev.db import Database
    from kandev.domain.access_tokens import create_token
    from kandev.domain.errors import DomainError
    from kandev.migrations import upgrade_to_head

    settings = Settings()
    if settings.embedded_database:
        prepare_data_dir(settings)
        upgrade_to_head(settings.resolved_database_url())

    async def create() -> str:
        db = Database(settings.resolved_database_url(), pooled=False)
        try:
            return (await create_token(db, name=name, login=user)).token
        finally:
            await db.dispose()

    try:
        typer.echo(asyncio.run(create()))
    except DomainError as error:
        typer.echo(f"error: {error.message}", err=True)
        raise typer.Exit(2) from None


def _prepare_dirs(settings: Settings) -> None:
    """Data and work dirs with their modes, and a usable KANDEV_AGENT_USER, before anything runs."""
    from kandev.runtime.confinement import AgentUserError, resolve_agent_user

    try:
        resolve_agent_user(settings.agent_user)
    except AgentUserError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    prepare_data_dir(settings)
    prepare_work_dir(settings)


def _require_redis(settings: Settings) -> Settings:
    if not settings.redis_url:
        typer.echo("KANDEV_REDIS_URL is not set", err=True)
        raise typer.Exit(2)
    return settings


def main() -> None:
    app()


if __name__ == "__main__":
    main()
