"""completion signals and clarifications

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
import kandev.models.base

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('clarifications',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('session_id', sa.String(length=36), nullable=False),
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('turn_id', sa.String(length=36), nullable=True),
    sa.Column('questions', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('context', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=20), nullable=False),
    sa.Column('answers', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('detached', sa.Boolean(), nullable=False),
    sa.Column('resolved_by', sa.String(length=200), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('resolved_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], name=op.f('fk_clarifications_session_id_sessions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_clarifications_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_clarifications'))
    )
    with op.batch_alter_table('clarifications', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_clarifications_session_id'), ['session_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_clarifications_state'), ['state'], unique=False)
        batch_op.create_index(batch_op.f('ix_clarifications_task_id'), ['task_id'], unique=False)

    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('pending_signal', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=True))
        batch_op.add_column(sa.Column('signal_floor_turn_seq', sa.Integer(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('completion_pending', sa.Boolean(), server_default=sa.text('(false)'), nullable=False))
        batch_op.add_column(sa.Column('plan_mode', sa.Boolean(), server_default=sa.text('(false)'), nullable=False))



def downgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_column('plan_mode')
        batch_op.drop_column('completion_pending')
        batch_op.drop_column('signal_floor_turn_seq')
        batch_op.drop_column('pending_signal')

    with op.batch_alter_table('clarifications', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_clarifications_task_id'))
        batch_op.drop_index(batch_op.f('ix_clarifications_state'))
        batch_op.drop_index(batch_op.f('ix_clarifications_session_id'))

    op.drop_table('clarifications')
