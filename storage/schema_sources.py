"""Tables of registered sources: what to pull, when, who holds the run, and what each run did.

Kept beside ``storage.schema`` (same ``metadata``) and imported at its end, so every user of the
schema sees them; their migration is ``…_h1_sources``.
"""

from __future__ import annotations

import sqlalchemy as sa

from storage.schema import ID, PRINCIPAL, REPO, TS, _col, metadata

sources = sa.Table(
    "sources",
    metadata,
    # A git repository pulled into ``repo_key`` on a schedule and on webhooks. Credentials and
    # the webhook secret are references only (an environment variable's name or a file's path),
    # never their values.
    _col("source_id", ID, primary_key=True),
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key"), index=True),
    _col("name", sa.String(100)),
    _col("location", sa.String(1000)),  # a URL without credentials, or an absolute path
    _col("ref", sa.String(250)),
    _col("glob", sa.String(500)),
    _col("routing", sa.Text, nullable=True),  # the rule file's YAML text, read at add time
    _col("routing_name", sa.String(500), nullable=True),
    _col("credential_env", sa.String(200), nullable=True),
    _col("credential_file", sa.String(1000), nullable=True),
    _col("hook_secret_env", sa.String(200), nullable=True),
    _col("hook_secret_file", sa.String(1000), nullable=True),
    _col("interval_s", sa.Integer),
    _col("paused", sa.Boolean),
    _col("run_as", PRINCIPAL),
    _col("created_at", TS),
    _col("created_by", PRINCIPAL),
    # the schedule: the next run, consecutive failures (back-off), a webhook's queued run
    _col("next_run_at", TS, nullable=True, index=True),
    _col("failures", sa.Integer),
    _col("queued_at", TS, nullable=True),
    # the database lease: one runner at a time, taken by a compare-and-set UPDATE
    _col("leased_by", sa.String(200), nullable=True),
    _col("lease_until", TS, nullable=True),
    # the webhook's token bucket (per source, shared by every serving process)
    _col("hook_tokens", sa.Float),
    _col("hook_refilled_at", TS, nullable=True),
    sa.UniqueConstraint("repo_key", "name"),
)

source_runs = sa.Table(
    "source_runs",
    metadata,
    _col("run_id", sa.Integer, primary_key=True, autoincrement=True),
    _col("source_id", ID, sa.ForeignKey("sources.source_id", ondelete="CASCADE"), index=True),
    _col("trigger", sa.String(20)),  # schedule | webhook | manual
    _col("runner", sa.String(200)),
    _col("started_at", TS),
    _col("finished_at", TS, nullable=True),
    _col("status", sa.String(20)),  # running | ok | failed
    _col("error", sa.Text, nullable=True),
    _col("report", sa.JSON, nullable=True),
)

source_deliveries = sa.Table(
    "source_deliveries",
    metadata,
    # A webhook delivery id seen once: a redelivery of the same id queues nothing.
    _col(
        "source_id",
        ID,
        sa.ForeignKey("sources.source_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    _col("delivery_id", sa.String(200), primary_key=True),
    _col("received_at", TS),
)
