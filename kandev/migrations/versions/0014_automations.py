"""workspace automations: definitions, their ordered repositories, triggers and runs (a run's dedup key is
unique per automation, so no occurrence fires twice)

Revision ID: 0014_automations
Revises: 0013_unpinned
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import kandev.models.base

revision: str = '0014_automations'
down_revision: str | None = '0013_unpinned'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('automations',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('agent_profile_id', sa.String(length=36), nullable=True),
    sa.Column('executor_profile_id', sa.String(length=36), nullable=True),
    sa.Column('destination', sa.String(length=20), nullable=False),
    sa.Column('workflow_id', sa.String(length=36), nullable=True),
    sa.Column('workflow_step_id', sa.String(length=36), nullable=True),
    sa.Column('prompt', sa.Text(), nullable=False),
    sa.Column('title_template', sa.String(length=500), nullable=False),
    sa.Column('context', sa.String(length=30), nullable=False),
    sa.Column('max_concurrent_runs', sa.Integer(), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('created_via', sa.String(length=10), nullable=False),
    sa.Column('created_by', sa.String(length=200), nullable=False),
    sa.Column('webhook_secret_ciphertext', sa.LargeBinary(), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('deleted_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['agent_profile_id'], ['agent_profiles.id'], name=op.f('fk_automations_agent_profile_id_agent_profiles'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['executor_profile_id'], ['executor_profiles.id'], name=op.f('fk_automations_executor_profile_id_executor_profiles'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workflow_id'], ['workflows.id'], name=op.f('fk_automations_workflow_id_workflows'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workflow_step_id'], ['workflow_steps.id'], name=op.f('fk_automations_workflow_step_id_workflow_steps'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_automations_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_automations'))
    )
    with op.batch_alter_table('automations', schema=None) as batch_op:
        batch_op.create_index('ix_automations_workspace_name', ['workspace_id', 'name'], unique=False)

    op.create_table('automation_repositories',
    sa.Column('automation_id', sa.String(length=36), nullable=False),
    sa.Column('repository_id', sa.String(length=36), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('base_branch', sa.String(length=200), nullable=False),
    sa.ForeignKeyConstraint(['automation_id'], ['automations.id'], name=op.f('fk_automation_repositories_automation_id_automations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['repository_id'], ['repositories.id'], name=op.f('fk_automation_repositories_repository_id_repositories'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('automation_id', 'repository_id', name=op.f('pk_automation_repositories'))
    )
    with op.batch_alter_table('automation_repositories', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_automation_repositories_repository_id'), ['repository_id'], unique=False)

    op.create_table('automation_triggers',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('automation_id', sa.String(length=36), nullable=False),
    sa.Column('type', sa.String(length=30), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('config', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['automation_id'], ['automations.id'], name=op.f('fk_automation_triggers_automation_id_automations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_automation_triggers'))
    )
    with op.batch_alter_table('automation_triggers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_automation_triggers_automation_id'), ['automation_id'], unique=False)

    op.create_table('automation_runs',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('automation_id', sa.String(length=36), nullable=False),
    sa.Column('trigger_id', sa.String(length=36), nullable=True),
    sa.Column('trigger_type', sa.String(length=30), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('dedup_key', sa.String(length=500), nullable=True),
    sa.Column('task_id', sa.String(length=36), nullable=True),
    sa.Column('session_id', sa.String(length=36), nullable=True),
    sa.Column('turn_id', sa.String(length=36), nullable=True),
    sa.Column('title_snapshot', sa.String(length=200), nullable=False),
    sa.Column('trigger_data', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('finished_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('stopped_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['automation_id'], ['automations.id'], name=op.f('fk_automation_runs_automation_id_automations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], name=op.f('fk_automation_runs_session_id_sessions'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_automation_runs_task_id_tasks'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['trigger_id'], ['automation_triggers.id'], name=op.f('fk_automation_runs_trigger_id_automation_triggers'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['turn_id'], ['turns.id'], name=op.f('fk_automation_runs_turn_id_turns'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_automation_runs')),
    sa.UniqueConstraint('automation_id', 'dedup_key', name=op.f('uq_automation_runs_automation_id_dedup_key'))
    )
    with op.batch_alter_table('automation_runs', schema=None) as batch_op:
        batch_op.create_index('ix_automation_runs_automation_created', ['automation_id', 'created_at', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_automation_runs_task_id'), ['task_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('automation_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_automation_runs_task_id'))
        batch_op.drop_index('ix_automation_runs_automation_created')

    op.drop_table('automation_runs')
    with op.batch_alter_table('automation_triggers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_automation_triggers_automation_id'))

    op.drop_table('automation_triggers')
    with op.batch_alter_table('automation_repositories', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_automation_repositories_repository_id'))

    op.drop_table('automation_repositories')
    with op.batch_alter_table('automations', schema=None) as batch_op:
        batch_op.drop_index('ix_automations_workspace_name')

    op.drop_table('automations')
