"""drift reviews: a curator settled a curated version's drift up to an evidence version

Revision ID: f2a7d3e9c4b1
Revises: b5d1f7a3c9e2
Create Date: 2026-11-28 11:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import storage.schema

revision: str = "f2a7d3e9c4b1"
down_revision: str | None = "b5d1f7a3c9e2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "drift_reviews",
        sa.Column("review_id", sa.String(length=64), nullable=False),
        sa.Column("repo_key", sa.String(length=200), nullable=False),
        sa.Column("curated_element_id", sa.String(length=64), nullable=False),
        sa.Column("curated_version_id", sa.String(length=64), nullable=False),
        sa.Column("evidence_element_id", sa.String(length=64), nullable=False),
        sa.Column("evidence_version_id", sa.String(length=64), nullable=False),
        sa.Column("reviewed_at", storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.Column("reviewed_by", sa.String(length=140), nullable=False),
        sa.Column("on_behalf_of", sa.String(length=140), nullable=True),
        sa.Column("note", sa.String(length=2000), nullable=True),
        sa.ForeignKeyConstraint(
            ["repo_key"],
            ["repositories.repo_key"],
            name=op.f("fk_drift_reviews_repo_key_repositories"),
        ),
        sa.PrimaryKeyConstraint("review_id", name=op.f("pk_drift_reviews")),
        sa.UniqueConstraint(
            "curated_version_id",
            "evidence_element_id",
            "evidence_version_id",
            name=op.f("uq_drift_reviews_reviewed_up_to"),
        ),
    )
    op.create_index(op.f("ix_drift_reviews_repo_key"), "drift_reviews", ["repo_key"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_drift_reviews_repo_key"), table_name="drift_reviews")
    op.drop_table("drift_reviews")
