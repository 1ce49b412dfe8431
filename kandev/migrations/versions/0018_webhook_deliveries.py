"""Webhook deliveries: every accepted POST to an automation's webhook, recorded before it is answered, with
its idempotency key (unique per automation) and what firing it came to

Revision ID: 0018_webhook_deliveries
Revises: 0017_schedules
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import kandev.models.base

revision: str = '0018_webhook_deliveries'
down_revision: str | None = '0017_schedules'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('webhook_deliveries',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('automation_id', sa.String(length=36), nullable=False),
    sa.Column('trigger_id', sa.String(length=36), nullable=True),
    sa.Column('idempotency_key', sa.String(length=255), nullable=True),
    sa.Column('payload', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('received_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('processed_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('run_id', sa.String(length=36), nullable=True),
    sa.Column('outcome', sa.String(length=20), nullable=True),
    sa.ForeignKeyConstraint(['automation_id'], ['automations.id'], name=op.f('fk_webhook_deliveries_automation_id_automations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['automation_runs.id'], name=op.f('fk_webhook_deliveries_run_id_automation_runs'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['trigger_id'], ['automation_triggers.id'], name=op.f('fk_webhook_deliveries_trigger_id_automation_triggers'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_webhook_deliveries')),
    sa.UniqueConstraint('automation_id', 'idempotency_key', name=op.f('uq_webhook_deliveries_automation_id_idempotency_key'))
    )
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.create_index('ix_webhook_deliveries_unprocessed', ['processed_at', 'received_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.drop_index('ix_webhook_deliveries_unprocessed')

    op.drop_table('webhook_deliveries')
