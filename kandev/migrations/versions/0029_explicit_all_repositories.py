"""Pull-request conditions saved with no repository evaluated every connected repository; an empty list is now
not evaluated (the spec), so those are stored as the explicit choice `all_repositories` and keep firing. And
an index on an automation's runs by status, which admission counts on every firing and webhook batch

Revision ID: 0029_explicit_all_repositories
Revises: 0028_user_removal
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0029_explicit_all_repositories'
down_revision: str | None = '0028_user_removal'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')
_TRIGGERS = sa.table(
    'automation_triggers', sa.column('id', sa.String), sa.column('type', sa.String), sa.column('config', JSON)
)


def upgrade() -> None:
    op.create_index(
        'ix_automation_runs_automation_status', 'automation_runs', ['automation_id', 'status'], unique=False
    )
    connection = op.get_bind()
    rows = connection.execute(sa.select(_TRIGGERS.c.id, _TRIGGERS.c.config).where(_TRIGGERS.c.type == 'github_pr'))
    for trigger_id, config in rows.all():
        if not (config or {}).get('repositories'):
            changed = {**(config or {}), 'repositories': [], 'all_repositories': True}
            connection.execute(sa.update(_TRIGGERS).where(_TRIGGERS.c.id == trigger_id).values(config=changed))


def downgrade() -> None:
    op.drop_index('ix_automation_runs_automation_status', table_name='automation_runs')
    connection = op.get_bind()
    rows = connection.execute(sa.select(_TRIGGERS.c.id, _TRIGGERS.c.config).where(_TRIGGERS.c.type == 'github_pr'))
    for trigger_id, config in rows.all():
        if (config or {}).get('all_repositories'):
            changed = {k: v for k, v in config.items() if k != 'all_repositories'}
            connection.execute(sa.update(_TRIGGERS).where(_TRIGGERS.c.id == trigger_id).values(config=changed))
