"""GitHub: workspace connections (token as a workspace secret), the server's App, task pull-request links and
the PR trigger's poll state

Revision ID: 0016_github
Revises: 0015_automation_runs_firing
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import kandev.models.base

revision: str = '0016_github'
down_revision: str | None = '0015_automation_runs_firing'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('github_apps',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('app_id', sa.String(length=50), nullable=False),
    sa.Column('private_key_ciphertext', sa.LargeBinary(), nullable=False),
    sa.Column('webhook_secret_ciphertext', sa.LargeBinary(), nullable=False),
    sa.Column('updated_by', sa.String(length=200), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_github_apps'))
    )
    op.create_table('github_connections',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('secret_id', sa.String(length=36), nullable=False),
    sa.Column('login', sa.String(length=200), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['secret_id'], ['secrets.id'], name=op.f('fk_github_connections_secret_id_secrets'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_github_connections_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_github_connections')),
    sa.UniqueConstraint('workspace_id', name=op.f('uq_github_connections_workspace_id'))
    )
    with op.batch_alter_table('github_connections', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_github_connections_secret_id'), ['secret_id'], unique=False)

    op.create_table('task_pull_requests',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('repository', sa.String(length=201), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('merged_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('head_branch', sa.String(length=255), nullable=False),
    sa.Column('head_sha', sa.String(length=64), nullable=False),
    sa.Column('base_branch', sa.String(length=255), nullable=False),
    sa.Column('url', sa.String(length=1000), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_task_pull_requests_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', 'repository', 'number', name=op.f('pk_task_pull_requests'))
    )
    op.create_table('github_pr_poll_states',
    sa.Column('trigger_id', sa.String(length=36), nullable=False),
    sa.Column('repository', sa.String(length=201), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('automation_id', sa.String(length=36), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('head_sha', sa.String(length=64), nullable=False),
    sa.Column('draft', sa.Boolean(), nullable=False),
    sa.Column('labels', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('content_digest', sa.String(length=64), nullable=False),
    sa.Column('pr_updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('qualified', sa.Boolean(), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['automation_id'], ['automations.id'], name=op.f('fk_github_pr_poll_states_automation_id_automations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['trigger_id'], ['automation_triggers.id'], name=op.f('fk_github_pr_poll_states_trigger_id_automation_triggers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('trigger_id', 'repository', 'number', name=op.f('pk_github_pr_poll_states'))
    )
    with op.batch_alter_table('github_pr_poll_states', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_github_pr_poll_states_automation_id'), ['automation_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('github_pr_poll_states', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_github_pr_poll_states_automation_id'))

    op.drop_table('github_pr_poll_states')
    op.drop_table('task_pull_requests')
    with op.batch_alter_table('github_connections', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_github_connections_secret_id'))

    op.drop_table('github_connections')
    op.drop_table('github_apps')
