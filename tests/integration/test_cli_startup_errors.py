"""What a person sees when `kandev` cannot start: one line naming the setting (exit 2), never a traceback."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.support import cli_processes, databases
from tests.support.server import free_port

PASSWORD = "s3cret-pw-never-shown"


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    return env | {"KANDEV_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "100", **settings}


def kandev(tmp_path: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """`kandev ARGS` forked from the CLI zygote (tests/support/cli_processes.py): the same command, without
    paying its imports for each of this file's many cases."""
    return cli_processes.run(args, _env(tmp_path, **settings), timeout=120)


def started_afresh(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m kandev.cli ARGS` as a person starts it: a new interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "kandev.cli", *args], env=_env(tmp_path), capture_output=True, text=True, timeout=120
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr and PASSWORD not in done.stderr + done.stdout
    return lines[0]


@pytest.mark.parametrize(("value", "words"), [("abc", "valid integer"), ("70000", "65535"), ("0", "1")])
def test_a_bad_kandev_port_is_one_line_naming_the_setting(tmp_path: Path, value: str, words: str):
    line = one_error_line(kandev(tmp_path, "serve", KANDEV_PORT=value))
    assert "KANDEV_PORT" in line and words in line and value in line
    assert not (tmp_path / "data").exists(), "nothing may start before the refusal"


@pytest.mark.parametrize("url", ["localhost:6379", f"http://:{PASSWORD}@localhost:6379", "redis://host:port/0"])
def test_a_malformed_kandev_redis_url_is_one_line_that_never_repeats_the_value(tmp_path: Path, url: str):
    line = one_error_line(kandev(tmp_path, "serve", "--port", str(free_port()), KANDEV_REDIS_URL=url))
    assert "KANDEV_REDIS_URL" in line and "redis://" in line


def test_an_unreachable_redis_names_its_host_and_the_setting(tmp_path: Path):
    port = free_port()
    for command in (["serve", "--port", str(free_port())], ["worker"], ["scheduler"]):
        line = one_error_line(kandev(tmp_path, *command, KANDEV_REDIS_URL=f"redis://:{PASSWORD}@127.0.0.1:{port}/0"))
        assert f"127.0.0.1:{port}" in line and "KANDEV_REDIS_URL" in line


@pytest.mark.parametrize("scheme", ["postgres", "postgresql", "postgresql+asyncpg"])
def test_an_unreachable_database_names_its_host_and_the_setting_whichever_postgres_scheme(tmp_path: Path, scheme: str):
    port = free_port()
    url = f"{scheme}://kandev:{PASSWORD}@127.0.0.1:{port}/kandev"
    for command in (["db", "upgrade"], ["token", "list"], ["serve", "--port", str(free_port())]):
        line = one_error_line(kandev(tmp_path, *command, KANDEV_DATABASE_URL=url))
        # The scheme was accepted: the failure is the connection, not the driver.
        assert line.startswith(f"error: cannot reach the database at 127.0.0.1:{port} (KANDEV_DATABASE_URL)"), line


@pytest.mark.parametrize("scheme", ["mysql", "postgresql+psycopg2", "sqlite+pysqlite"])
def test_an_unsupported_database_driver_is_refused_with_the_url_to_write(tmp_path: Path, scheme: str):
    line = one_error_line(kandev(tmp_path, "db", "upgrade", KANDEV_DATABASE_URL=f"{scheme}://u:{PASSWORD}@h/db"))
    assert "KANDEV_DATABASE_URL" in line and repr(scheme) in line and "postgresql+asyncpg://" in line


def test_a_port_in_use_is_refused_before_anything_starts_with_a_port_hint(tmp_path: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_error_line(kandev(tmp_path, "serve", KANDEV_PORT=str(port)))
    assert f"127.0.0.1:{port} is already in use" in line and "KANDEV_PORT" in line
    hint = re.search(r"--port (\d+)", line)
    assert hint is not None and int(hint.group(1)) != port
    assert not (tmp_path / "data").exists(), "nothing may start before the refusal"


def test_a_pinned_embedded_redis_port_in_use_is_refused_naming_its_setting(tmp_path: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_error_line(
            kandev(tmp_path, "serve", "--port", str(free_port()), KANDEV_EMBEDDED_REDIS_PORT=str(port))
        )
    assert f"127.0.0.1:{port} is already in use" in line and "KANDEV_EMBEDDED_REDIS_PORT" in line


def test_version_prints_the_installed_version(tmp_path: Path):
    done = started_afresh(tmp_path, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"kandev {version('kandev')}"


def _help_pages(tmp_path: Path, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], str]:
    """Every command's help page, by command path, found by reading the help itself."""
    done = kandev(tmp_path, *path, "--help")
    assert done.returncode == 0, path
    pages = {path: done.stdout}
    if "Commands:" in done.stdout:
        for name in re.findall(r"^  (\w[\w-]*)  ", done.stdout.split("Commands:", 1)[1], re.M):
            pages |= _help_pages(tmp_path, (*path, name))
    return pages


def test_no_help_page_shows_type_labels_and_values_are_named_by_their_metavar(tmp_path: Path):
    pages = _help_pages(tmp_path)
    assert {("serve",), ("dashboard",), ("user", "create"), ("token", "revoke")} <= set(pages)
    for path, page in pages.items():
        assert not re.search(r"<(str|bool|int|float|path)>", page), (path, page)
    assert "--port PORT" in pages[("serve",)] and "--host HOST" in pages[("serve",)]
    assert re.search(r"^  LOGIN  ", pages[("user", "create")], re.M)
    assert "--user LOGIN" in pages[("token", "create")]
    assert "--version" in pages[()]


@pytest.mark.postgres
@pytest.mark.skipif(
    databases.postgres_server_url() is None,
    reason="KANDEV_TEST_POSTGRES_URL is not set: no PostgreSQL server to create the test database on",
)
@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_a_postgres_url_as_providers_print_it_migrates_and_serves_a_real_database(tmp_path: Path, scheme: str):
    server = databases.postgres_server_url()
    assert server is not None
    url = databases.run(databases.create_postgres_database(server))
    try:
        plain = make_url(url).set(drivername=scheme).render_as_string(hide_password=False) + "?sslmode=disable"
        for command in (["db", "upgrade"], ["user", "create", "provider-url"]):
            done = kandev(tmp_path, *command, KANDEV_DATABASE_URL=plain)
            assert done.returncode == 0, done.stderr
        done = kandev(tmp_path, "token", "create", "--name", "t", "--user", "provider-url", KANDEV_DATABASE_URL=plain)
        assert done.returncode == 0 and done.stdout.startswith("kdv_"), done.stderr
    finally:
        databases.run(databases.drop_postgres_database(server, url))
