"""schedules: a scheduled trigger's next fire, kept on save and advanced by the scheduler as it claims fires

Existing schedules get theirs when a scheduler starts (kandev.domain.automations.scheduling.backfill).

Revision ID: 0017_schedules
Revises: 0016_github
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0017_schedules'
down_revision: str | None = '0016_github'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('automation_triggers') as batch:
        batch.add_column(sa.Column('next_fire_at', kandev.models.base.UTCDateTime(), nullable=True))
        batch.create_index(batch.f('ix_automation_triggers_next_fire_at'), ['next_fire_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('automation_triggers') as batch:
        batch.drop_index(batch.f('ix_automation_triggers_next_fire_at'))
        batch.drop_column('next_fire_at')
