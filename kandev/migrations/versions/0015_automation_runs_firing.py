"""automation runs: the occurrence a run fired for, and the note a replaced continuation leaves

Revision ID: 0015_automation_runs_firing
Revises: 0014_automations
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0015_automation_runs_firing'
down_revision: str | None = '0014_automations'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('automation_runs') as batch:
        batch.add_column(sa.Column('occurred_at', kandev.models.base.UTCDateTime(), nullable=True))
        batch.add_column(sa.Column('continuation_note', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('automation_runs') as batch:
        batch.drop_column('continuation_note')
        batch.drop_column('occurred_at')
