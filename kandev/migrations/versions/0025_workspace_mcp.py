"""Workspace MCP server definitions, their selections at profile, repository, task and session scope, and each
session's desired and applied MCP server revisions

Revision ID: 0025_workspace_mcp
Revises: 0024_contributions
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import kandev.models.base

revision: str = '0025_workspace_mcp'
down_revision: str | None = '0024_contributions'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')


def upgrade() -> None:
    op.create_table('mcp_servers',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('workspace_id', sa.String(length=36), nullable=True),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('url', sa.String(length=2000), nullable=True),
    sa.Column('headers', JSON, nullable=False),
    sa.Column('package', sa.String(length=214), nullable=True),
    sa.Column('version', sa.String(length=100), nullable=True),
    sa.Column('command', sa.String(length=1000), nullable=True),
    sa.Column('args', JSON, nullable=False),
    sa.Column('env', JSON, nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_mcp_servers_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_mcp_servers')),
    sa.UniqueConstraint('workspace_id', 'name', name=op.f('uq_mcp_servers_workspace_id_name'))
    )
    with op.batch_alter_table('mcp_servers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_mcp_servers_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('mcp_server_selections',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('mcp_server_id', sa.String(length=36), nullable=False),
    sa.Column('scope', sa.String(length=20), nullable=False),
    sa.Column('target_id', sa.String(length=36), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['mcp_server_id'], ['mcp_servers.id'], name=op.f('fk_mcp_server_selections_mcp_server_id_mcp_servers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_mcp_server_selections')),
    sa.UniqueConstraint('mcp_server_id', 'scope', 'target_id', name=op.f('uq_mcp_server_selections_mcp_server_id_scope_target_id'))
    )
    with op.batch_alter_table('mcp_server_selections', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_mcp_server_selections_mcp_server_id'), ['mcp_server_id'], unique=False)
        batch_op.create_index('ix_mcp_server_selections_scope_target', ['scope', 'target_id'], unique=False)

    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('mcp_servers_desired', JSON, server_default='[]', nullable=False))
        batch_op.add_column(sa.Column('mcp_servers_desired_revision', sa.Integer(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('mcp_servers_applied', JSON, server_default='[]', nullable=False))
        batch_op.add_column(sa.Column('mcp_servers_applied_revision', sa.Integer(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_column('mcp_servers_applied_revision')
        batch_op.drop_column('mcp_servers_applied')
        batch_op.drop_column('mcp_servers_desired_revision')
        batch_op.drop_column('mcp_servers_desired')

    with op.batch_alter_table('mcp_server_selections', schema=None) as batch_op:
        batch_op.drop_index('ix_mcp_server_selections_scope_target')
        batch_op.drop_index(batch_op.f('ix_mcp_server_selections_mcp_server_id'))
    op.drop_table('mcp_server_selections')

    with op.batch_alter_table('mcp_servers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_mcp_servers_workspace_id'))
    op.drop_table('mcp_servers')
