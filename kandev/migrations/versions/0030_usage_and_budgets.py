"""Usage per turn (tokens, cost, context) and budgets of tasks and automations

Revision ID: 0030_usage_and_budgets
Revises: 0029_explicit_all_repositories
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from kandev.models.base import UTCDateTime

revision: str = '0030_usage_and_budgets'
down_revision: str | None = '0029_explicit_all_repositories'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'turn_usage',
        sa.Column('turn_id', sa.String(length=36), nullable=False),
        sa.Column('session_id', sa.String(length=36), nullable=False),
        sa.Column('task_id', sa.String(length=36), nullable=False),
        sa.Column('workspace_id', sa.String(length=36), nullable=False),
        sa.Column('automation_id', sa.String(length=36), nullable=True),
        sa.Column('agent_profile_id', sa.String(length=36), nullable=True),
        sa.Column('agent_name', sa.String(length=200), nullable=False),
        sa.Column('model', sa.String(length=200), nullable=True),
        sa.Column('input_tokens', sa.BigInteger(), nullable=False),
        sa.Column('output_tokens', sa.BigInteger(), nullable=False),
        sa.Column('cache_read_tokens', sa.BigInteger(), nullable=False),
        sa.Column('cache_write_tokens', sa.BigInteger(), nullable=False),
        sa.Column('cost_usd', sa.Float(), nullable=True),
        sa.Column('context_used', sa.BigInteger(), nullable=True),
        sa.Column('context_size', sa.BigInteger(), nullable=True),
        sa.Column('clamped', sa.Boolean(), nullable=False),
        sa.Column('clamp_note', sa.Text(), nullable=True),
        sa.Column('recorded_at', UTCDateTime(), nullable=False),
        sa.Column('updated_at', UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['turn_id'], ['turns.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('turn_id'),
    )
    op.create_index('ix_turn_usage_session_id', 'turn_usage', ['session_id'], unique=False)
    op.create_index('ix_turn_usage_task_id', 'turn_usage', ['task_id'], unique=False)
    op.create_index('ix_turn_usage_workspace_recorded', 'turn_usage', ['workspace_id', 'recorded_at'], unique=False)
    op.create_index('ix_turn_usage_automation', 'turn_usage', ['automation_id', 'recorded_at'], unique=False)
    op.create_table(
        'budgets',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('workspace_id', sa.String(length=36), nullable=False),
        sa.Column('subject_kind', sa.String(length=20), nullable=False),
        sa.Column('subject_id', sa.String(length=36), nullable=False),
        sa.Column('period', sa.String(length=10), nullable=False),
        sa.Column('limit_tokens', sa.BigInteger(), nullable=True),
        sa.Column('limit_usd', sa.Float(), nullable=True),
        sa.Column('revision', sa.Integer(), nullable=False),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.Column('updated_at', UTCDateTime(), nullable=False),
        sa.Column('reached_at', UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('subject_kind', 'subject_id'),
    )
    op.create_index('ix_budgets_workspace_id', 'budgets', ['workspace_id'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_budgets_workspace_id', table_name='budgets')
    op.drop_table('budgets')
    op.drop_index('ix_turn_usage_automation', table_name='turn_usage')
    op.drop_index('ix_turn_usage_workspace_recorded', table_name='turn_usage')
    op.drop_index('ix_turn_usage_task_id', table_name='turn_usage')
    op.drop_index('ix_turn_usage_session_id', table_name='turn_usage')
    op.drop_table('turn_usage')
