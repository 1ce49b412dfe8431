"""GitLab: workspace connections (token as a workspace secret) and task merge-request links

Revision ID: 0023_gitlab
Revises: 0022_automation_acks
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0023_gitlab'
down_revision: str | None = '0022_automation_acks'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('gitlab_connections',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('secret_id', sa.String(length=36), nullable=False),
    sa.Column('base_url', sa.String(length=500), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('username', sa.String(length=255), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['secret_id'], ['secrets.id'], name=op.f('fk_gitlab_connections_secret_id_secrets'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_gitlab_connections_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_gitlab_connections')),
    sa.UniqueConstraint('workspace_id', name=op.f('uq_gitlab_connections_workspace_id'))
    )
    with op.batch_alter_table('gitlab_connections', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_gitlab_connections_secret_id'), ['secret_id'], unique=False)

    op.create_table('task_merge_requests',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('project', sa.String(length=500), nullable=False),
    sa.Column('iid', sa.Integer(), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('source_branch', sa.String(length=255), nullable=False),
    sa.Column('target_branch', sa.String(length=255), nullable=False),
    sa.Column('sha', sa.String(length=64), nullable=False),
    sa.Column('url', sa.String(length=1000), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_task_merge_requests_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', 'project', 'iid', name=op.f('pk_task_merge_requests'))
    )


def downgrade() -> None:
    op.drop_table('task_merge_requests')
    with op.batch_alter_table('gitlab_connections', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_gitlab_connections_secret_id'))
    op.drop_table('gitlab_connections')
