"""Shipping a task's changes: the pull/merge requests opened from Kandev with what the code host last said of
them, one-at-a-time claims of shipping operations, durable check-fix rounds, the task's fix-failing-checks and
auto-merge settings, each person's commit identity, and review threads made from code-host review comments

Revision ID: 0033_ship
Revises: 0032_attachments
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import kandev.models.base

revision: str = '0033_ship'
down_revision: str | None = '0032_attachments'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')


def upgrade() -> None:
    op.create_table('check_fix_rounds',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('repository_id', sa.String(length=36), nullable=False),
    sa.Column('head_sha', sa.String(length=64), nullable=False),
    sa.Column('round', sa.Integer(), nullable=False),
    sa.Column('checks', JSON, nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('claimed_until', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('prompt_id', sa.String(length=36), nullable=True),
    sa.Column('seen_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('prompted_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['repository_id'], ['repositories.id'], name=op.f('fk_check_fix_rounds_repository_id_repositories'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_check_fix_rounds_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_check_fix_rounds')),
    sa.UniqueConstraint('task_id', 'repository_id', 'head_sha', name=op.f('uq_check_fix_rounds_task_id_repository_id_head_sha'))
    )
    with op.batch_alter_table('check_fix_rounds', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_check_fix_rounds_claimed_until'), ['claimed_until'], unique=False)
        batch_op.create_index(batch_op.f('ix_check_fix_rounds_task_id'), ['task_id'], unique=False)

    op.create_table('ship_operations',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('repository_id', sa.String(length=36), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('claimed_until', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('actor', sa.String(length=200), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('result', JSON, nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['repository_id'], ['repositories.id'], name=op.f('fk_ship_operations_repository_id_repositories'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_ship_operations_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', 'repository_id', 'kind', name=op.f('pk_ship_operations'))
    )
    op.create_table('task_ship_requests',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('repository_id', sa.String(length=36), nullable=False),
    sa.Column('provider', sa.String(length=20), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('target', sa.String(length=500), nullable=False),
    sa.Column('base_path', sa.String(length=255), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('url', sa.String(length=1000), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('draft', sa.Boolean(), nullable=False),
    sa.Column('title', sa.Text(), nullable=False),
    sa.Column('head_branch', sa.String(length=255), nullable=False),
    sa.Column('head_sha', sa.String(length=64), nullable=False),
    sa.Column('base_branch', sa.String(length=255), nullable=False),
    sa.Column('review_decision', sa.String(length=20), nullable=False),
    sa.Column('mergeable', sa.String(length=12), nullable=False),
    sa.Column('mergeable_reason', sa.String(length=200), nullable=False),
    sa.Column('checks', JSON, nullable=False),
    sa.Column('review_comments', sa.Integer(), nullable=False),
    sa.Column('merged_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('refreshed_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('created_by', sa.String(length=200), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['repository_id'], ['repositories.id'], name=op.f('fk_task_ship_requests_repository_id_repositories'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_task_ship_requests_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', 'repository_id', name=op.f('pk_task_ship_requests'))
    )
    with op.batch_alter_table('review_threads', schema=None) as batch_op:
        batch_op.add_column(sa.Column('external_id', sa.String(length=200), nullable=True))
        batch_op.create_unique_constraint(batch_op.f('uq_review_threads_task_id_external_id'), ['task_id', 'external_id'])

    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('fix_checks_enabled', sa.Boolean(), server_default=sa.text('(false)'), nullable=False))
        batch_op.add_column(sa.Column('fix_checks_max_rounds', sa.Integer(), server_default=sa.text('3'), nullable=False))
        batch_op.add_column(sa.Column('fix_checks_since', kandev.models.base.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('auto_merge', sa.Boolean(), server_default=sa.text('(false)'), nullable=False))

    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('git_name', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('git_email', sa.String(length=320), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('git_email')
        batch_op.drop_column('git_name')

    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.drop_column('auto_merge')
        batch_op.drop_column('fix_checks_since')
        batch_op.drop_column('fix_checks_max_rounds')
        batch_op.drop_column('fix_checks_enabled')

    with op.batch_alter_table('review_threads', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_review_threads_task_id_external_id'), type_='unique')
        batch_op.drop_column('external_id')

    op.drop_table('task_ship_requests')
    op.drop_table('ship_operations')
    with op.batch_alter_table('check_fix_rounds', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_check_fix_rounds_task_id'))
        batch_op.drop_index(batch_op.f('ix_check_fix_rounds_claimed_until'))

    op.drop_table('check_fix_rounds')
