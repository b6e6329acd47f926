"""each version keeps the level it was written at when its element is lowered

Revision ID: c1a55f1ed0a2
Revises: c3a9e1f04d27
Create Date: 2026-11-24 19:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c1a55f1ed0a2"
down_revision: str | None = "c3a9e1f04d27"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL: the version follows its element's classification (every existing version).
    with op.batch_alter_table("element_versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("classification", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("element_versions", schema=None) as batch_op:
        batch_op.drop_column("classification")
