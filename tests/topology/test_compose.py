"""compose.yaml documents the production topology: no image can be pulled here, so its kandev services,
commands and settings are checked against the processes the topology test really runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy.engine import make_url

from tests.topology.topology import planned_topology

COMPOSE = Path(__file__).resolve().parents[2] / "compose.yaml"
# Settings only a test on one machine needs (fast leases and ticks, a data dir per process).
TEST_ONLY = {"KANDEV_DATA_DIR", "KANDEV_TURN_LEASE_SECONDS", "KANDEV_SCHEDULER_INTERVAL_SECONDS", "KANDEV_SOURCE_ROOTS"}


def compose_services() -> dict[str, dict[str, Any]]:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def kandev_services() -> dict[str, dict[str, Any]]:
    return {name: s for name, s in compose_services().items() if s.get("image") == "kandev:local"}


def by_command(services: dict[str, dict[str, Any]], command: str) -> dict[str, dict[str, Any]]:
    return {name: s for name, s in services.items() if s["command"][0] == command}


def test_compose_runs_each_kandev_process_of_the_topology_test_with_its_settings(tmp_path: Path):
    topology = planned_topology("postgresql+asyncpg://u:p@db/kandev", "redis://redis:6379/0", tmp_path)
    services = kandev_services()
    wanted = {"serve": 2, "worker": 2, "scheduler": 1}
    for role in topology.roles.values():
        assert role.command in wanted, role.command
        matching = by_command(services, role.command)
        assert len(matching) >= wanted[role.command], (role.command, sorted(matching))
        settings = {k for k in role.env if k.startswith("KANDEV_")} - TEST_ONLY
        for name, service in matching.items():
            missing = settings - set(service["environment"])
            assert not missing, f"{name} lacks {sorted(missing)} that the topology's {role.name} has"
            assert service["environment"]["KANDEV_AUTH"] == role.env["KANDEV_AUTH"] == "on"


def test_compose_workers_have_distinct_names_and_share_the_working_trees():
    workers = by_command(kandev_services(), "worker")
    names = [w["environment"]["KANDEV_WORKER_NAME"] for w in workers.values()]
    assert len(set(names)) == len(names) == 2
    assert all(w["environment"].get("KANDEV_AGENT_UIDS") for w in workers.values())
    work_dir = {w["environment"]["KANDEV_WORK_DIR"] for w in workers.values()}
    assert len(work_dir) == 1 and all(f"work:{next(iter(work_dir))}" in w["volumes"] for w in workers.values())


def test_compose_points_every_kandev_service_at_its_postgres_and_redis_after_the_migration():
    services = compose_services()
    assert {"postgres", "redis", "migrate"} <= set(services)
    assert services["migrate"]["command"] == ["db", "upgrade"]
    for name, service in kandev_services().items():
        env = service["environment"]
        database = make_url(env["KANDEV_DATABASE_URL"].replace("${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}", "x"))
        assert (database.drivername, database.host) == ("postgresql+asyncpg", "postgres"), name
        assert env["KANDEV_REDIS_URL"].split("@", 1)[1].startswith("redis:6379/"), name
        assert env["KANDEV_ALLOWED_HOSTS"] and env["KANDEV_PUBLIC_URL"].startswith("https://"), name
        if name != "migrate":
            assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}, name


def test_the_options_compose_passes_exist_in_the_cli():
    for name, service in kandev_services().items():
        options = [a for a in service["command"] if a.startswith("--")]
        if not options:
            continue
        help_text = subprocess.run(
            [sys.executable, "-m", "kandev.cli", *service["command"][:1], "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        assert all(option in help_text for option in options), (name, options)
