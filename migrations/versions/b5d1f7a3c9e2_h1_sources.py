"""registered sources: what to pull and when, the lease of a run, its record, webhook deliveries

``ameide source add`` registers a git repository; ``ameide serve`` pulls it on its interval and
on signed webhooks (docs/sources.md). Credentials and webhook secrets are references only.

Revision ID: b5d1f7a3c9e2
Revises: e7b3c9d2f5a1
Create Date: 2026-11-28 10:44:34.113408
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import storage.schema

revision: str = "b5d1f7a3c9e2"
down_revision: str | None = "e7b3c9d2f5a1"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sources",
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("repo_key", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("location", sa.String(length=1000), nullable=False),
        sa.Column("ref", sa.String(length=250), nullable=False),
        sa.Column("glob", sa.String(length=500), nullable=False),
        sa.Column("routing", sa.Text(), nullable=True),
        sa.Column("routing_name", sa.String(length=500), nullable=True),
        sa.Column("credential_env", sa.String(length=200), nullable=True),
        sa.Column("credential_file", sa.String(length=1000), nullable=True),
        sa.Column("hook_secret_env", sa.String(length=200), nullable=True),
        sa.Column("hook_secret_file", sa.String(length=1000), nullable=True),
        sa.Column("interval_s", sa.Integer(), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("run_as", sa.String(length=140), nullable=False),
        sa.Column("created_at", storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=140), nullable=False),
        sa.Column("next_run_at", storage.schema.UTCDateTime(timezone=True), nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("queued_at", storage.schema.UTCDateTime(timezone=True), nullable=True),
        sa.Column("leased_by", sa.String(length=200), nullable=True),
        sa.Column("lease_until", storage.schema.UTCDateTime(timezone=True), nullable=True),
        sa.Column("hook_tokens", sa.Float(), nullable=False),
        sa.Column("hook_refilled_at", storage.schema.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["repo_key"], ["repositories.repo_key"], name=op.f("fk_sources_repo_key_repositories")
        ),
        sa.PrimaryKeyConstraint("source_id", name=op.f("pk_sources")),
        sa.UniqueConstraint("repo_key", "name", name=op.f("uq_sources_repo_key_name")),
    )
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sources_next_run_at"), ["next_run_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_sources_repo_key"), ["repo_key"], unique=False)

    op.create_table(
        "source_deliveries",
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("delivery_id", sa.String(length=200), nullable=False),
        sa.Column("received_at", storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sources.source_id"],
            name=op.f("fk_source_deliveries_source_id_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("source_id", "delivery_id", name=op.f("pk_source_deliveries")),
    )
    op.create_table(
        "source_runs",
        sa.Column("run_id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("trigger", sa.String(length=20), nullable=False),
        sa.Column("runner", sa.String(length=200), nullable=False),
        sa.Column("started_at", storage.schema.UTCDateTime(timezone=True), nullable=False),
        sa.Column("finished_at", storage.schema.UTCDateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("report", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sources.source_id"],
            name=op.f("fk_source_runs_source_id_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_source_runs")),
    )
    with op.batch_alter_table("source_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_source_runs_source_id"), ["source_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("source_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_source_runs_source_id"))

    op.drop_table("source_runs")
    op.drop_table("source_deliveries")
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sources_repo_key"))
        batch_op.drop_index(batch_op.f("ix_sources_next_run_at"))

    op.drop_table("sources")
