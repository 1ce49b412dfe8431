"""initial schema

Revision ID: 0001
Revises: 
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
import kandev.models.base

revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('users',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('login', sa.String(length=100), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('login', name=op.f('uq_users_login'))
    )
    op.create_table('access_tokens',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('token_hash', sa.String(length=128), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_used_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_access_tokens_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_access_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_access_tokens_token_hash'))
    )
    with op.batch_alter_table('access_tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_access_tokens_user_id'), ['user_id'], unique=False)

    op.create_table('workspaces',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('owner_id', sa.String(length=36), nullable=False),
    sa.Column('default_workflow_id', sa.String(length=36), nullable=True),
    sa.Column('default_agent_profile_id', sa.String(length=36), nullable=True),
    sa.Column('default_executor_profile_id', sa.String(length=36), nullable=True),
    sa.Column('settings', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['owner_id'], ['users.id'], name=op.f('fk_workspaces_owner_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_workspaces'))
    )
    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_workspaces_owner_id'), ['owner_id'], unique=False)

    op.create_table('agent_profiles',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('command', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('env', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('supports_mcp', sa.Boolean(), nullable=False),
    sa.Column('permission_policy', sa.String(length=10), nullable=False),
    sa.Column('builtin', sa.Boolean(), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_agent_profiles_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_agent_profiles')),
    sa.UniqueConstraint('workspace_id', 'name', name=op.f('uq_agent_profiles_workspace_id_name'))
    )
    with op.batch_alter_table('agent_profiles', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_agent_profiles_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('executor_profiles',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('config', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('builtin', sa.Boolean(), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_executor_profiles_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_executor_profiles')),
    sa.UniqueConstraint('workspace_id', 'name', name=op.f('uq_executor_profiles_workspace_id_name'))
    )
    with op.batch_alter_table('executor_profiles', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_executor_profiles_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('repositories',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('path', sa.String(length=1000), nullable=False),
    sa.Column('default_branch', sa.String(length=200), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_repositories_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_repositories')),
    sa.UniqueConstraint('workspace_id', 'name', name=op.f('uq_repositories_workspace_id_name'))
    )
    with op.batch_alter_table('repositories', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_repositories_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('secrets',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('ciphertext', sa.LargeBinary(), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_secrets_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_secrets')),
    sa.UniqueConstraint('workspace_id', 'name', name=op.f('uq_secrets_workspace_id_name'))
    )
    with op.batch_alter_table('secrets', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_secrets_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('workflows',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_workflows_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_workflows'))
    )
    with op.batch_alter_table('workflows', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_workflows_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('workflow_steps',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workflow_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('is_start_step', sa.Boolean(), nullable=False),
    sa.Column('is_final_step', sa.Boolean(), nullable=False),
    sa.Column('prompt', sa.Text(), nullable=False),
    sa.Column('events', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('auto_advance_requires_signal', sa.Boolean(), nullable=False),
    sa.Column('allow_manual_move', sa.Boolean(), nullable=False),
    sa.Column('wip_limit', sa.Integer(), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workflow_id'], ['workflows.id'], name=op.f('fk_workflow_steps_workflow_id_workflows'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_workflow_steps'))
    )
    with op.batch_alter_table('workflow_steps', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_workflow_steps_workflow_id'), ['workflow_id'], unique=False)

    op.create_table('tasks',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=False),
    sa.Column('workflow_id', sa.String(length=36), nullable=False),
    sa.Column('workflow_step_id', sa.String(length=36), nullable=False),
    sa.Column('parent_id', sa.String(length=36), nullable=True),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('prompt', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=30), nullable=False),
    sa.Column('autopilot', sa.Boolean(), nullable=False),
    sa.Column('origin', sa.String(length=30), nullable=False),
    sa.Column('external_id', sa.String(length=500), nullable=True),
    sa.Column('agent_profile_id', sa.String(length=36), nullable=True),
    sa.Column('executor_profile_id', sa.String(length=36), nullable=True),
    sa.Column('deferred_launch', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=True),
    sa.Column('block_reason', sa.Text(), nullable=True),
    sa.Column('created_by', sa.String(length=36), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('archived_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('deleted_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['agent_profile_id'], ['agent_profiles.id'], name=op.f('fk_tasks_agent_profile_id_agent_profiles'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['executor_profile_id'], ['executor_profiles.id'], name=op.f('fk_tasks_executor_profile_id_executor_profiles'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['parent_id'], ['tasks.id'], name=op.f('fk_tasks_parent_id_tasks'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workflow_id'], ['workflows.id'], name=op.f('fk_tasks_workflow_id_workflows'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['workflow_step_id'], ['workflow_steps.id'], name=op.f('fk_tasks_workflow_step_id_workflow_steps'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_tasks_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tasks'))
    )
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_tasks_parent_id'), ['parent_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_tasks_workflow_id'), ['workflow_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_tasks_workflow_step_id'), ['workflow_step_id'], unique=False)
        batch_op.create_index('ix_tasks_workspace_created', ['workspace_id', 'created_at', 'id'], unique=False)
        batch_op.create_index('uq_tasks_workspace_external_id', ['workspace_id', 'external_id'], unique=True, sqlite_where=sa.text('external_id IS NOT NULL AND deleted_at IS NULL'), postgresql_where=sa.text('external_id IS NOT NULL AND deleted_at IS NULL'))

    op.create_table('sessions',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('agent_profile_id', sa.String(length=36), nullable=True),
    sa.Column('executor_profile_id', sa.String(length=36), nullable=True),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('is_primary', sa.Boolean(), nullable=False),
    sa.Column('purpose', sa.String(length=40), nullable=False),
    sa.Column('state', sa.String(length=30), nullable=False),
    sa.Column('working_dir', sa.String(length=1000), nullable=True),
    sa.Column('worker_queue', sa.String(length=200), nullable=True),
    sa.Column('acp_session_id', sa.String(length=200), nullable=True),
    sa.Column('mcp_profile', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('mcp_profile_revision', sa.Integer(), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('ended_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['agent_profile_id'], ['agent_profiles.id'], name=op.f('fk_sessions_agent_profile_id_agent_profiles'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['executor_profile_id'], ['executor_profiles.id'], name=op.f('fk_sessions_executor_profile_id_executor_profiles'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_sessions_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sessions'))
    )
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_sessions_task_id'), ['task_id'], unique=False)

    op.create_table('step_transitions',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('from_step_id', sa.String(length=36), nullable=True),
    sa.Column('to_step_id', sa.String(length=36), nullable=False),
    sa.Column('trigger', sa.String(length=40), nullable=False),
    sa.Column('actor', sa.String(length=200), nullable=False),
    sa.Column('details', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_step_transitions_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_step_transitions'))
    )
    with op.batch_alter_table('step_transitions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_step_transitions_task_id'), ['task_id'], unique=False)

    op.create_table('task_dependencies',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('blocked_by_id', sa.String(length=36), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['blocked_by_id'], ['tasks.id'], name=op.f('fk_task_dependencies_blocked_by_id_tasks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_task_dependencies_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', 'blocked_by_id', name=op.f('pk_task_dependencies'))
    )
    with op.batch_alter_table('task_dependencies', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_task_dependencies_blocked_by_id'), ['blocked_by_id'], unique=False)

    op.create_table('messages',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('session_id', sa.String(length=36), nullable=False),
    sa.Column('turn_id', sa.String(length=36), nullable=True),
    sa.Column('seq', sa.BigInteger(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('data', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], name=op.f('fk_messages_session_id_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_messages')),
    sa.UniqueConstraint('session_id', 'seq', name=op.f('uq_messages_session_id_seq'))
    )
    with op.batch_alter_table('messages', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_messages_session_id'), ['session_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_messages_turn_id'), ['turn_id'], unique=False)

    op.create_table('queued_prompts',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('session_id', sa.String(length=36), nullable=False),
    sa.Column('seq', sa.BigInteger(), nullable=False),
    sa.Column('idempotency_key', sa.String(length=300), nullable=False),
    sa.Column('source', sa.String(length=40), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=20), nullable=False),
    sa.Column('reply_to_question_id', sa.String(length=36), nullable=True),
    sa.Column('sender', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('turn_id', sa.String(length=36), nullable=True),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('claimed_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], name=op.f('fk_queued_prompts_session_id_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_queued_prompts')),
    sa.UniqueConstraint('idempotency_key', name=op.f('uq_queued_prompts_idempotency_key')),
    sa.UniqueConstraint('session_id', 'seq', name=op.f('uq_queued_prompts_session_id_seq'))
    )
    with op.batch_alter_table('queued_prompts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_queued_prompts_session_id'), ['session_id'], unique=False)

    op.create_table('turns',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('session_id', sa.String(length=36), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('prompt_id', sa.String(length=36), nullable=True),
    sa.Column('state', sa.String(length=20), nullable=False),
    sa.Column('stop_reason', sa.String(length=40), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('worker_name', sa.String(length=200), nullable=True),
    sa.Column('lease_expires_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('started_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('ended_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], name=op.f('fk_turns_session_id_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_turns')),
    sa.UniqueConstraint('session_id', 'seq', name=op.f('uq_turns_session_id_seq'))
    )
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_turns_session_id'), ['session_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_turns_session_id'))

    op.drop_table('turns')
    with op.batch_alter_table('queued_prompts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_queued_prompts_session_id'))

    op.drop_table('queued_prompts')
    with op.batch_alter_table('messages', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_messages_turn_id'))
        batch_op.drop_index(batch_op.f('ix_messages_session_id'))

    op.drop_table('messages')
    with op.batch_alter_table('task_dependencies', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_task_dependencies_blocked_by_id'))

    op.drop_table('task_dependencies')
    with op.batch_alter_table('step_transitions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_step_transitions_task_id'))

    op.drop_table('step_transitions')
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_sessions_task_id'))

    op.drop_table('sessions')
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.drop_index('uq_tasks_workspace_external_id', sqlite_where=sa.text('external_id IS NOT NULL AND deleted_at IS NULL'), postgresql_where=sa.text('external_id IS NOT NULL AND deleted_at IS NULL'))
        batch_op.drop_index('ix_tasks_workspace_created')
        batch_op.drop_index(batch_op.f('ix_tasks_workflow_step_id'))
        batch_op.drop_index(batch_op.f('ix_tasks_workflow_id'))
        batch_op.drop_index(batch_op.f('ix_tasks_parent_id'))

    op.drop_table('tasks')
    with op.batch_alter_table('workflow_steps', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_workflow_steps_workflow_id'))

    op.drop_table('workflow_steps')
    with op.batch_alter_table('workflows', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_workflows_workspace_id'))

    op.drop_table('workflows')
    with op.batch_alter_table('secrets', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_secrets_workspace_id'))

    op.drop_table('secrets')
    with op.batch_alter_table('repositories', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_repositories_workspace_id'))

    op.drop_table('repositories')
    with op.batch_alter_table('executor_profiles', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_executor_profiles_workspace_id'))

    op.drop_table('executor_profiles')
    with op.batch_alter_table('agent_profiles', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_agent_profiles_workspace_id'))

    op.drop_table('agent_profiles')
    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_workspaces_owner_id'))

    op.drop_table('workspaces')
    with op.batch_alter_table('access_tokens', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_access_tokens_user_id'))

    op.drop_table('access_tokens')
    op.drop_table('users')
