"""Where a session's agent runs (executor kind, worker, box id: the placement the transcript and cards show) and
the worker capabilities its queued turn waits for while no live worker offers them (pendingAction
WAITING_FOR_WORKER)

Revision ID: 0034_executor_placement
Revises: 0033_ship
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0034_executor_placement'
down_revision: str | None = '0033_ship'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')


def upgrade() -> None:
    with op.batch_alter_table('sessions') as batch:
        batch.add_column(sa.Column('placement', JSON, nullable=True))
        batch.add_column(sa.Column('waiting_for', JSON, nullable=False, server_default='[]'))


def downgrade() -> None:
    with op.batch_alter_table('sessions') as batch:
        batch.drop_column('waiting_for')
        batch.drop_column('placement')
