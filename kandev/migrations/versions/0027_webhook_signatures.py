"""webhook signatures seen (a signed delivery's signature is refused the second time), and GitHub deliveries
deduplicated by the digest of their signed body

Revision ID: 0027_webhook_signatures
Revises: 0026_agent_identities
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0027_webhook_signatures'
down_revision: str | None = '0026_agent_identities'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('webhook_signatures',
    sa.Column('automation_id', sa.String(length=36), nullable=False),
    sa.Column('signature', sa.String(length=64), nullable=False),
    sa.Column('signed_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['automation_id'], ['automations.id'], name=op.f('fk_webhook_signatures_automation_id_automations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('automation_id', 'signature', name=op.f('pk_webhook_signatures'))
    )
    with op.batch_alter_table('webhook_signatures', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_webhook_signatures_signed_at'), ['signed_at'], unique=False)

    with op.batch_alter_table('github_webhook_deliveries', schema=None) as batch_op:
        batch_op.add_column(sa.Column('body_digest', sa.String(length=64), nullable=True))
        batch_op.create_unique_constraint(batch_op.f('uq_github_webhook_deliveries_body_digest'), ['body_digest'])


def downgrade() -> None:
    with op.batch_alter_table('github_webhook_deliveries', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_github_webhook_deliveries_body_digest'), type_='unique')
        batch_op.drop_column('body_digest')

    with op.batch_alter_table('webhook_signatures', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_webhook_signatures_signed_at'))

    op.drop_table('webhook_signatures')
