"""Agent identities: the numeric OS id (KANDEV_AGENT_UIDS) each user's agents run as, never given twice

Revision ID: 0026_agent_identities
Revises: 0025_workspace_mcp
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0026_agent_identities'
down_revision: str | None = '0025_workspace_mcp'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('agent_identities',
    sa.Column('uid', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_agent_identities_user_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('uid', name=op.f('pk_agent_identities')),
    sa.UniqueConstraint('user_id', name=op.f('uq_agent_identities_user_id'))
    )


def downgrade() -> None:
    op.drop_table('agent_identities')
