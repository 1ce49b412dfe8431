"""Reviewing a task's changes: review threads and their comments, files marked reviewed, the last measure of a
task's changes (its totals on the task row), and each person's last choice of where a new task works

Revision ID: 0031_review
Revises: 0030_usage_and_budgets
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import kandev.models.base

revision: str = '0031_review'
down_revision: str | None = '0030_usage_and_budgets'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')


def upgrade() -> None:
    op.create_table('task_choices',
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('repositories', JSON, nullable=False),
    sa.Column('executor_profile_id', sa.String(length=36), nullable=True),
    sa.Column('agent_profile_id', sa.String(length=36), nullable=True),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_task_choices_user_id_users'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_task_choices_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('workspace_id', 'user_id', name=op.f('pk_task_choices'))
    )
    op.create_table('review_threads',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('repository_id', sa.String(length=36), nullable=True),
    sa.Column('path', sa.String(length=1000), nullable=True),
    sa.Column('line', sa.Integer(), nullable=True),
    sa.Column('end_line', sa.Integer(), nullable=True),
    sa.Column('side', sa.String(length=3), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('origin', sa.String(length=10), nullable=False),
    sa.Column('anchor_commit', sa.String(length=40), nullable=True),
    sa.Column('anchor_line', sa.Integer(), nullable=True),
    sa.Column('anchor_text', sa.Text(), nullable=False),
    sa.Column('anchor_context', JSON, nullable=False),
    sa.Column('created_by', sa.String(length=200), nullable=False),
    sa.Column('resolved_by', sa.String(length=200), nullable=True),
    sa.Column('resolved_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('sent_in_prompt_id', sa.String(length=36), nullable=True),
    sa.Column('sent_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['repository_id'], ['repositories.id'], name=op.f('fk_review_threads_repository_id_repositories'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_review_threads_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_review_threads'))
    )
    with op.batch_alter_table('review_threads', schema=None) as batch_op:
        batch_op.create_index('ix_review_threads_task_state', ['task_id', 'state'], unique=False)

    op.create_table('reviewed_files',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('repository_id', sa.String(length=36), nullable=False),
    sa.Column('path', sa.String(length=1000), nullable=False),
    sa.Column('diff_key', sa.String(length=64), nullable=False),
    sa.Column('reviewed_by', sa.String(length=200), nullable=False),
    sa.Column('reviewed_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['repository_id'], ['repositories.id'], name=op.f('fk_reviewed_files_repository_id_repositories'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_reviewed_files_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', 'repository_id', 'path', name=op.f('pk_reviewed_files'))
    )
    op.create_table('task_change_stats',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('digest', JSON, nullable=False),
    sa.Column('computed_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_task_change_stats_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', name=op.f('pk_task_change_stats'))
    )
    op.create_table('review_comments',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('thread_id', sa.String(length=36), nullable=False),
    sa.Column('author_kind', sa.String(length=10), nullable=False),
    sa.Column('author_user_id', sa.String(length=36), nullable=True),
    sa.Column('author_login', sa.String(length=100), nullable=True),
    sa.Column('author_session_id', sa.String(length=36), nullable=True),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['thread_id'], ['review_threads.id'], name=op.f('fk_review_comments_thread_id_review_threads'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_review_comments'))
    )
    with op.batch_alter_table('review_comments', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_review_comments_thread_id'), ['thread_id'], unique=False)

    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('change_files', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('change_additions', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('change_deletions', sa.Integer(), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.drop_column('change_deletions')
        batch_op.drop_column('change_additions')
        batch_op.drop_column('change_files')

    with op.batch_alter_table('review_comments', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_review_comments_thread_id'))

    op.drop_table('review_comments')
    op.drop_table('task_change_stats')
    op.drop_table('reviewed_files')
    with op.batch_alter_table('review_threads', schema=None) as batch_op:
        batch_op.drop_index('ix_review_threads_task_state')

    op.drop_table('review_threads')
    op.drop_table('task_choices')
