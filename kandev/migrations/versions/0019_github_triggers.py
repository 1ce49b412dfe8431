"""GitHub triggers wired: pending firings (the durable outbox of PR, merged-PR, push and CI firings), App
installations routed to workspaces, and handled webhook deliveries

Revision ID: 0019_github_triggers
Revises: 0018_webhook_deliveries
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import kandev.models.base

revision: str = '0019_github_triggers'
down_revision: str | None = '0018_webhook_deliveries'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('github_pending_firings',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('automation_id', sa.String(length=36), nullable=False),
    sa.Column('trigger_id', sa.String(length=36), nullable=False),
    sa.Column('trigger_type', sa.String(length=30), nullable=False),
    sa.Column('dedup_key', sa.String(length=300), nullable=False),
    sa.Column('data', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['automation_id'], ['automations.id'], name=op.f('fk_github_pending_firings_automation_id_automations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['trigger_id'], ['automation_triggers.id'], name=op.f('fk_github_pending_firings_trigger_id_automation_triggers'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_github_pending_firings_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_github_pending_firings')),
    sa.UniqueConstraint('automation_id', 'dedup_key', name=op.f('uq_github_pending_firings_automation_id_dedup_key'))
    )
    with op.batch_alter_table('github_pending_firings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_github_pending_firings_next_attempt_at'), ['next_attempt_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_github_pending_firings_trigger_id'), ['trigger_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_github_pending_firings_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('github_installations',
    sa.Column('installation_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('created_by', sa.String(length=200), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_github_installations_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('installation_id', 'workspace_id', name=op.f('pk_github_installations'))
    )
    op.create_table('github_webhook_deliveries',
    sa.Column('delivery_id', sa.String(length=100), nullable=False),
    sa.Column('event', sa.String(length=50), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('delivery_id', name=op.f('pk_github_webhook_deliveries'))
    )


def downgrade() -> None:
    op.drop_table('github_webhook_deliveries')
    op.drop_table('github_installations')
    with op.batch_alter_table('github_pending_firings', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_github_pending_firings_workspace_id'))
        batch_op.drop_index(batch_op.f('ix_github_pending_firings_trigger_id'))
        batch_op.drop_index(batch_op.f('ix_github_pending_firings_next_attempt_at'))

    op.drop_table('github_pending_firings')
