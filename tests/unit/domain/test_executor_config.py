"""An executor profile's settings are checked where they are saved: each rule names its field and never echoes
the value; the defaults are the safe choice; a box kind always needs its own worker capability."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev.domain.errors import ValidationError
from kandev.domain.workspace.executor_config import BoxConfig, check_config, read_config, required_capabilities
from kandev.models.enums import ExecutorKind
from kandev.platform.settings import Settings

DOCKER, SANDBOX = ExecutorKind.DOCKER, ExecutorKind.SANDBOX


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    (tmp_path / "src").mkdir()
    return Settings(data_dir=tmp_path / "data", source_roots=str(tmp_path / "src"))


def test_a_docker_profile_defaults_to_no_network_no_pull_and_needs_the_docker_capability(settings):
    config = check_config(settings, DOCKER, {"image": "debian:bookworm"})
    assert config.network == "NONE" and config.pull_policy == "NEVER" and config.user == ""
    assert config.capabilities == ("docker",)
    assert read_config("docker", config.stored()) == config


def test_a_profile_lists_more_capabilities_beside_its_kinds_own(settings):
    config = check_config(settings, SANDBOX, {"capabilities": ["gpu"]})
    assert config.capabilities == ("gpu", "sandbox")
    assert required_capabilities("sandbox", config.stored()) == ("gpu", "sandbox")
    assert required_capabilities("worktree", {}) == ()


@pytest.mark.parametrize(
    ("kind", "given", "field"),
    [
        (DOCKER, {}, "image"),
        (DOCKER, {"image": "Bad Image!"}, "image"),
        (DOCKER, {"image": "x:1", "pull_policy": "ALWAYS"}, "pull_policy"),
        (DOCKER, {"image": "x:1", "network": "host"}, "network"),
        (DOCKER, {"image": "x:1", "network": "container:abc"}, "network"),
        (SANDBOX, {"network": "bridge"}, "network"),
        (DOCKER, {"image": "x:1", "user": "root"}, "user"),
        (DOCKER, {"image": "x:1", "memory_mb": 4}, "memory_mb"),
        (DOCKER, {"image": "x:1", "pids": True}, "pids"),
        (DOCKER, {"image": "x:1", "cpus": 0}, "cpus"),
        (DOCKER, {"image": "x:1", "env": {"KANDEV_SECRET_KEY": "x"}}, "env"),
        (DOCKER, {"image": "x:1", "capabilities": ["GPU!"]}, "capabilities"),
        (DOCKER, {"image": "x:1", "prepare_script": "x" * (65 * 1024)}, "prepare_script"),
        (SANDBOX, {"image": "x:1"}, "image"),
        (ExecutorKind.WORKTREE, {"memory_mb": 64}, "memory_mb"),
    ],
)
def test_a_setting_that_breaks_a_rule_is_refused_naming_its_field(settings, kind, given, field):
    with pytest.raises(ValidationError) as refused:
        check_config(settings, kind, given)
    assert refused.value.field == field
    assert "Bad Image!" not in refused.value.message and "KANDEV_SECRET_KEY" not in refused.value.message


def test_mounts_come_only_from_the_source_roots_and_never_over_the_boxs_own_folders(settings, tmp_path):
    source = tmp_path / "src" / "data-set"
    source.mkdir()
    config = check_config(settings, DOCKER, {"image": "x:1", "mounts": [{"source": str(source), "target": "/data"}]})
    assert config.mounts[0].source == str(source) and config.mounts[0].read_only
    for mount, field in (
        ({"source": str(tmp_path / "data"), "target": "/d"}, "mounts.0.source"),
        ({"source": "/etc", "target": "/d"}, "mounts.0.source"),
        ({"source": str(source), "target": "/workspace"}, "mounts.0"),
        ({"source": str(source), "target": "/run/kandev/x"}, "mounts.0"),
        ({"source": str(source), "target": "relative"}, "mounts.0.target"),
    ):
        with pytest.raises(ValidationError) as refused:
            check_config(settings, DOCKER, {"image": "x:1", "mounts": [mount]})
        assert refused.value.field == field, mount


def test_a_stored_config_reads_back_typed_with_unknown_keys_ignored():
    config = read_config("docker", {"image": "x:1", "memory_mb": 64, "from_a_later_version": 1})
    assert config == BoxConfig(image="x:1", memory_mb=64, capabilities=("docker",))


def test_a_stored_sandbox_config_passes_its_own_check_again(settings):
    stored = check_config(settings, SANDBOX, {"memory_mb": 512}).stored()
    assert check_config(settings, SANDBOX, {**stored, "memory_mb": 768}).memory_mb == 768
