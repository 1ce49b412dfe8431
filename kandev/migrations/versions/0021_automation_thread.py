"""Automation threads: one conversation per automation (its own system messages and each run's request and
outcome)

Revision ID: 0021_automation_thread
Revises: 0020_task_cleanups
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0021_automation_thread'
down_revision: str | None = '0020_task_cleanups'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('automation_thread_messages',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('automation_id', sa.String(length=36), nullable=False),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('run_id', sa.String(length=36), nullable=True),
    sa.Column('task_id', sa.String(length=36), nullable=True),
    sa.Column('dedup_key', sa.String(length=100), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['automation_id'], ['automations.id'], name=op.f('fk_automation_thread_messages_automation_id_automations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_automation_thread_messages')),
    sa.UniqueConstraint('automation_id', 'dedup_key', name=op.f('uq_automation_thread_messages_automation_id_dedup_key'))
    )
    with op.batch_alter_table('automation_thread_messages', schema=None) as batch_op:
        batch_op.create_index('ix_automation_thread_messages_page', ['automation_id', 'created_at', 'id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('automation_thread_messages', schema=None) as batch_op:
        batch_op.drop_index('ix_automation_thread_messages_page')

    op.drop_table('automation_thread_messages')
