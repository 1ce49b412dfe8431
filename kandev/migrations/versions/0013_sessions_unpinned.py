"""sessions are no longer pinned to a worker's queue: a turn goes to the worker holding the session's warm
agent while it is idle, else to any free worker (routing lives in Redis, kandev.jobs.dispatch)

Revision ID: 0013_unpinned
Revises: 0012_engine
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0013_unpinned'
down_revision: str | None = '0012_engine'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_column('worker_queue')


def downgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('worker_queue', sa.String(length=200), nullable=True))
