"""workspaceEvents: every change to a workspace's configuration, told once per transaction after its commit.

Rather than each mutation remembering to emit, the unit of work watches its own flushes: whatever adds,
changes or deletes a workflow or step, a profile, a repository, a secret, an MCP server definition or its
selection, or a workspace (a mutation, a YAML import, a new workspace's defaults) queues one small event
(kind and id, never content: a secret's value stays in the database) on the unit of work, so it is published
with the others only once committed, and a rolled-back change is never told. A personal access token issued or
revoked is told server-wide to its owner only (whatever workspace their tabs have open), never its text or hash."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session

from kandev.domain.context import Event, Principal, UnitOfWork
from kandev.models import (
    AccessToken,
    AgentProfile,
    ExecutorProfile,
    McpServer,
    McpServerSelection,
    Repository,
    Secret,
    Workflow,
    WorkflowStep,
    Workspace,
)
from kandev.platform.event_bus import Channel, SettingsEventPayload, server_settings_channel, settings_channel

WORKSPACE = "WORKSPACE"
WORKFLOW = "WORKFLOW"
AGENT_PROFILE = "AGENT_PROFILE"
EXECUTOR_PROFILE = "EXECUTOR_PROFILE"
REPOSITORY = "REPOSITORY"
SECRET = "SECRET"
MCP_SERVER = "MCP_SERVER"
ACCESS_TOKEN = "ACCESS_TOKEN"

_PROFILES: dict[type[Any], str] = {
    AgentProfile: AGENT_PROFILE,
    ExecutorProfile: EXECUTOR_PROFILE,
    McpServer: MCP_SERVER,
}
_OWNED: dict[type[Any], str] = {Repository: REPOSITORY, Secret: SECRET, Workflow: WORKFLOW}
_WATCHED: tuple[type[Any], ...] = (Workspace, WorkflowStep, McpServerSelection, AccessToken, *_PROFILES, *_OWNED)


def watch(uow: UnitOfWork) -> None:
    """Queue a workspaceEvents message on `uow` for each configuration row its flushes touch."""

    def before_flush(session: Session, _context: object, _instances: object) -> None:
        # Tasks, sessions and messages are most of what flushes: only configuration rows are looked at closer.
        dirty = (o for o in session.dirty if isinstance(o, _WATCHED) and session.is_modified(o))
        for row in (*session.new, *session.deleted, *dirty):
            if isinstance(row, _WATCHED):
                _queue(uow, session, row)

    event.listen(uow.db.sync_session, "before_flush", before_flush)


def _queue(uow: UnitOfWork, session: Session, row: object) -> None:
    if isinstance(row, AccessToken):
        # Issued, revoked or deleted; a use (last_used_at) is no change to the owner's list worth telling.
        if row in session.new or row in session.deleted or inspect(row).attrs.revoked_at.history.has_changes():
            _emit(
                uow, server_settings_channel(), SettingsEventPayload(kind=ACCESS_TOKEN, id=row.id, owner_id=row.user_id)
            )
    elif isinstance(row, Workspace):
        if row in session.new:
            # Nobody listens on a workspace that did not exist: its owner's other tabs hear of it server-wide.
            _emit(
                uow, server_settings_channel(), SettingsEventPayload(kind=WORKSPACE, id=row.id, owner_id=row.owner_id)
            )
        else:
            _emit(uow, settings_channel(row.id), SettingsEventPayload(kind=WORKSPACE, id=row.id))
    elif isinstance(row, AgentProfile | ExecutorProfile | McpServer):
        kind = _PROFILES[type(row)]
        if row.workspace_id is None:  # server-wide: listed in every workspace
            _emit(uow, server_settings_channel(), SettingsEventPayload(kind=kind, id=row.id, owner_id=None))
        else:
            _emit(uow, settings_channel(row.workspace_id), SettingsEventPayload(kind=kind, id=row.id))
    elif isinstance(row, Repository | Secret | Workflow):
        _emit(uow, settings_channel(row.workspace_id), SettingsEventPayload(kind=_OWNED[type(row)], id=row.id))
    elif isinstance(row, McpServerSelection):
        # Selected or deselected at a scope: told as a change of the definition, so the MCP lists of that
        # profile, repository, task or session reload. The definition is in the session (both mutations load it).
        server = session.get(McpServer, row.mcp_server_id)
        if server is not None:
            _queue(uow, session, server)
    elif isinstance(row, WorkflowStep):
        # The step's workflow is in the session already (every step mutation loads it); the editor refetches it.
        workflow = session.get(Workflow, row.workflow_id)
        if workflow is not None:
            _emit(uow, settings_channel(workflow.workspace_id), SettingsEventPayload(kind=WORKFLOW, id=workflow.id))


def _emit(uow: UnitOfWork, channel: Channel[SettingsEventPayload], payload: SettingsEventPayload) -> None:
    """Once per transaction: a mutation flushing a row several times (or a step and its workflow) is one change."""
    if Event(channel, payload) not in uow.events:
        uow.emit(channel, payload)


def heard_by(payload: SettingsEventPayload, principal: Principal) -> bool:
    """A server-wide message about a new workspace goes only to those who see it (its owner, unless bound to
    another workspace as an agent session is; the local user with auth off); one about a server-wide profile
    (no owner) to everyone, who all list it; one about an access token to its owner only, as a person (never an
    agent session, nor anyone else, whatever they see)."""
    owner = payload.get("owner_id")
    if payload["kind"] == ACCESS_TOKEN:
        return (
            owner is not None
            and principal.session_id is None
            and principal.workspace_id is None
            and owner == principal.user_id
        )
    if owner is None:
        return True
    if principal.workspace_id is not None:
        return False
    return principal.sees_everything or owner == principal.user_id
