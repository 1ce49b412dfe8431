"""workspace sources

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('task_folders',
    sa.Column('task_id', sa.String(length=36), nullable=False),
    sa.Column('path', sa.String(length=1000), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('created_at', kandev.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_task_folders_task_id_tasks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_id', 'path', name=op.f('pk_task_folders')),
    sa.UniqueConstraint('task_id', 'name', name=op.f('uq_task_folders_task_id_name'))
    )
    with op.batch_alter_table('repositories', schema=None) as batch_op:
        batch_op.add_column(sa.Column('remote_url', sa.String(length=1000), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('repositories', schema=None) as batch_op:
        batch_op.drop_column('remote_url')

    op.drop_table('task_folders')
