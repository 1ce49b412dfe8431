"""task contributions: a task made from a pull request / merge request URL, with the remote and branch its
commits are pushed to

Revision ID: 0024_contributions
Revises: 0023_gitlab
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0024_contributions'
down_revision: str | None = '0023_gitlab'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('task_contributions',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('repository_id', sa.String(length=36), nullable=False),
    sa.Column('provider', sa.String(length=20), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('target', sa.String(length=300), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('url', sa.String(length=1000), nullable=False),
    sa.Column('remote_name', sa.String(length=100), nullable=False),
    sa.Column('source_clone_url', sa.String(length=1000), nullable=False),
    sa.Column('source_branch', sa.String(length=255), nullable=False),
    sa.Column('local_branch', sa.String(length=255), nullable=False),
    sa.Column('head_sha', sa.String(length=64), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['repository_id'], ['repositories.id'], name=op.f('fk_task_contributions_repository_id_repositories'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_task_contributions_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', 'repository_id', name=op.f('pk_task_contributions'))
    )


def downgrade() -> None:
    op.drop_table('task_contributions')
