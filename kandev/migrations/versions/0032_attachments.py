"""Attachments (uploaded files referenced by prompts, stored in the database) and notification channels with
their deliveries

Revision ID: 0032_attachments
Revises: 0031_review
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0032_attachments'
down_revision: str | None = '0031_review'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')


def _when(name: str, nullable: bool = True) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        'attachments',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('owner_id', sa.String(36), sa.ForeignKey('users.id', ondelete='CASCADE'), nullable=False),
        sa.Column('task_id', sa.String(36), sa.ForeignKey('tasks.id', ondelete='CASCADE'), nullable=True),
        sa.Column('waiting', sa.Integer(), nullable=True),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('content_type', sa.String(100), nullable=False),
        sa.Column('size', sa.BigInteger(), nullable=False),
        sa.Column('sha256', sa.String(64), nullable=False),
        sa.Column('data', sa.LargeBinary(), nullable=False),
        _when('created_at', nullable=False),
        _when('bound_at'),
    )
    op.create_index('ix_attachments_owner_id', 'attachments', ['owner_id'])
    op.create_index('ix_attachments_task_id', 'attachments', ['task_id'])
    op.create_table(
        'prompt_attachments',
        sa.Column(
            'prompt_id', sa.String(36), sa.ForeignKey('queued_prompts.id', ondelete='CASCADE'), primary_key=True
        ),
        sa.Column(
            'attachment_id', sa.String(36), sa.ForeignKey('attachments.id', ondelete='CASCADE'), primary_key=True
        ),
        sa.Column('position', sa.Integer(), nullable=False),
    )
    op.create_index('ix_prompt_attachments_attachment_id', 'prompt_attachments', ['attachment_id'])
    op.create_table(
        'notification_channels',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('workspace_id', sa.String(36), sa.ForeignKey('workspaces.id', ondelete='CASCADE'), nullable=False),
        sa.Column('name', sa.String(200), nullable=False),
        sa.Column('url_ciphertext', sa.LargeBinary(), nullable=False),
        sa.Column('service', sa.String(40), nullable=False),
        sa.Column('target', sa.String(300), nullable=False),
        sa.Column('events', JSON, nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('trusted', sa.Boolean(), nullable=False),
        sa.Column('created_by', sa.String(36), sa.ForeignKey('users.id', ondelete='SET NULL'), nullable=True),
        _when('last_attempt_at'),
        _when('last_delivered_at'),
        sa.Column('last_error', sa.String(500), nullable=True),
        sa.Column('last_duration_ms', sa.Integer(), nullable=True),
        _when('created_at', nullable=False),
        _when('updated_at', nullable=False),
    )
    op.create_index('ix_notification_channels_workspace_id', 'notification_channels', ['workspace_id'])
    op.create_table(
        'notification_deliveries',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column(
            'channel_id', sa.String(36), sa.ForeignKey('notification_channels.id', ondelete='CASCADE'), nullable=False
        ),
        sa.Column('event_key', sa.String(120), nullable=False),
        sa.Column('event', sa.String(20), nullable=False),
        sa.Column('task_id', sa.String(36), sa.ForeignKey('tasks.id', ondelete='CASCADE'), nullable=True),
        sa.Column('title', sa.String(300), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('state', sa.String(20), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        _when('next_attempt_at', nullable=False),
        sa.Column('last_error', sa.String(500), nullable=True),
        _when('created_at', nullable=False),
        _when('delivered_at'),
        sa.UniqueConstraint('channel_id', 'event_key', name='uq_notification_deliveries_channel_id_event_key'),
    )
    for column in ('channel_id', 'task_id', 'state', 'next_attempt_at'):
        op.create_index(f'ix_notification_deliveries_{column}', 'notification_deliveries', [column])


def downgrade() -> None:
    op.drop_table('notification_deliveries')
    op.drop_table('notification_channels')
    op.drop_table('prompt_attachments')
    op.drop_table('attachments')
