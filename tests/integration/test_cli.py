"""`kandev user` and `kandev token` against a fresh embedded data dir, through typer's CliRunner."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from kandev.cli import app
from kandev.domain.access.tokens import principal_for_token
from kandev.domain.context import Principal
from kandev.models import AccessToken, User
from kandev.platform.database import Database
from kandev.platform.settings import Settings


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Runs `kandev ...` on its own embedded database; returns (exit code, stdout, stderr)."""
    for name in ("KANDEV_DATABASE_URL", "KANDEV_REDIS_URL", "KANDEV_AUTH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KANDEV_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()

    def run(*args: str, auth: str = "off") -> tuple[int, str, str]:
        done = runner.invoke(app, list(args), env={"KANDEV_AUTH": auth})
        return done.exit_code, done.stdout, done.stderr

    return run


def _query(statement):  # noqa: ANN001, ANN202 - a tiny sync bridge for assertions
    async def go():  # noqa: ANN202
        db = Database(Settings().resolved_database_url(), pooled=False)
        try:
            async with db.read() as session:
                return list(await session.execute(statement))
        finally:
            await db.dispose()

    return asyncio.run(go())


def _principal(token: str) -> Principal | None:
    async def go() -> Principal | None:
        db = Database(Settings().resolved_database_url(), pooled=False)
        try:
            return await principal_for_token(db, token)
        finally:
            await db.dispose()

    return asyncio.run(go())


def test_the_help_describes_the_user_and_token_commands(cli):
    code, out, _ = cli("--help")
    assert code == 0 and "user" in out and "token" in out
    code, out, _ = cli("user", "--help")
    assert code == 0 and "create" in out and "update" in out
    code, out, _ = cli("token", "--help")
    assert code == 0 and all(word in out for word in ("create", "list", "revoke"))
    code, out, _ = cli("user", "update", "--help")
    assert "--admin" in out and "--no-admin" in out


def test_users_are_created_once_and_their_admin_flag_is_set_and_withdrawn(cli):
    assert cli("user", "create", "alice")[0] == 0
    assert cli("user", "create", "root", "--admin")[0] == 0
    code, _, err = cli("user", "create", "alice")
    assert code == 2 and "already exists" in err
    assert _query(select(User.login, User.admin).where(User.login.in_(["alice", "root"])).order_by(User.login)) == [
        ("alice", False),
        ("root", True),
    ]
    assert cli("user", "update", "alice", "--admin")[0] == 0
    assert cli("user", "update", "root", "--no-admin")[0] == 0
    assert _query(select(User.login, User.admin).where(User.login.in_(["alice", "root"])).order_by(User.login)) == [
        ("alice", True),
        ("root", False),
    ]
    code, _, err = cli("user", "update", "nobody", "--admin")
    assert code == 2 and "nobody" in err
    code, _, err = cli("user", "create", "no spaces")
    assert code == 2 and "login" in err


def test_a_token_for_an_unknown_user_is_refused_and_creates_no_user(cli):
    code, out, err = cli("token", "create", "--name", "ci", "--user", "mallory")
    assert code == 2 and out == "" and "mallory" in err and "kandev user create" in err
    assert _query(select(User.id).where(User.login == "mallory")) == []
    assert _query(select(AccessToken.id)) == []


def test_with_auth_on_a_token_needs_a_user_and_with_auth_off_it_is_locals(cli):
    code, out, err = cli("token", "create", "--name", "ci", auth="on")
    assert code == 2 and out == "" and "--user" in err
    assert _query(select(AccessToken.id)) == []
    code, out, _ = cli("token", "create", "--name", "laptop")
    assert code == 0
    principal = _principal(out.strip())
    assert principal is not None and principal.login == "local" and principal.admin is True
    cli("user", "create", "alice")
    code, out, _ = cli("token", "create", "--name", "ci", "--user", "alice", auth="on")
    principal = _principal(out.strip())
    assert code == 0 and principal is not None and principal.login == "alice" and principal.admin is False


def test_the_list_shows_each_tokens_user_and_dates_but_never_a_secret(cli):
    cli("user", "create", "alice")
    tokens = [
        cli("token", "create", "--name", name, "--user", user)[1].strip()
        for name, user in [("laptop", "local"), ("ci", "alice")]
    ]
    code, out, _ = cli("token", "list")
    hashes = [row[0] for row in _query(select(AccessToken.token_hash))]
    assert code == 0 and len(hashes) == 2
    assert not any(secret in out for secret in [*tokens, *hashes, "kdv_"])
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert rows[0] == ["ID", "NAME", "USER", "CREATED", "LAST USED", "REVOKED"]
    assert sorted((r[1], r[2]) for r in rows[1:]) == [("ci", "alice"), ("laptop", "local")]
    code, out, _ = cli("token", "list", "--user", "alice")
    assert [line.split("\t")[1] for line in out.strip().splitlines()[1:]] == ["ci"]


def test_a_revoked_token_stops_working(cli):
    token = cli("token", "create", "--name", "laptop")[1].strip()
    assert _principal(token) is not None
    token_id = cli("token", "list")[1].strip().splitlines()[1].split("\t")[0]
    code, out, _ = cli("token", "revoke", token_id)
    assert code == 0 and token not in out
    assert _principal(token) is None
    revoked = cli("token", "list")[1].strip().splitlines()[1].split("\t")
    assert revoked[0] == token_id and revoked[5] != "-"
    code, _, err = cli("token", "revoke", "no-such-id")
    assert code == 2 and "not found" in err
