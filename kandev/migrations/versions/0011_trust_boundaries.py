"""trust boundaries

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('session_tokens',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('session_id', sa.String(length=36), nullable=False),
    sa.Column('token_hash', sa.String(length=128), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], name=op.f('fk_session_tokens_session_id_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_session_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_session_tokens_token_hash'))
    )
    with op.batch_alter_table('session_tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_session_tokens_session_id'), ['session_id'], unique=False)

    with op.batch_alter_table('agent_profiles', schema=None) as batch_op:
        batch_op.alter_column('workspace_id',
               existing_type=sa.VARCHAR(length=36),
               nullable=True)

    with op.batch_alter_table('executor_profiles', schema=None) as batch_op:
        batch_op.alter_column('workspace_id',
               existing_type=sa.VARCHAR(length=36),
               nullable=True)

    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('admin', sa.Boolean(), server_default=sa.text('(false)'), nullable=False))
    # The built-in local user has always been the operator of its machine.
    users = sa.table('users', sa.column('login', sa.String), sa.column('admin', sa.Boolean))
    op.execute(users.update().where(users.c.login == 'local').values(admin=True))



def downgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('admin')

    with op.batch_alter_table('executor_profiles', schema=None) as batch_op:
        batch_op.alter_column('workspace_id',
               existing_type=sa.VARCHAR(length=36),
               nullable=False)

    with op.batch_alter_table('agent_profiles', schema=None) as batch_op:
        batch_op.alter_column('workspace_id',
               existing_type=sa.VARCHAR(length=36),
               nullable=False)

    with op.batch_alter_table('session_tokens', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_session_tokens_session_id'))

    op.drop_table('session_tokens')
