"""selection stamp: one counter every change to what a read may select advances (by triggers)

A read resolves its selection (published pointer → baseline pins, heads, evidence) from these
tables; a process may keep a resolved selection while the stamp is unchanged. Triggers advance
the stamp in the writing transaction itself, so no write path can forget it. On PostgreSQL they
are deferred constraint triggers: they run at commit, so the stamp row is locked only while a
transaction commits (it holds every other lock it needs by then: no deadlock), and that lock
orders the stamps like the commits.

Revision ID: d4e8f2a6b1c3
Revises: c1a55f1ed0a2
Create Date: 2026-11-26 02:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d4e8f2a6b1c3"
down_revision: str | None = "c1a55f1ed0a2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = (
    "repositories",
    "elements",
    "element_versions",
    "baselines",
    "baseline_pins",
    "published_pointers",
)
EVENTS = ("INSERT", "UPDATE", "DELETE")
_BUMP = "UPDATE selection_stamp SET value = value + 1 WHERE stamp_id = 1"


def upgrade() -> None:
    op.create_table(
        "selection_stamp",
        sa.Column("stamp_id", sa.Integer(), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("stamp_id", name=op.f("pk_selection_stamp")),
    )
    op.execute("INSERT INTO selection_stamp (stamp_id, value) VALUES (1, 0)")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION bump_selection_stamp() RETURNS trigger AS $$ BEGIN "
            f"{_BUMP}; RETURN NULL; END; $$ LANGUAGE plpgsql"
        )
        for table in TABLES:
            op.execute(
                f"CREATE CONSTRAINT TRIGGER {table}_selection_stamp "
                f"AFTER INSERT OR UPDATE OR DELETE ON {table} DEFERRABLE INITIALLY DEFERRED "
                "FOR EACH ROW EXECUTE FUNCTION bump_selection_stamp()"
            )
        return
    for table in TABLES:
        for event in EVENTS:
            op.execute(
                f"CREATE TRIGGER {table}_selection_stamp_{event.lower()} AFTER {event} "
                f"ON {table} BEGIN {_BUMP}; END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in TABLES:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_selection_stamp ON {table}")
        op.execute("DROP FUNCTION IF EXISTS bump_selection_stamp()")
    else:
        for table in TABLES:
            for event in EVENTS:
                op.execute(f"DROP TRIGGER IF EXISTS {table}_selection_stamp_{event.lower()}")
    op.drop_table("selection_stamp")
