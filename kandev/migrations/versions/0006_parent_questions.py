"""parent questions

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
import kandev.models.base

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('parent_questions',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('child_task_id', sa.String(length=36), nullable=False),
    sa.Column('child_session_id', sa.String(length=36), nullable=False),
    sa.Column('parent_task_id', sa.String(length=36), nullable=False),
    sa.Column('turn_id', sa.String(length=36), nullable=True),
    sa.Column('call_identity', sa.String(length=64), nullable=False),
    sa.Column('questions', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('context', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=20), nullable=False),
    sa.Column('answer', sa.Text(), nullable=True),
    sa.Column('answered_by_session_id', sa.String(length=36), nullable=True),
    sa.Column('parent_prompt_id', sa.String(length=36), nullable=True),
    sa.Column('answer_prompt_id', sa.String(length=36), nullable=True),
    sa.Column('resolution', sa.String(length=200), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('resolved_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['child_session_id'], ['sessions.id'], name=op.f('fk_parent_questions_child_session_id_sessions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['child_task_id'], ['tasks.id'], name=op.f('fk_parent_questions_child_task_id_tasks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['parent_task_id'], ['tasks.id'], name=op.f('fk_parent_questions_parent_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_parent_questions')),
    sa.UniqueConstraint('call_identity', name=op.f('uq_parent_questions_call_identity'))
    )
    with op.batch_alter_table('parent_questions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_parent_questions_child_task_id'), ['child_task_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_parent_questions_parent_task_id'), ['parent_task_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_parent_questions_state'), ['state'], unique=False)
        batch_op.create_index('uq_parent_questions_one_pending', ['child_session_id'], unique=True, sqlite_where=sa.text("state = 'PENDING'"), postgresql_where=sa.text("state = 'PENDING'"))



def downgrade() -> None:
    with op.batch_alter_table('parent_questions', schema=None) as batch_op:
        batch_op.drop_index('uq_parent_questions_one_pending', sqlite_where=sa.text("state = 'PENDING'"), postgresql_where=sa.text("state = 'PENDING'"))
        batch_op.drop_index(batch_op.f('ix_parent_questions_state'))
        batch_op.drop_index(batch_op.f('ix_parent_questions_parent_task_id'))
        batch_op.drop_index(batch_op.f('ix_parent_questions_child_task_id'))

    op.drop_table('parent_questions')
