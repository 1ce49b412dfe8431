"""Files people attach to a task's prompts: uploaded once, referenced by id, deleted with their task."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, UTCDateTime, created_at_column, id_column


class Attachment(Base):
    """An uploaded file. In the database, not the data dir: every replica and worker reads the same rows, while
    a data dir belongs to one machine. Unbound (no task) until a createTask or sendMessage names it; bound, it
    belongs to that task for good and goes with it."""

    __tablename__ = "attachments"

    id: Mapped[str] = id_column()
    owner_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    task_id: Mapped[str | None] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), nullable=True, index=True)
    # Given at createTask (its position there): it rides with the task's first prompt, whichever start sends it.
    waiting: Mapped[int | None] = mapped_column(Integer, nullable=True)
    name: Mapped[str] = mapped_column(String(255))
    # What the bytes are (never what the client said).
    content_type: Mapped[str] = mapped_column(String(100))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    data: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)
    created_at: Mapped[datetime] = created_at_column()
    bound_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class PromptAttachment(Base):
    """An attachment a queued prompt carries to the agent, in the order it was given."""

    __tablename__ = "prompt_attachments"

    prompt_id: Mapped[str] = mapped_column(ForeignKey("queued_prompts.id", ondelete="CASCADE"), primary_key=True)
    attachment_id: Mapped[str] = mapped_column(
        ForeignKey("attachments.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)
