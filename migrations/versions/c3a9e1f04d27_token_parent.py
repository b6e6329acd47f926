"""tokens record the token that minted them (revocation reaches the subtree)

Revision ID: c3a9e1f04d27
Revises: 7de5bb2b9453
Create Date: 2026-11-24 19:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c3a9e1f04d27"
down_revision: str | None = "7de5bb2b9453"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_token_id", sa.String(length=64), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_tokens_parent_token_id"), ["parent_token_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tokens_parent_token_id"))
        batch_op.drop_column("parent_token_id")
