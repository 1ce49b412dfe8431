"""Review threads as plain values: what the API renders and taskEvents carry."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from kandev.domain.context import Principal
from kandev.models import ReviewComment, ReviewThread


class ThreadState(StrEnum):
    OPEN = "OPEN"
    RESOLVED = "RESOLVED"
    # Its lines changed or went since it was opened: it keeps showing the lines as they were.
    OUTDATED = "OUTDATED"


class Side(StrEnum):
    OLD = "OLD"  # the base version (the merge base)
    NEW = "NEW"  # the working tree's version


class AuthorKind(StrEnum):
    PERSON = "PERSON"
    AGENT = "AGENT"


@dataclass(frozen=True)
class Author:
    kind: AuthorKind
    login: str | None = None
    session_id: str | None = None

    @classmethod
    def of(cls, principal: Principal) -> Author:
        if principal.session_id is not None:
            return cls(AuthorKind.AGENT, session_id=principal.session_id)
        return cls(AuthorKind.PERSON, login=principal.login)

    @classmethod
    def of_actor(cls, actor: str | None) -> Author | None:
        """From a stored actor (`user:LOGIN` or `session:ID`)."""
        if not actor:
            return None
        kind, _, name = actor.partition(":")
        if kind == "session":
            return cls(AuthorKind.AGENT, session_id=name)
        return cls(AuthorKind.PERSON, login=name)


@dataclass(frozen=True)
class CommentRecord:
    id: str
    thread_id: str
    author: Author
    body: str
    created_at: datetime

    @classmethod
    def of(cls, row: ReviewComment) -> CommentRecord:
        author = Author(AuthorKind(row.author_kind), row.author_login, row.author_session_id)
        return cls(row.id, row.thread_id, author, row.body, row.created_at)


@dataclass(frozen=True)
class ThreadRecord:
    id: str
    task_id: str
    repository_id: str | None
    path: str | None
    line: int | None
    end_line: int | None
    side: Side
    state: ThreadState
    origin: AuthorKind
    anchor_commit: str | None
    anchor_line: int | None
    anchor_text: str
    anchor_before: list[str]
    anchor_after: list[str]
    resolved_by: Author | None
    resolved_at: datetime | None
    sent_in_prompt_id: str | None
    sent_at: datetime | None
    created_at: datetime
    updated_at: datetime
    comments: list[CommentRecord]

    @classmethod
    def of(cls, row: ReviewThread, comments: list[ReviewComment]) -> ThreadRecord:
        context = row.anchor_context or {}
        return cls(
            id=row.id,
            task_id=row.task_id,
            repository_id=row.repository_id,
            path=row.path,
            line=row.line,
            end_line=row.end_line,
            side=Side(row.side),
            state=ThreadState(row.state),
            origin=AuthorKind(row.origin),
            anchor_commit=row.anchor_commit,
            anchor_line=row.anchor_line,
            anchor_text=row.anchor_text,
            anchor_before=list(context.get("before") or []),
            anchor_after=list(context.get("after") or []),
            resolved_by=Author.of_actor(row.resolved_by),
            resolved_at=row.resolved_at,
            sent_in_prompt_id=row.sent_in_prompt_id,
            sent_at=row.sent_at,
            created_at=row.created_at,
            updated_at=row.updated_at,
            comments=[CommentRecord.of(c) for c in sorted(comments, key=lambda c: (c.created_at, c.id))],
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _iso(asdict(self))
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ThreadRecord:
        def when(value: str | None) -> datetime | None:
            return None if value is None else datetime.fromisoformat(value)

        def author(value: dict[str, Any] | None) -> Author | None:
            return None if value is None else Author(AuthorKind(value["kind"]), value["login"], value["session_id"])

        comments = [
            CommentRecord(c["id"], c["thread_id"], author(c["author"]), c["body"], when(c["created_at"]))  # type: ignore[arg-type]
            for c in data["comments"]
        ]
        return cls(
            **{
                **data,
                "side": Side(data["side"]),
                "state": ThreadState(data["state"]),
                "origin": AuthorKind(data["origin"]),
                "resolved_by": author(data["resolved_by"]),
                "resolved_at": when(data["resolved_at"]),
                "sent_at": when(data["sent_at"]),
                "created_at": when(data["created_at"]),
                "updated_at": when(data["updated_at"]),
                "comments": comments,
            }
        )


def _iso(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _iso(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_iso(v) for v in value]
    return value
