"""The `kandev` command: serve, worker, scheduler, dashboard, db upgrade, user and token management, export."""

from __future__ import annotations

import asyncio
import logging
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from kandev.platform.agent_host import AgentUserError, check_uid_range, resolve_agent_user
from kandev.platform.data_dir import (
    EMBEDDED_REDIS_PORT_FILE,
    prepare_data_dir,
    prepare_work_dir,
    read_embedded_redis_port,
)
from kandev.platform.database import Database
from kandev.platform.embedded_default import start_embedded_default
from kandev.platform.heap import settle_heap
from kandev.platform.log_redaction import install_log_redaction
from kandev.platform.preflight import (
    load_settings,
    require_database,
    require_port,
    require_reachable_redis,
    require_services,
)
from kandev.platform.settings import Settings

if TYPE_CHECKING:
    from kandev.domain.services import Services
    from kandev.platform.session_access import PersonChange

T = TypeVar("T")

app = typer.Typer(
    help="Kandev orchestrates AI coding agents as tasks. Settings come from KANDEV_* environment variables.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(db_app, name="db")
token_app = typer.Typer(
    help="Personal access tokens: with KANDEV_AUTH=on every /graphql, /mcp and REST call needs one; a token "
    "acts as its user.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(token_app, name="token", short_help="Create, list and revoke personal access tokens.")
user_app = typer.Typer(
    help="Users: with KANDEV_AUTH=on each sees only their own workspaces; admins decide what the machine runs.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(user_app, name="user", short_help="Create users; grant or withdraw admin.")
export_app = typer.Typer(
    help="Export a workspace's configuration as files to read, diff or check into a repository.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(export_app, name="export", short_help="Export a workspace's automations as YAML.")

log = logging.getLogger("kandev")


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"kandev {version('kandev')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="Print the version and exit."
    ),
) -> None:
    pass


def _setup_logging() -> None:

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    install_log_redaction()


@app.command()
def serve(
    host: str = typer.Option(None, metavar="HOST", help="Bind address (default KANDEV_HOST, 127.0.0.1)."),
    port: int = typer.Option(None, metavar="PORT", help="Port (default KANDEV_PORT, 8420)."),
) -> None:
    """Run the API server. With no KANDEV_DATABASE_URL / KANDEV_REDIS_URL it runs everything embedded:
    SQLite in KANDEV_DATA_DIR, a Redis-protocol server, KANDEV_WORKERS (default 4) `kandev worker`
    processes and the scheduler, restarting any of them that dies; /healthz answers 503 while no worker
    is alive."""
    import uvicorn

    from kandev.app import GRACEFUL_SHUTDOWN_SECONDS, create_app  # lazy: start-up: the app (1.5 s), for serve
    from kandev.edge.http_guard import is_loopback  # lazy: start-up: Starlette, for `serve` alone
    from kandev.jobs.recovery import recover_sync  # lazy: start-up: with the app, for `serve` alone
    from kandev.migrations import upgrade_to_head

    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = load_settings(**overrides)
    if settings.auth == "off" and not is_loopback(settings.host):
        # With auth off every caller is the local user: only this machine may reach the server.
        typer.echo(
            f"kandev serve: refusing to listen on {settings.host} with auth off; "
            "bind to 127.0.0.1, or set KANDEV_AUTH=on to serve other machines",
            err=True,
        )
        raise typer.Exit(2)
    _require_agent_user(settings)
    require_port(settings.host, settings.port, "KANDEV_PORT", "--port")
    if settings.embedded_redis and settings.embedded_redis_port:
        require_port("127.0.0.1", settings.embedded_redis_port, "KANDEV_EMBEDDED_REDIS_PORT", None)
    require_services(settings)
    _setup_logging()
    if not is_loopback(settings.host) and not (settings.public_url or settings.allowed_hosts):
        log.warning(
            "listening on %s, but requests naming any host other than localhost get 421: "
            "set KANDEV_PUBLIC_URL or KANDEV_ALLOWED_HOSTS to the names clients use",
            settings.host,
        )
    _prepare_dirs(settings)
    if settings.confines_agents and settings.embedded_redis:
        # RQ jobs are code the worker runs: a Redis any local process can reach would undo the confinement.
        setting = "KANDEV_AGENT_UIDS" if settings.agent_uids else "KANDEV_AGENT_USER"
        typer.echo(
            f"error: {setting} needs KANDEV_REDIS_URL (a password-protected Redis): "
            "the embedded Redis accepts any local connection, the agents' too",
            err=True,
        )
        raise typer.Exit(2)
    if settings.auth == "on" and not settings.confines_agents:
        log.warning(
            "KANDEV_AUTH=on without KANDEV_AGENT_UIDS: agents run with this server's rights and can read its files"
        )
    elif settings.auth == "on" and settings.agent_user:
        log.warning(
            "KANDEV_AGENT_USER runs every user's agents as one OS user: agents are refused once a second Kandev "
            "user exists; set KANDEV_AGENT_UIDS (e.g. 61000-61999) for a server with several users"
        )
    _ensure_web_client()
    _report_executors()
    if settings.embedded_database:
        log.info("embedded database: %s", settings.resolved_database_url())
        upgrade_to_head(settings.resolved_database_url())

    embedded = None
    try:
        if settings.embedded_redis or settings.embedded_database:
            # Supervised: a child that dies is restarted (with backoff) and /healthz reports it.
            embedded = start_embedded_default(settings, recover_sync)
        # uvicorn restores these after its graceful shutdown and re-raises the signal it got; a
        # handler (instead of the default, which would kill us) lets the cleanup below run.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: None)
        app = create_app(settings, embedded=embedded)
        settle_heap()
        # No per-message deflate: live messages are small, and compressing each one for every subscriber
        # cost more than the rest of sending it.
        config = uvicorn.Config(
            app,
            host=settings.host,
            port=settings.port,
            log_level="info",
            ws_per_message_deflate=False,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
        uvicorn.Server(config).run()
    finally:
        if embedded is not None:
            embedded.stop()


def _ensure_web_client() -> None:
    """In a source checkout without `frontend/dist`, build the web client with npm (if there is one);
    when that fails the server still starts, serving the API only."""
    from kandev.app import FRONTEND_DIST  # lazy: start-up: the whole app, only when building the client

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
    # Built beside dist/ and renamed into place: vite empties its output folder first, and another process (a
    # second `kandev serve`, a test run) may be serving a dist/ built meanwhile.
    staging = Path(tempfile.mkdtemp(prefix=".dist-", dir=source))
    steps.append([npm, "run", "build", "--", "--outDir", str(staging), "--emptyOutDir"])
    try:
        if _run_build_steps(steps, source):
            staging.rename(FRONTEND_DIST)
            log.info("web client built into %s", FRONTEND_DIST)
    except OSError:
        log.info("%s appeared while building the web client: serving that one", FRONTEND_DIST)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _run_build_steps(steps: list[list[str]], source: Path) -> bool:
    for step in steps:
        try:
            done = subprocess.run(step, cwd=source, capture_output=True, text=True, timeout=600, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            log.warning("building the web client failed (%s): serving the API only", type(error).__name__)
            return False
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
            log.warning(
                "building the web client failed (`%s` exited %s): serving the API only\n%s",
                " ".join(step[1:3]),
                done.returncode,
                "\n".join(tail),
            )
            return False
    return True


def _report_executors() -> None:
    """Whether this host can make sandboxes and containers (its workers detect the same, unless told otherwise)."""
    from kandev.jobs.capabilities import host_executors  # lazy: start-up: the executors, for `serve` and workers

    for kind, reason in asyncio.run(host_executors()).items():
        if reason is None:
            log.info("executor %s: boxes can be made on this host", kind)
        else:
            log.warning("executor %s: unavailable on this host: %s", kind, reason)


@app.command(short_help="Run an RQ worker for agent turns and background jobs.")
def worker(
    burst: bool = typer.Option(False, help="Exit once the queues are empty."),
    capabilities: str = typer.Option(
        None,
        metavar="NAMES",
        help="Comma-separated capabilities to advertise, e.g. docker,sandbox,gpu (default KANDEV_WORKER_CAPABILITIES; "
        "unset: detected on this host). Turns whose executor profile needs them come only to workers that have them.",
    ),
) -> None:
    """Run an RQ worker for agent turns and background jobs (needs KANDEV_REDIS_URL)."""
    from kandev.jobs.worker import run_worker  # lazy: start-up: RQ and the jobs, for `worker` alone

    _setup_logging()
    overrides = {} if capabilities is None else {"worker_capabilities": capabilities}
    settings = _require_redis(load_settings(**overrides))
    _prepare_dirs(settings)
    require_services(settings)
    settle_heap()
    run_worker(settings, burst=burst)


@app.command(short_help="Run the scheduler (periodic recovery, automation schedules).")
def scheduler() -> None:
    """Run the scheduler: periodic recovery (reap dead turns, re-enqueue queued prompts, launches, webhook
    deliveries and due task cleanups, which retries failed ones) and the loop that fires automation schedules
    on time; needs KANDEV_REDIS_URL."""
    from kandev.jobs.scheduler import run_scheduler  # lazy: start-up: the scheduler, for itself alone

    _setup_logging()
    settings = _require_redis(load_settings())
    prepare_data_dir(settings)
    require_services(settings)
    run_scheduler(settings)


@app.command(short_help="Inspect jobs, queues and workers with rq-dashboard.")
def dashboard(
    port: int = typer.Option(9181, metavar="PORT", help="Loopback port to serve the dashboard on."),
) -> None:
    """Inspect jobs, queues and workers with rq-dashboard on 127.0.0.1, against KANDEV_REDIS_URL or the
    embedded Redis of a running `kandev serve`. With KANDEV_AUTH=on, sign in with any user name and an admin's
    personal access token as the password."""
    from kandev.edge.dashboard import dashboard_app, serve_dashboard, token_verifier  # lazy: start-up: Flask

    settings = load_settings()
    running = _running_redis(settings)
    if running is None:
        typer.echo(
            f"error: no embedded Redis to inspect: `kandev serve` records its port in "
            f"{settings.data_path / EMBEDDED_REDIS_PORT_FILE} while it runs; start it (same KANDEV_DATA_DIR), or set "
            "KANDEV_REDIS_URL",
            err=True,
        )
        raise typer.Exit(2)
    redis_url, source = running
    require_reachable_redis(redis_url, source)
    require_port("127.0.0.1", port, "--port", "--port")
    verify = None
    if settings.auth == "on":
        require_database(settings)
        verify = token_verifier(settings.resolved_database_url())
    typer.echo(f"kandev dashboard: http://127.0.0.1:{port}/ (Ctrl-C stops it)", err=True)
    try:
        serve_dashboard(dashboard_app(redis_url, verify), port)
    except KeyboardInterrupt:
        pass


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Migrate the database (KANDEV_DATABASE_URL, or the embedded SQLite file) to the newest schema."""
    from kandev.migrations import upgrade_to_head  # lazy: start-up: Alembic, for this command alone

    settings = load_settings()
    require_database(settings)
    prepare_data_dir(settings)
    upgrade_to_head(settings.resolved_database_url())
    typer.echo("database is at the newest revision")


def _run(work: Callable[[Database], Awaitable[T]]) -> T:
    """Run `work` on the database of the command's services (see _run_services)."""
    return _run_services(lambda services: work(services.ctx.db))


def _run_services(work: Callable[[Services], Awaitable[T]]) -> T:
    """Run `work` with the command's services, acting as the system (migrated first when embedded, with the
    `local` user in place); a domain error becomes one line on stderr and exit status 2."""
    import asyncio

    # The domain, Alembic and the services, only for the commands that change users and tokens:
    from kandev.domain.access.users import prepare_users  # lazy: start-up
    from kandev.domain.errors import DomainError, NotFoundError  # lazy: start-up
    from kandev.migrations import upgrade_to_head  # lazy: start-up
    from kandev.wiring import SYSTEM, provide_services  # lazy: start-up

    settings = load_settings()
    require_database(settings)
    if settings.embedded_database:
        prepare_data_dir(settings)
        upgrade_to_head(settings.resolved_database_url())

    async def run() -> T:
        async with provide_services(settings, SYSTEM) as services:
            await prepare_users(services.ctx.db)
            return await work(services)

    try:
        return asyncio.run(run())
    except NotFoundError as error:
        hint = f" (create it with: kandev user create {error.entity_id})" if error.entity == "user" else ""
        typer.echo(f"error: {error.entity} '{error.entity_id}' not found{hint}", err=True)
        raise typer.Exit(2) from None
    except DomainError as error:
        typer.echo(f"error: {error.message}", err=True)
        raise typer.Exit(2) from None


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%SZ") if value else "-"


@user_app.command("create")
def user_create(
    login: str = typer.Argument(..., metavar="LOGIN", help="The new user's login (letters, digits, '.', '_', '-')."),
    admin: bool = typer.Option(False, "--admin", help="Let the user define what the machine runs."),
) -> None:
    """Create a user. Only admins set agent commands, env and kinds, executor and server-wide profiles."""
    from kandev.domain.access.users import create_user  # lazy: start-up: the domain

    user = _run(lambda db: create_user(db, login, admin=admin))
    typer.echo(f"created user {user.login}{' (admin)' if user.admin else ''}")


@user_app.command("update")
def user_update(
    login: str = typer.Argument(..., metavar="LOGIN", help="The user's login."),
    admin: bool = typer.Option(..., "--admin/--no-admin", help="Grant or withdraw admin."),
) -> None:
    """Grant (--admin) or withdraw (--no-admin) admin; open connections of the user follow at once."""
    from kandev.domain.access.users import update_user  # lazy: start-up: the domain

    user, changes = _run(lambda db: update_user(db, login, admin=admin))
    typer.echo(f"user {user.login} is {'an admin' if user.admin else 'not an admin'}")
    _tell_servers(changes)


@user_app.command("remove")
def user_remove(
    login: str = typer.Argument(..., metavar="LOGIN", help="The user's login."),
) -> None:
    """Remove a user: their tokens are revoked and their open connections and agents' sessions refused at once;
    their workspaces stay, and the login is never given to anyone else."""
    from kandev.domain.access.users import remove_user  # lazy: start-up: the domain

    user, changes, sessions = _run(lambda db: remove_user(db, login))
    typer.echo(f"removed user {user.login}")
    _tell_servers(changes, sessions)


@token_app.command("create")
def token_create(
    name: str = typer.Option(..., "--name", metavar="NAME", help="What the token is for."),
    user: str | None = typer.Option(
        None,
        "--user",
        metavar="LOGIN",
        help="Login of the existing user the token acts as (see `kandev user create`). Required with "
        "KANDEV_AUTH=on; `local` by default with auth off.",
    ),
) -> None:
    """Create a personal access token for an existing user and print it once; only its hash is stored."""
    from kandev.domain.access.tokens import create_token, token_owner  # lazy: start-up: the domain

    async def create(db: Database) -> str:
        login = token_owner(user, auth=load_settings().auth)
        return (await create_token(db, name=name, login=login)).token

    typer.echo(_run(create))


@token_app.command("list")
def token_list(
    user: str | None = typer.Option(None, "--user", metavar="LOGIN", help="Only this user's tokens."),
) -> None:
    """List tokens (id, name, user, created, last used, revoked); token values are never shown."""
    from kandev.domain.access.tokens import list_tokens  # lazy: start-up: the domain

    rows = _run(lambda db: list_tokens(db, user))
    typer.echo("ID\tNAME\tUSER\tCREATED\tLAST USED\tREVOKED")
    for row in rows:
        cells = (row.id, row.name, row.login, _when(row.created_at), _when(row.last_used_at), _when(row.revoked_at))
        typer.echo("\t".join(cells))


@token_app.command("revoke")
def token_revoke(
    token_id: str = typer.Argument(..., metavar="TOKEN_ID", help="The token's id, from `kandev token list`."),
) -> None:
    """Revoke a token: every later request presenting it is refused, and what it holds open is closed at once."""
    from kandev.domain.access.tokens import revoke_token, revoked  # lazy: start-up: the domain

    row = _run(lambda db: revoke_token(db, token_id))
    typer.echo(f"revoked token {row.id} ({row.name}, user {row.login})")
    _tell_servers([revoked(row.id)])


@export_app.command("automations")
def export_automations(
    workspace: str = typer.Argument(..., metavar="WORKSPACE", help="The workspace's id, or its name."),
    as_zip: bool = typer.Option(
        False, "--zip", help="A zip of .kandev/automations/<slug>.yml files instead of one YAML document."
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", metavar="PATH", help="Write to PATH instead of standard output."
    ),
) -> None:
    """Print every automation of a workspace as one YAML document, the same bytes as
    GET /api/v1/workspaces/{id}/automations/export (or with --zip, the zip of /export/zip). Profiles,
    workflows and repositories are named, never identified; no secret is written."""

    async def export(services: Services) -> bytes:
        found = await services.workspaces.find(workspace)
        if as_zip:
            return await services.automations.export_zip(found.id)
        return (await services.automations.export_yaml(found.id)).encode()

    if output is None and as_zip and _is_terminal():
        typer.echo("error: a zip is binary: give --output PATH or redirect standard output", err=True)
        raise typer.Exit(2)
    data = _run_services(export)
    if output is not None:
        output.write_bytes(data)
        typer.echo(f"wrote {output}", err=True)
        return
    stdout = typer.get_binary_stream("stdout")
    stdout.write(data)
    stdout.flush()


def _running_redis(settings: Settings) -> tuple[str, str] | None:
    """The Redis the servers use (URL, and where it came from): KANDEV_REDIS_URL, or the embedded Redis of a
    running `kandev serve`; None when neither is there."""
    if settings.redis_url:
        return settings.redis_url, "KANDEV_REDIS_URL"
    port = read_embedded_redis_port(settings.data_path)
    if port is None:
        return None
    return f"redis://127.0.0.1:{port}/0", f"the embedded Redis, from {settings.data_path / EMBEDDED_REDIS_PORT_FILE}"


def _tell_servers(people: list[PersonChange], sessions: list[str] | None = None) -> None:
    """Announce an access change to every running server, which closes or downgrades what it holds open for it
    before this returns. No server running: nobody to tell. Redis unreachable: exit status 1, saying so."""
    import asyncio

    from redis.exceptions import RedisError

    from kandev.platform.session_access import announce_at  # lazy: start-up: the domain

    settings = load_settings()
    running = _running_redis(settings)
    if running is None:
        return
    try:
        asyncio.run(announce_at(running[0], sessions or [], people))
    except (RedisError, OSError) as error:
        if not settings.redis_url:
            return  # the embedded Redis of a server that no longer runs: no connection is open
        typer.echo(
            f"warning: the change is saved, but running servers could not be told ({type(error).__name__}); "
            "they close what it held open within 30 s",
            err=True,
        )
        raise typer.Exit(1) from None


def _is_terminal() -> bool:
    import sys

    return sys.stdout.isatty()


def _require_agent_user(settings: Settings) -> None:

    try:
        if settings.agent_user and settings.agent_uids:
            raise AgentUserError("set KANDEV_AGENT_UIDS or KANDEV_AGENT_USER, not both")
        resolve_agent_user(settings.agent_user)
        if (ids := settings.agent_uid_range) is not None:
            check_uid_range(ids)
    except AgentUserError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None


def _prepare_dirs(settings: Settings) -> None:
    """Data and work dirs with their modes, and a usable KANDEV_AGENT_USER, before anything runs."""
    _require_agent_user(settings)
    prepare_data_dir(settings)
    prepare_work_dir(settings)


def _require_redis(settings: Settings) -> Settings:
    if not settings.redis_url:
        typer.echo("KANDEV_REDIS_URL is not set", err=True)
        raise typer.Exit(2)
    return settings


def _without_type_labels(command: Any) -> Any:
    """Help that names values by their metavar (PORT, LOGIN), never by typer's `<str>`/`<bool>` labels."""
    for param in command.params:
        if param.param_type_name == "argument":  # its metavar is already the row's name
            param.display_type_rich = lambda ctx: None
        elif param.param_type_name == "option" and not param.is_flag:
            label = param.metavar or (param.name or "value").upper()
            param.display_type_rich = lambda ctx, label=label: label
    for child in getattr(command, "commands", {}).values():
        _without_type_labels(child)
    return command


def main() -> None:
    _without_type_labels(typer.main.get_command(app))(prog_name="kandev")


if __name__ == "__main__":
    main()
