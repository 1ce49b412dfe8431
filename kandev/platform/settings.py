"""Settings read from the environment (prefix KANDEV_); every process derives its wiring from these."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from functools import cached_property
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kandev.platform.agent_host import parse_uid_range
from kandev.platform.data_dir import KEY_FILE, PRIVATE_FILE, private_dir
from kandev.platform.database import async_database_url

_REDIS_SCHEMES = ("redis", "rediss", "unix")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KANDEV_", extra="ignore")

    database_url: str | None = Field(
        default=None, description="SQLAlchemy async URL; default: SQLite at <data dir>/kandev.db"
    )
    redis_url: str | None = Field(default=None, description="redis:// URL; default: an embedded Redis-protocol server")
    data_dir: Path = Field(default=Path("~/.kandev"), description="where the embedded state lives")
    host: str = "127.0.0.1"
    port: int = Field(default=8420, ge=1, le=65535)
    public_url: str | None = Field(default=None, description="URL agents use to reach this server")
    secret_key: str | None = Field(default=None, description="server key; default: generated into the data dir")
    auth: Literal["off", "on"] = "off"
    allowed_hosts: str = Field(
        default="", description="comma-separated Host names accepted besides loopback and the public URL's host"
    )
    allowed_origins: str = Field(
        default="", description="comma-separated browser origins accepted besides the server's own"
    )
    max_body_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="the largest request body /graphql and the REST endpoints (webhooks too) take; a larger one "
        "gets 413 before the rest of it is read",
    )
    ws_init_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=600,
        description="how long a GraphQL WebSocket may wait before its connection_init; then it is closed (4408)",
    )
    work_dir: Path | None = Field(
        default=None, description="where agents' working trees live; default: <data dir>-work (outside the data dir)"
    )
    agent_user: str | None = Field(
        default=None,
        description="unprivileged OS user that every agent runs as (root deployments with one Kandev user)",
    )
    agent_uids: str | None = Field(
        default=None,
        description="a range of unused numeric ids, e.g. 61000-61999: each Kandev user's agents run as an OS "
        "identity of their own from it (root deployments; no accounts needed)",
    )
    mcp_npm_source: str | None = Field(
        default=None,
        description="where managed npm MCP server packages are installed from: a registry URL, or a folder of "
        "`npm pack` tarballs; default: npm's own registry setting",
    )
    mcp_registry_url: str | None = Field(
        default=None,
        description="base URL of an MCP Registry-compatible API (GET /v0/servers) whose entries the marketplace "
        "shows beside the curated templates; default: none (no registry metadata is fetched)",
    )
    mcp_registry_timeout_seconds: float = Field(
        default=10.0, gt=0, le=120, description="bound on one MCP Registry fetch, all pages together"
    )
    mcp_registry_min_refresh_seconds: float = Field(
        default=60.0, ge=0, description="the least time between two MCP Registry fetches, however often asked"
    )
    mcp_registry_max_age_seconds: float = Field(
        default=6 * 3600.0, gt=0, description="after how long cached MCP Registry metadata is refetched (else stale)"
    )
    mcp_allowed_hosts: str = Field(
        default="",
        description="comma-separated host names (or addresses) a non-admin's outbound URLs (remote MCP servers, "
        "https/ssh clone remotes) may name although they resolve to this machine or a private network",
    )
    source_roots: str | None = Field(
        default=None,
        description="os.pathsep-separated folders local repositories and folders must lie under; "
        "default: home and temp dir with auth off, none with auth on",
    )
    turn_timeout_seconds: int = Field(default=6 * 3600, description="RQ job timeout of a turn job")
    turn_lease_seconds: float = Field(
        default=30.0, description="a running turn whose worker stops renewing this lease is reaped"
    )
    clarification_timeout_s: float = Field(
        default=600.0, description="how long ask_user_question_kandev waits before the turn pauses"
    )
    worker_name: str | None = Field(
        default=None, description="a stable worker name: sessions it runs are routed to its own queue"
    )
    worker_capabilities: str | None = Field(
        default=None,
        description="comma-separated capabilities this worker advertises (docker, sandbox, gpu, kubernetes...): "
        "turns whose executor profile needs them come only to workers that have them all; unset: what this host "
        "can run is detected (sandbox when bubblewrap makes a box, docker when the Docker daemon answers); empty: none",
    )
    agent_idle_seconds: float = Field(
        default=300.0, description="a worker closes a session's warm agent after this long without a turn"
    )
    warm_agents: int = Field(
        default=8,
        ge=0,
        description="at most this many idle agents stay warm per worker (least recently used closed first)",
    )
    scheduler_interval_seconds: float = 5.0
    schedule_max_sleep_seconds: float = Field(
        default=30.0, gt=0, description="the schedule loop looks for due schedules at least this often"
    )
    test_mode: bool = Field(default=False, description="test-only switches (KANDEV_TEST_CLOCK) are honoured")
    test_clock: str | None = Field(
        default=None,
        description="with test_mode: 'offset,speed[,start]' — now = start + offset + (real now - start) * speed "
        "(seconds; start is a Unix time, default the process's first reading)",
    )
    workers: int = Field(
        default=4, ge=1, le=64, description="`kandev worker` processes `kandev serve` runs on the embedded default"
    )
    github_api_url: str = Field(
        default="https://api.github.com", description="base URL of the GitHub REST API (GitHub Enterprise: .../api/v3)"
    )
    gitlab_url: str = Field(
        default="https://gitlab.com",
        description="default base URL of GitLab (a workspace's connection may name another; the API is <url>/api/v4)",
    )
    github_poll_seconds: float = Field(default=60.0, gt=0, description="how often open pull requests are polled")
    automation_slow_run_minutes: float = Field(
        default=10.0, gt=0, description="after how long a running automation run is flagged 'taking longer than usual'"
    )
    preflight_attempts: int = Field(
        default=4, ge=1, le=20, description="tries of an automation's pre-flight check before it is acked FAILED"
    )
    preflight_backoff_seconds: float = Field(
        default=0.5, ge=0, description="wait before the pre-flight's second try, doubling for each next one"
    )
    notification_attempts: int = Field(
        default=5, ge=1, le=20, description="tries of an outgoing notification before it is recorded as failed"
    )
    notification_backoff_seconds: float = Field(
        default=5.0, ge=0, description="wait before a notification's second try, doubling for each next one"
    )
    notification_timeout_seconds: float = Field(
        default=10.0, gt=0, le=120, description="how long one notification attempt may wait on its target"
    )
    profile_recheck_seconds: float = Field(
        default=300.0,
        gt=0,
        description="how often the scheduler re-checks the agent profiles of enabled automations (a command "
        "installed or removed re-acks them)",
    )
    quota_workspaces: int = Field(
        default=20, ge=0, description="workspaces a user may own (0: no limit; admins are exempt)"
    )
    quota_automations: int = Field(
        default=100,
        ge=0,
        description="live automations a user may have across their workspaces (0: no limit; admins are exempt)",
    )
    quota_tasks_per_hour: int = Field(
        default=500,
        ge=0,
        description="tasks created in a user's workspaces in any hour, by every surface, their agents and "
        "automations included (0: no limit; an admin's own creates are exempt, not their agents' or automations')",
    )
    quota_min_schedule_seconds: int = Field(
        default=300,
        ge=0,
        description="the shortest interval between two fires of an automation's schedule (0: the 1-minute floor; "
        "admins are exempt)",
    )
    webhook_failure_limit: int = Field(
        default=20,
        ge=1,
        description="wrong secrets or signatures one source address may send one webhook within "
        "webhook_failure_window_seconds before its further wrong ones get 429 (a right one always passes)",
    )
    webhook_failure_window_seconds: int = Field(
        default=300, ge=1, le=86400, description="the window webhook_failure_limit counts in"
    )
    embedded_redis_port: int = Field(
        default=0, ge=0, le=65535, description="loopback port of the embedded Redis-protocol server; 0 picks one"
    )

    @field_validator("database_url")
    @classmethod
    def _async_database_url(cls, value: str | None) -> str | None:
        return async_database_url(value) if value else None

    @field_validator("github_api_url", "gitlab_url")
    @classmethod
    def _plain_http_url(cls, value: str) -> str:
        split = urlsplit(value)
        if split.scheme not in ("http", "https") or not split.hostname or split.username or split.password:
            # The value is not echoed: a URL with credentials would leak them into the error.
            raise ValueError("expected an http(s) URL without credentials, e.g. https://api.github.com")
        return value.rstrip("/")

    @field_validator("mcp_registry_url")
    @classmethod
    def _registry_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        split = urlsplit(value)
        if split.scheme not in ("http", "https") or not split.hostname or split.username or split.password:
            raise ValueError(
                "expected an http(s) URL without credentials, e.g. https://registry.modelcontextprotocol.io"
            )
        return value.rstrip("/")

    @field_validator("worker_capabilities")
    @classmethod
    def _capabilities(cls, value: str | None) -> str | None:
        if value is None:
            return None
        names = sorted({name.strip() for name in value.split(",") if name.strip()})
        if any(not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,31}", name) for name in names) or len(names) > 6:
            raise ValueError("expected at most 6 comma-separated lower-case names, e.g. docker,sandbox,gpu")
        return ",".join(names)

    @field_validator("agent_uids")
    @classmethod
    def _uid_range(cls, value: str | None) -> str | None:
        if not value:
            return None
        first, last = parse_uid_range(value)
        return f"{first}-{last}"

    @field_validator("redis_url")
    @classmethod
    def _plain_redis_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        scheme = value.partition("://")[0].lower() if "://" in value else ""
        if scheme not in _REDIS_SCHEMES:
            # The value itself is not echoed: it may hold a password.
            raise ValueError("expected redis://[:PASSWORD@]HOST:PORT/DB (or rediss://, unix://)")
        from redis.connection import parse_url

        try:
            parse_url(value)
        except ValueError:
            raise ValueError("expected redis://[:PASSWORD@]HOST:PORT/DB (or rediss://, unix://)") from None
        return value

    @property
    def data_path(self) -> Path:
        return self.data_dir.expanduser()

    @property
    def work_path(self) -> Path:
        """Agents' working trees: never inside the data dir, which holds the key and the database."""
        if self.work_dir is not None:
            return self.work_dir.expanduser()
        data = self.data_path
        return data.with_name(f"{data.name}-work")

    @property
    def agent_uid_range(self) -> range | None:
        """KANDEV_AGENT_UIDS as the ids it names, or None when unset."""
        if not self.agent_uids:
            return None
        first, last = parse_uid_range(self.agent_uids)
        return range(first, last + 1)

    @property
    def instance_label(self) -> str:
        """Names this installation's boxes without revealing its key (two Kandevs on one Docker host, or two
        test runs, never sweep each other's)."""
        return hmac.new(self.server_key, b"kandev-box-instance", hashlib.sha256).hexdigest()[:16]

    @property
    def confines_agents(self) -> bool:
        """Agents run as OS identities other than the server's (KANDEV_AGENT_USER or KANDEV_AGENT_UIDS)."""
        return bool(self.agent_user or self.agent_uids)

    @property
    def embedded_database(self) -> bool:
        return self.database_url is None

    @property
    def embedded_redis(self) -> bool:
        return self.redis_url is None

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.data_path / 'kandev.db'}"

    def resolved_public_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @cached_property
    def server_key(self) -> bytes:
        """The key behind session tokens and secret encryption; created once per data dir."""
        if self.secret_key:
            return self.secret_key.encode()
        path = self.data_path / KEY_FILE
        if not path.exists():
            private_dir(path.parent)
            tmp = path.with_name(f"{KEY_FILE}.{os.getpid()}")
            # Created 0600: the key is never readable by anyone else, not even for an instant.
            fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, PRIVATE_FILE)
            with os.fdopen(fd, "w") as file:
                file.write(secrets.token_hex(32))
            try:
                # link() never overwrites, so processes racing here all end up with the first key.
                os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                tmp.unlink(missing_ok=True)
        return path.read_text().strip().encode()


def get_settings() -> Settings:
    return Settings()
