"""automation acks: each automation's last pre-flight acknowledgement (status, routed profile, tools, credential
presence and outcome, next run, summary, reason), the fingerprint of the inputs it was checked for, and how
many attempts the current check has taken

Existing automations have no ack (null) until they are saved or re-acked.

Revision ID: 0022_automation_acks
Revises: 0021_automation_thread
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0022_automation_acks'
down_revision: str | None = '0021_automation_thread'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('automations') as batch:
        batch.add_column(sa.Column('last_ack', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=True))
        batch.add_column(sa.Column('ack_fingerprint', sa.String(length=64), nullable=True))
        batch.add_column(sa.Column('ack_attempts', sa.Integer(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('automations') as batch:
        batch.drop_column('ack_attempts')
        batch.drop_column('ack_fingerprint')
        batch.drop_column('last_ack')
