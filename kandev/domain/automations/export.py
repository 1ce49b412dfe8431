"""A workspace's automations as YAML: one document listing them all, or a zip of one file per automation
at `.kandev/automations/<slug>.yml`.

What an automation points at is named, never identified (profiles, workflow, step and repositories by name,
repositories with their remote URL minus any credentials), and no secret is written: not the webhook secret,
not a token in a URL. The same workspace always gives the same bytes: fixed key order, automations by name
then id, file names assigned by age, and zip entries with fixed times, permissions and compression."""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.records import AutomationRecord, TriggerRecord
from kandev.models import AgentProfile, ExecutorProfile, Repository, Workflow, WorkflowStep

FORMAT_VERSION = 1
FOLDER = ".kandev/automations"
MAX_SLUG_LENGTH = 60
# 1980-01-01, the earliest time a zip entry can carry: no clock reaches the archive.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_FILE_MODE = 0o100644 << 16  # a regular file, rw-r--r--


@dataclass(frozen=True)
class Names:
    """The names of what a workspace's automations point at, by id."""

    agent_profiles: Mapping[str, str]
    executor_profiles: Mapping[str, str]
    workflows: Mapping[str, str]
    steps: Mapping[str, str]
    repositories: Mapping[str, tuple[str, str | None]]


async def names_for(db: AsyncSession, automations: Sequence[AutomationRecord]) -> Names:
    """One statement per kind of thing pointed at, whatever the number of automations."""

    def ids(*attributes: str) -> set[str]:
        return {value for a in automations for name in attributes if (value := getattr(a, name)) is not None}

    async def named(model: Any, wanted: set[str]) -> dict[str, str]:
        if not wanted:
            return {}
        return {row.id: row.name for row in await db.execute(select(model.id, model.name).where(model.id.in_(wanted)))}

    repository_ids = {pair.repository_id for a in automations for pair in a.repositories}
    repositories: dict[str, tuple[str, str | None]] = {}
    if repository_ids:
        found = await db.execute(
            select(Repository.id, Repository.name, Repository.remote_url).where(Repository.id.in_(repository_ids))
        )
        repositories = {row.id: (row.name, without_credentials(row.remote_url)) for row in found}
    return Names(
        agent_profiles=await named(AgentProfile, ids("agent_profile_id")),
        executor_profiles=await named(ExecutorProfile, ids("executor_profile_id")),
        workflows=await named(Workflow, ids("workflow_id")),
        steps=await named(WorkflowStep, ids("workflow_step_id")),
        repositories=repositories,
    )


def without_credentials(url: str | None) -> str | None:
    """A remote URL without a password, and for http(s) without any user (a token often sits there)."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if not parts.netloc or "@" not in parts.netloc:
        return url  # no user part (or scp-like `git@host:path`, whose user is no secret)
    userinfo, host = parts.netloc.rsplit("@", 1)
    user = "" if parts.scheme.lower() in ("http", "https") else userinfo.split(":", 1)[0]
    netloc = f"{user}@{host}" if user else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def ordered(automations: Iterable[AutomationRecord]) -> list[AutomationRecord]:
    """By name then id, compared as Python compares text (not by a database's collation)."""
    return sorted(automations, key=lambda a: (a.name, a.id))


def automation_document(automation: AutomationRecord, names: Names) -> dict[str, Any]:
    """One automation in the export's fixed key order."""
    return {
        "name": automation.name,
        "description": automation.description,
        "agent_profile": _name(names.agent_profiles, automation.agent_profile_id),
        "executor_profile": _name(names.executor_profiles, automation.executor_profile_id),
        "destination": automation.destination,
        "workflow": _name(names.workflows, automation.workflow_id),
        "workflow_step": _name(names.steps, automation.workflow_step_id),
        "repositories": [
            {
                "name": names.repositories.get(pair.repository_id, ("", None))[0],
                "url": names.repositories.get(pair.repository_id, ("", None))[1],
                "base_branch": pair.base_branch,
            }
            for pair in sorted(automation.repositories, key=lambda p: p.position)
        ],
        "prompt": automation.prompt,
        "title_template": automation.title_template,
        "context": automation.context,
        "max_concurrent_runs": automation.max_concurrent_runs,
        "enabled": automation.enabled,
        "triggers": [_trigger(t) for t in automation.triggers],
    }


def _name(names: Mapping[str, str], value: str | None) -> str | None:
    return None if value is None else names.get(value)


def _trigger(trigger: TriggerRecord) -> dict[str, Any]:
    # Configs hold a schedule or a GitHub condition's filters; a webhook's is empty (its secret lives elsewhere).
    return {"type": trigger.type, "enabled": trigger.enabled, "config": _sorted(trigger.config)}


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def workspace_yaml(automations: Sequence[AutomationRecord], names: Names) -> str:
    """Every automation in one document, by name then id."""
    return _dump(
        {"version": FORMAT_VERSION, "automations": [automation_document(a, names) for a in ordered(automations)]}
    )


def workspace_zip(automations: Sequence[AutomationRecord], names: Names) -> bytes:
    """One `.kandev/automations/<slug>.yml` per automation (an empty workspace gives an empty zip)."""
    chosen = slugs(automations)
    files = {
        f"{FOLDER}/{chosen[a.id]}.yml": _dump({"version": FORMAT_VERSION, **automation_document(a, names)})
        for a in automations
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(files):
            entry = zipfile.ZipInfo(path, date_time=_ZIP_TIME)
            entry.create_system = 3  # unix, wherever the server runs, so the permissions below are read
            entry.external_attr = _FILE_MODE
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, files[path].encode(), compresslevel=9)
    return buffer.getvalue()


def slug(name: str) -> str:
    """Lowercase ASCII words joined by '-' ("Nightly CI: é!" -> "nightly-ci-e"); "automation" if none."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    words = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")
    return words[:MAX_SLUG_LENGTH].rstrip("-") or "automation"


def slugs(automations: Sequence[AutomationRecord]) -> dict[str, str]:
    """A distinct slug per automation id. Oldest first, each takes its own slug if still free, else the first
    free `-2`, `-3`, ...; so adding an automation never renames an existing one's file."""
    taken: set[str] = set()
    chosen: dict[str, str] = {}
    for automation in sorted(automations, key=lambda a: (a.created_at, a.id)):
        base = candidate = slug(automation.name)
        number = 2
        while candidate in taken:
            candidate, number = f"{base}-{number}", number + 1
        chosen[automation.id] = candidate
        taken.add(candidate)
    return chosen


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line text as literal blocks so prompts stay readable and diffable."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and not value.endswith((" ", "\t")) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump(document: Mapping[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
