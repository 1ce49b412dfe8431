"""Automation cleanup lifecycle: durable task cleanups (hidden run tasks of a deleted automation or deleted
runs, deleted and their directories reclaimed by a retried job) and when a task's worktrees were reclaimed

Revision ID: 0020_task_cleanups
Revises: 0019_github_triggers
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0020_task_cleanups'
down_revision: str | None = '0019_github_triggers'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('task_cleanups',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('reason', sa.String(length=30), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('done_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_task_cleanups_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', name=op.f('pk_task_cleanups'))
    )
    with op.batch_alter_table('task_cleanups', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_task_cleanups_next_attempt_at'), ['next_attempt_at'], unique=False)

    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('worktree_reclaimed_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.drop_column('worktree_reclaimed_at')

    with op.batch_alter_table('task_cleanups', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_task_cleanups_next_attempt_at'))

    op.drop_table('task_cleanups')
