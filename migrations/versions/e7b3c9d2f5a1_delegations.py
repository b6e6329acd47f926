"""delegations: who may act for whom, and records that name both actor and subject

A request naming another principal (on-behalf-of) needs a delegation grant; versions and
proposals record whom their writer acted for beside who acted.

Revision ID: e7b3c9d2f5a1
Revises: d4e8f2a6b1c3
Create Date: 2026-11-28 02:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import storage.schema

revision: str = "e7b3c9d2f5a1"
down_revision: str | None = "d4e8f2a6b1c3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "delegations",
        sa.Column("delegation_id", sa.String(length=64), nullable=False),
        sa.Column("principal_id", sa.String(length=140), nullable=False),
        sa.Column("on_behalf_of", sa.String(length=140), nullable=False),
        sa.Column("scope_key", sa.String(length=200), nullable=False),
        sa.Column("created_at", storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=140), nullable=False),
        sa.PrimaryKeyConstraint("delegation_id", name=op.f("pk_delegations")),
        sa.UniqueConstraint(
            "principal_id",
            "on_behalf_of",
            "scope_key",
            name=op.f("uq_delegations_principal_id_on_behalf_of_scope_key"),
        ),
    )
    op.create_index(
        op.f("ix_delegations_principal_id"), "delegations", ["principal_id"], unique=False
    )
    # Plain ADD COLUMN (no batch copy): SQLite keeps the tables' triggers.
    op.add_column(
        "element_versions", sa.Column("on_behalf_of", sa.String(length=140), nullable=True)
    )
    op.add_column(
        "proposals", sa.Column("proposer_on_behalf_of", sa.String(length=140), nullable=True)
    )


def downgrade() -> None:
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.drop_column("proposer_on_behalf_of")
    with op.batch_alter_table("element_versions", schema=None) as batch_op:
        batch_op.drop_column("on_behalf_of")
    op.drop_index(op.f("ix_delegations_principal_id"), table_name="delegations")
    op.drop_table("delegations")
