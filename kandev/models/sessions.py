"""Agent sessions, their turns, the durable prompt queue and the transcript."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, UTCDateTime, created_at_column, id_column, updated_at_column


class Session(Base):
    __tablename__ = "sessions"

    id: Mapped[str] = id_column()
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    agent_profile_id: Mapped[str | None] = mapped_column(
        ForeignKey("agent_profiles.id", ondelete="SET NULL"), nullable=True
    )
    executor_profile_id: Mapped[str | None] = mapped_column(
        ForeignKey("executor_profiles.id", ondelete="SET NULL"), nullable=True
    )
    name: Mapped[str] = mapped_column(String(200), default="")
    is_primary: Mapped[bool] = mapped_column(Boolean, default=False)
    purpose: Mapped[str] = mapped_column(String(40), default="task")
    state: Mapped[str] = mapped_column(String(30), default="CREATED")
    working_dir: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    # The agent's own ACP session id, kept so a later launch can resume (load) that conversation.
    acp_session_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    mcp_profile: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    mcp_profile_revision: Mapped[int] = mapped_column(Integer, default=0)
    # Workspace MCP servers: the effective set saved as the desired revision, and the revision an agent was
    # last launched with (a failed apply leaves the applied one in use).
    mcp_servers_desired: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list, server_default="[]")
    mcp_servers_desired_revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    mcp_servers_applied: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list, server_default="[]")
    mcp_servers_applied_revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # step_complete_kandev's pending signal:
    # {step_id, turn_id, turn_seq, source, summary, handoff, blockers, signaled_at}.
    pending_signal: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    # Turns up to this seq can no longer signal: the user replied after them (re-open).
    signal_floor_turn_seq: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The last turn ended on a signal-gated step without a signal.
    completion_pending: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    plan_mode: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # Where its agent was last launched: {kind, worker, box} (the box: a container id, a sandbox's pid).
    placement: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    # The worker capabilities its queued turn needs and no live worker offers ([]: none missing).
    waiting_for: Mapped[list[str]] = mapped_column(JSONType, default=list, server_default="[]")
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class SessionToken(Base):
    """A session MCP token minted for one launch or resume of the session's agent, stored hashed."""

    __tablename__ = "session_tokens"

    id: Mapped[str] = id_column()
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(128), unique=True)
    created_at: Mapped[datetime] = created_at_column()
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Turn(Base):
    __tablename__ = "turns"
    __table_args__ = (
        UniqueConstraint("session_id", "seq"),
        # At most one running turn per session, enforced by the database itself.
        Index(
            "uq_turns_one_running_per_session",
            "session_id",
            unique=True,
            sqlite_where=text("state = 'RUNNING'"),
            postgresql_where=text("state = 'RUNNING'"),
        ),
        Index("ix_turns_state_lease", "state", "lease_expires_at"),
    )

    id: Mapped[str] = id_column()
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    prompt_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    state: Mapped[str] = mapped_column(String(20), default="RUNNING")
    stop_reason: Mapped[str | None] = mapped_column(String(40), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    worker_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    job_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # Where the turn's time went: {"launch_ms": agent start, "ready_ms": claim until the prompt is sent
    # (launch included), "prompt_ms": the ACP prompt round trip}.
    timings: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # The step the task was on when this turn started: a signal from it is for that step only.
    step_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    # When this turn signalled its step complete (step_complete_kandev or the manual fallback): once per turn.
    signaled_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Set by stop/interrupt; the running job sees it on its next heartbeat even if the nudge is lost.
    cancel_requested_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    started_at: Mapped[datetime] = created_at_column()
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class QueuedPrompt(Base):
    __tablename__ = "queued_prompts"
    __table_args__ = (UniqueConstraint("session_id", "seq"), Index("ix_queued_prompts_state", "state"))

    id: Mapped[str] = id_column()
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    idempotency_key: Mapped[str] = mapped_column(String(300), unique=True)
    # user, step, parent_answer, parent_question, automation, peer, system
    source: Mapped[str] = mapped_column(String(40))
    text: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(20), default="QUEUED")
    reply_to_question_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    sender: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    turn_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (UniqueConstraint("session_id", "seq"),)

    id: Mapped[str] = id_column()
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    turn_id: Mapped[str | None] = mapped_column(String(36), nullable=True, index=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(20))
    text: Mapped[str] = mapped_column(Text, default="")
    data: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class PermissionRequest(Base):
    """An agent's request to run something, waiting for an operator under the ASK policy."""

    __tablename__ = "permission_requests"

    id: Mapped[str] = id_column()
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    turn_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    title: Mapped[str] = mapped_column(Text, default="")
    tool_call: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    options: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    # PENDING, RESOLVED, CANCELLED (the turn ended first)
    state: Mapped[str] = mapped_column(String(20), default="PENDING", index=True)
    chosen_option_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    resolved_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Clarification(Base):
    """Questions an agent asked the operator (ask_user_question_kandev), durable until answered."""

    __tablename__ = "clarifications"

    id: Mapped[str] = id_column()
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    turn_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    questions: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    context: Mapped[str] = mapped_column(Text, default="")
    # PENDING, ANSWERED, REJECTED, EXPIRED, CANCELLED
    state: Mapped[str] = mapped_column(String(20), default="PENDING", index=True)
    answers: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    # The asking tool call stopped waiting (timeout, disconnect): an answer now resumes the session.
    detached: Mapped[bool] = mapped_column(Boolean, default=False)
    resolved_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class ParentQuestion(Base):
    """An autopilot child's question to its direct parent (ask_parent_question_kandev)."""

    __tablename__ = "parent_questions"
    __table_args__ = (
        # One pending question per child session: a second ask returns the pending one.
        Index(
            "uq_parent_questions_one_pending",
            "child_session_id",
            unique=True,
            sqlite_where=text("state = 'PENDING'"),
            postgresql_where=text("state = 'PENDING'"),
        ),
    )

    id: Mapped[str] = id_column()
    child_task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    child_session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    parent_task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    turn_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    # sha256 of (session, turn, tool, canonical arguments): a retried tool call finds its question.
    call_identity: Mapped[str] = mapped_column(String(64), unique=True)
    questions: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    context: Mapped[str] = mapped_column(Text, default="")
    # PENDING, ANSWERED, SUPERSEDED, STALE
    state: Mapped[str] = mapped_column(String(20), default="PENDING", index=True)
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    answered_by_session_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    parent_prompt_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    answer_prompt_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    resolution: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
