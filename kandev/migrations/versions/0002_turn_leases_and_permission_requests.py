"""turn leases and permission requests

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
import kandev.models.base

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('permission_requests',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('session_id', sa.String(length=36), nullable=False),
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('turn_id', sa.String(length=36), nullable=True),
    sa.Column('title', sa.Text(), nullable=False),
    sa.Column('tool_call', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('options', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('state', sa.String(length=20), nullable=False),
    sa.Column('chosen_option_id', sa.String(length=200), nullable=True),
    sa.Column('resolved_by', sa.String(length=200), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('resolved_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], name=op.f('fk_permission_requests_session_id_sessions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_permission_requests_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_permission_requests'))
    )
    with op.batch_alter_table('permission_requests', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_permission_requests_session_id'), ['session_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_permission_requests_state'), ['state'], unique=False)
        batch_op.create_index(batch_op.f('ix_permission_requests_task_id'), ['task_id'], unique=False)

    with op.batch_alter_table('queued_prompts', schema=None) as batch_op:
        batch_op.create_index('ix_queued_prompts_state', ['state'], unique=False)

    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('job_id', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('cancel_requested_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True))
        batch_op.create_index('ix_turns_state_lease', ['state', 'lease_expires_at'], unique=False)
        batch_op.create_index('uq_turns_one_running_per_session', ['session_id'], unique=True, sqlite_where=sa.text("state = 'RUNNING'"), postgresql_where=sa.text("state = 'RUNNING'"))



def downgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_index('uq_turns_one_running_per_session', sqlite_where=sa.text("state = 'RUNNING'"), postgresql_where=sa.text("state = 'RUNNING'"))
        batch_op.drop_index('ix_turns_state_lease')
        batch_op.drop_column('cancel_requested_at')
        batch_op.drop_column('job_id')

    with op.batch_alter_table('queued_prompts', schema=None) as batch_op:
        batch_op.drop_index('ix_queued_prompts_state')

    with op.batch_alter_table('permission_requests', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_permission_requests_task_id'))
        batch_op.drop_index(batch_op.f('ix_permission_requests_state'))
        batch_op.drop_index(batch_op.f('ix_permission_requests_session_id'))

    op.drop_table('permission_requests')
