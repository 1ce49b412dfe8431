"""engine: a turn remembers its step and its signal; the default workflow's In Progress is not gated

Revision ID: 0012_engine
Revises: 0011
Create Date: 2026-12-03
"""

from collections.abc import Sequence
from datetime import timedelta

import sqlalchemy as sa
from alembic import op

import kandev.models.base

revision: str = '0012_engine'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The default Kanban workflow exactly as bootstrapped before this revision.
DEFAULT_NAME = 'Kanban'
DEFAULT_STEP_NAMES = ['Backlog', 'In Progress', 'Review', 'Done']
DEFAULT_IN_PROGRESS_EVENTS = {'on_enter': [{'type': 'auto_start_agent'}], 'on_turn_complete': [{'type': 'move_to_next'}]}
# created_at and updated_at of a bootstrapped step are two separate clock reads, microseconds apart.
UNEDITED = timedelta(seconds=1)


def upgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('step_id', sa.String(length=36), nullable=True))
        batch_op.add_column(sa.Column('signaled_at', kandev.models.base.UTCDateTime(timezone=True), nullable=True))
    _ungate_untouched_default_workflows()


def _ungate_untouched_default_workflows() -> None:
    """The signal requirement is opt-in: In Progress of a default workflow nobody edited stops waiting for it."""
    workflows = sa.table('workflows', sa.column('id', sa.String), sa.column('name', sa.String))
    steps = sa.table(
        'workflow_steps',
        sa.column('id', sa.String),
        sa.column('workflow_id', sa.String),
        sa.column('name', sa.String),
        sa.column('position', sa.Integer),
        sa.column('prompt', sa.Text),
        sa.column('events', kandev.models.base.JSONType),
        sa.column('auto_advance_requires_signal', sa.Boolean),
        sa.column('created_at', kandev.models.base.UTCDateTime()),
        sa.column('updated_at', kandev.models.base.UTCDateTime()),
    )
    conn = op.get_bind()
    ids = conn.execute(sa.select(workflows.c.id).where(workflows.c.name == DEFAULT_NAME)).scalars().all()
    for workflow_id in ids:
        rows = conn.execute(
            sa.select(steps).where(steps.c.workflow_id == workflow_id).order_by(steps.c.position)
        ).all()
        if [r.name for r in rows] != DEFAULT_STEP_NAMES:
            continue
        step = rows[1]
        untouched = (
            step.auto_advance_requires_signal
            and not (step.prompt or '')
            and (step.events or {}) == DEFAULT_IN_PROGRESS_EVENTS
            and step.updated_at - step.created_at < UNEDITED
        )
        if untouched:
            conn.execute(steps.update().where(steps.c.id == step.id).values(auto_advance_requires_signal=False))


def downgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_column('signaled_at')
        batch_op.drop_column('step_id')
