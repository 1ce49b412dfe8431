"""Who agents run as and whether that user can reach what it needs: permission bits, not guesses."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev.platform.agent_host import (
    AgentUser,
    AgentUserError,
    resolve_agent_user,
    scripted_command,
    scripted_requirements,
)
from kandev.runtime.base import AgentLaunchError
from kandev.runtime.confinement import blocked_path, check_can_run
from kandev.runtime.process import INHERITED_ENV, minimal_env

# Nobody's ids, owning none of the test's files: only the "other" permission bits apply to it.
STRANGER = AgentUser("stranger", 65534, 65534, (), "/nonexistent", "/usr/sbin/nologin")


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A world-traversable folder (pytest's own temp dirs are private to their user)."""
    folder = Path(tempfile.mkdtemp(prefix="kandev-confinement-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_world_readable_path_is_reachable(open_dir: Path) -> None:
    target = open_dir / "agent.py"
    target.write_text("")
    target.chmod(0o644)
    assert blocked_path(target, STRANGER, 4) is None


def test_a_private_folder_on_the_way_is_named(open_dir: Path) -> None:
    private = open_dir / "private"
    (private / "inner").mkdir(parents=True)
    private.chmod(0o700)
    target = private / "inner" / "agent.py"
    target.write_text("")
    assert blocked_path(target, STRANGER, 4) == private


def test_a_file_without_the_needed_bits_is_named_itself(open_dir: Path) -> None:
    target = open_dir / "agent"
    target.write_text("")
    target.chmod(0o644)
    assert blocked_path(target, STRANGER, 4) is None
    assert blocked_path(target, STRANGER, 1) == target


def test_a_symlink_into_a_private_folder_is_blocked_at_its_target(open_dir: Path) -> None:
    private = open_dir / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    (private / "python").write_text("")
    (private / "python").chmod(0o755)
    link = open_dir / "python"
    link.symlink_to(private / "python")
    assert blocked_path(link, STRANGER, 1) == private


def test_owner_and_group_bits_apply_to_the_owner_and_the_group(open_dir: Path) -> None:
    target = open_dir / "own"
    target.write_text("")
    info = target.stat()
    target.chmod(0o640)
    owner = AgentUser("owner", info.st_uid, 4242, (), "/", "/bin/sh")
    member = AgentUser("member", 4242, 4243, (info.st_gid,), "/", "/bin/sh")
    assert blocked_path(target, owner, 4) is None
    assert blocked_path(target, member, 4) is None
    assert blocked_path(target, member, 2) == target
    assert blocked_path(target, STRANGER, 4) == target


def test_check_can_run_names_the_path_to_fix(open_dir: Path) -> None:
    private = open_dir / "venv"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    python = private / "python"
    python.write_text("")
    python.chmod(0o755)
    workdir = open_dir / "work"
    workdir.mkdir(mode=0o777)
    workdir.chmod(0o777)
    with pytest.raises(AgentLaunchError) as raised:
        check_can_run(STRANGER, [str(python), "-m", "kandev.runtime.scripted"], str(workdir), [])
    assert str(raised.value).startswith(f"agent user 'stranger' cannot reach {python} (the agent's command)")
    assert f"the permissions of {private} keep it out" in str(raised.value)


def test_a_working_directory_the_agent_user_cannot_write_is_refused(open_dir: Path) -> None:
    with pytest.raises(AgentLaunchError, match="its working directory"):
        check_can_run(STRANGER, ["/bin/sh"], str(open_dir), [])


def test_scripted_requirements_cover_kandev_the_stdlib_and_the_mcp_client_it_imports() -> None:
    import mcp

    import kandev

    required = scripted_requirements()
    assert str(Path(kandev.__file__).resolve().parent) in required
    assert any(Path(mcp.__file__).resolve().is_relative_to(Path(p).resolve()) for p in required)
    assert os.path.dirname(os.__file__) in required


def test_the_scripted_agent_starts_without_site_and_still_reaches_the_packages_its_tools_use() -> None:
    command = scripted_command()
    assert command[1:3] == ["-I", "-S"]
    probe = [*command[:4], "import sys; sys.path.extend(sys.argv[2:]); import mcp.client; print('ok')", *command[5:]]
    assert subprocess.run(probe, capture_output=True, text=True, timeout=60).stdout.strip() == "ok"


def test_no_agent_user_means_no_switch() -> None:
    assert resolve_agent_user(None) is None
    assert resolve_agent_user("") is None


def test_an_unknown_agent_user_is_a_clear_error() -> None:
    with pytest.raises(AgentUserError, match="names 'no-such-kandev-user', which is not a user on this machine"):
        resolve_agent_user("no-such-kandev-user", euid=0)


def test_an_agent_user_needs_a_root_server() -> None:
    with pytest.raises(AgentUserError, match="needs the server and its workers to run as root"):
        resolve_agent_user("nobody", euid=1000)


def test_root_is_refused_as_the_agent_user() -> None:
    with pytest.raises(AgentUserError, match="which is root"):
        resolve_agent_user("root", euid=0)


def test_the_agent_user_resolves_with_its_ids_and_home() -> None:
    user = resolve_agent_user("nobody", euid=0)
    assert user is not None
    assert (user.name, user.uid) == ("nobody", 65534)
    assert user.env() == {"HOME": user.home, "USER": "nobody", "LOGNAME": "nobody", "SHELL": "/bin/sh"}


def test_the_agent_env_holds_only_the_allow_list_the_user_identity_and_the_profile_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KANDEV_SECRET_KEY", "k" * 32)
    monkeypatch.setenv("KANDEV_DATABASE_URL", "postgresql://kandev:pw@db/kandev")
    monkeypatch.setenv("DATABASE_URL", "postgresql://kandev:pw@db/kandev")
    monkeypatch.setenv("HOME", "/root")
    env = minimal_env({"API_KEY": "from-the-profile"}, STRANGER)
    assert set(env) <= {*INHERITED_ENV, "API_KEY"}
    assert env["API_KEY"] == "from-the-profile"
    assert (env["HOME"], env["USER"], env["LOGNAME"]) == ("/nonexistent", "stranger", "stranger")
    assert not [v for v in env.values() if "pw@db" in v or "k" * 32 in v]
