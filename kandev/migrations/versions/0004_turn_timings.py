"""turn timings

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
import kandev.models.base

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('timings', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False, server_default=sa.text("'{}'")))



def downgrade() -> None:
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_column('timings')

