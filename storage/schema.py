"""Tables of the canonical store (SQLAlchemy Core)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = sa.MetaData(naming_convention=NAMING)


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every dialect (SQLite stores them naive, in UTC)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


TS = UTCDateTime
ID = sa.String(64)
PRINCIPAL = sa.String(140)
REPO = sa.String(200)


def _col(name: str, type_: Any, *args: Any, **kw: Any) -> sa.Column[Any]:
    kw.setdefault("nullable", False)
    return sa.Column(name, type_, *args, **kw)


tenants = sa.Table(
    "tenants",
    metadata,
    _col("tenant_id", sa.String(64), primary_key=True),
    _col("created_at", TS),
)

organizations = sa.Table(
    "organizations",
    metadata,
    _col("org_key", sa.String(130), primary_key=True),
    _col("tenant_id", sa.String(64), sa.ForeignKey("tenants.tenant_id")),
    _col("organization_id", sa.String(64)),
    _col("created_at", TS),
)

repositories = sa.Table(
    "repositories",
    metadata,
    _col("repo_key", REPO, primary_key=True),
    _col("tenant_id", sa.String(64)),
    _col("organization_id", sa.String(64)),
    _col("repository_id", sa.String(64)),
    _col("org_key", sa.String(130), sa.ForeignKey("organizations.org_key"), index=True),
    _col("created_at", TS),
    _col("created_by", PRINCIPAL),
    _col("legal_hold", sa.Boolean),
    _col("legal_hold_changed_at", TS, nullable=True),
    _col("legal_hold_changed_by", PRINCIPAL, nullable=True),
)

elements = sa.Table(
    "elements",
    metadata,
    _col("element_id", ID, primary_key=True),
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key")),
    _col("element_kind", sa.String(32)),
    _col("type_key", sa.String(120)),
    _col("source_kind", sa.String(32)),
    _col("classification", sa.String(16)),
    _col("created_at", TS),
    _col("created_by", PRINCIPAL),
    # No foreign key: the head moves by compare-and-swap before the new version row is written.
    _col("head_version_id", ID, nullable=True),
    _col("head_seq", sa.Integer),
    _col("retired_at", TS, nullable=True),
    _col("retired_by", PRINCIPAL, nullable=True),
    sa.Index(None, "repo_key", "source_kind"),
)

element_versions = sa.Table(
    "element_versions",
    metadata,
    _col("version_id", ID, primary_key=True),
    _col("element_id", ID, sa.ForeignKey("elements.element_id")),
    _col("seq", sa.Integer),
    _col("parent_version_id", ID, nullable=True),
    _col("title", sa.String(300)),
    _col("body", sa.Text),
    _col("metadata", sa.JSON),
    _col("content_sha256", sa.String(64)),
    _col("recorded_at", TS),
    _col("actor_type", sa.String(16)),
    _col("actor_id", PRINCIPAL),
    _col("tool_id", sa.String(120), nullable=True),
    # Whom the writer acted for (NULL: for itself); a delegation grant allowed it.
    _col("on_behalf_of", PRINCIPAL, nullable=True),
    _col("source_repo", sa.String(500), nullable=True),
    _col("commit_sha", sa.String(64), nullable=True),
    _col("path", sa.String(1000), nullable=True),
    _col("erased_at", TS, nullable=True),
    _col("erased_by", PRINCIPAL, nullable=True),
    _col("erasure_reason", sa.String(2000), nullable=True),
    # The level the version was written at when above its element's current one (NULL: follow
    # the element): lowering an element never lowers what was written before.
    _col("classification", sa.String(16), nullable=True),
    sa.UniqueConstraint("element_id", "seq"),
    sa.Index(None, "element_id", "recorded_at"),
)

relationships = sa.Table(
    "relationships",
    metadata,
    _col("relationship_id", ID, primary_key=True),
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key")),
    _col("relationship_kind", sa.String(16)),
    _col("type_key", sa.String(120)),
    _col("source_element_id", ID, sa.ForeignKey("elements.element_id"), index=True),
    _col("target_element_id", ID, sa.ForeignKey("elements.element_id"), index=True),
    _col("metadata", sa.JSON),
    _col("recorded_at", TS),
    _col("recorded_by", PRINCIPAL),
    _col("retired_at", TS, nullable=True),
    _col("retired_by", PRINCIPAL, nullable=True),
)

baselines = sa.Table(
    "baselines",
    metadata,
    _col("baseline_id", ID, primary_key=True),
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key"), index=True),
    _col("name", sa.String(200)),
    _col("created_at", TS),
    _col("created_by", PRINCIPAL),
    _col("parent_baseline_id", ID, nullable=True),
)

baseline_pins = sa.Table(
    "baseline_pins",
    metadata,
    _col("baseline_id", ID, sa.ForeignKey("baselines.baseline_id"), primary_key=True),
    _col("element_id", ID, sa.ForeignKey("elements.element_id"), primary_key=True),
    _col("version_id", ID, sa.ForeignKey("element_versions.version_id")),
)

published_pointers = sa.Table(
    "published_pointers",
    metadata,
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key"), primary_key=True),
    _col("baseline_id", ID, sa.ForeignKey("baselines.baseline_id"), nullable=True),
    _col("revision", sa.Integer),
    _col("moved_at", TS, nullable=True),
)

pointer_moves = sa.Table(
    "pointer_moves",
    metadata,
    _col("move_id", ID, primary_key=True),
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key")),
    _col("from_baseline_id", ID, nullable=True),
    _col("to_baseline_id", ID, sa.ForeignKey("baselines.baseline_id")),
    _col("at", TS),
    _col("by", PRINCIPAL),
    _col("reason", sa.String(2000)),
    sa.Index(None, "repo_key", "at"),
)

proposals = sa.Table(
    "proposals",
    metadata,
    _col("proposal_id", ID, primary_key=True),
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key")),
    _col("element_id", ID, sa.ForeignKey("elements.element_id")),
    _col("status", sa.String(16)),
    _col("change_kind", sa.String(16)),
    _col("summary", sa.String(2000)),
    _col("target_element_id", ID, nullable=True, index=True),
    _col("target_version_id", ID, nullable=True),
    _col("selector_kind", sa.String(16)),
    _col("selector_baseline_id", ID, nullable=True),
    _col("proposer_actor_type", sa.String(16)),
    _col("proposer_actor_id", PRINCIPAL),
    _col("proposer_tool_id", sa.String(120), nullable=True),
    # Whom the proposer acted for (NULL: for itself): the proposal's owner when set.
    _col("proposer_on_behalf_of", PRINCIPAL, nullable=True),
    _col("has_conflicts", sa.Boolean),
    _col("client_request_id", sa.String(200), nullable=True),
    _col("rebased_from", ID, nullable=True),
    _col("rebased_to", ID, nullable=True),
    _col("result_version_id", ID, nullable=True),
    _col("create_spec", sa.JSON, nullable=True),
    _col("created_at", TS),
    _col("decided_at", TS, nullable=True),
    _col("decided_by", PRINCIPAL, nullable=True),
    sa.Index(None, "repo_key", "status"),
)

decisions = sa.Table(
    "decisions",
    metadata,
    _col("decision_id", ID, primary_key=True),
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key")),
    _col("element_id", ID, sa.ForeignKey("elements.element_id")),
    _col("kind", sa.String(16)),
    _col("proposal_id", ID, nullable=True),
    _col("baseline_id", ID, nullable=True),
    _col("actor", PRINCIPAL),
    _col("on_behalf_of", PRINCIPAL, nullable=True),
    _col("rationale", sa.Text),
    _col("at", TS),
    sa.Index(None, "proposal_id"),
)

grants = sa.Table(
    "grants",
    metadata,
    _col("grant_id", ID, primary_key=True),
    _col("principal_id", PRINCIPAL, index=True),
    _col("role", sa.String(16)),
    _col("scope_key", REPO),
    _col("clearance", sa.String(16)),
    _col("created_at", TS),
    _col("created_by", PRINCIPAL),
    sa.UniqueConstraint("principal_id", "role", "scope_key"),
)

delegations = sa.Table(
    "delegations",
    metadata,
    _col("delegation_id", ID, primary_key=True),
    _col("principal_id", PRINCIPAL, index=True),
    # A principal, a kind's pattern (``user:*``) or ``*``.
    _col("on_behalf_of", PRINCIPAL),
    _col("scope_key", REPO),
    _col("created_at", TS),
    _col("created_by", PRINCIPAL),
    sa.UniqueConstraint("principal_id", "on_behalf_of", "scope_key"),
)

tokens = sa.Table(
    "tokens",
    metadata,
    _col("token_id", ID, primary_key=True),
    _col("principal_id", PRINCIPAL),
    _col("token_hash", sa.String(64), unique=True),
    _col("created_at", TS),
    _col("created_by", PRINCIPAL),
    _col("revoked_at", TS, nullable=True),
    _col("revoked_by", PRINCIPAL, nullable=True),
    # The token that minted this one (None: minted without a token, e.g. from the CLI);
    # revoking a token revokes its whole subtree.
    _col("parent_token_id", ID, nullable=True, index=True),
)

idempotency_keys = sa.Table(
    "idempotency_keys",
    metadata,
    _col("repo_key", REPO, primary_key=True),
    _col("principal_id", PRINCIPAL, primary_key=True),
    _col("client_request_id", sa.String(200), primary_key=True),
    _col("request_fingerprint", sa.String(64)),
    _col("proposal_id", ID),
    _col("created_at", TS),
)

audit_chain_heads = sa.Table(
    "audit_chain_heads",
    metadata,
    _col("chain_key", REPO, primary_key=True),
    _col("last_seq", sa.Integer),
    _col("last_hash", sa.String(64)),
)

audit_events = sa.Table(
    "audit_events",
    metadata,
    _col("event_id", sa.Integer, primary_key=True, autoincrement=True),
    _col("chain_key", REPO),
    _col("chain_seq", sa.Integer),
    _col("prev_hash", sa.String(64)),
    _col("hash", sa.String(64)),
    _col("event_type", sa.String(64)),
    _col("occurred_at", TS),
    _col("actor", PRINCIPAL),
    _col("on_behalf_of", PRINCIPAL, nullable=True),
    _col("purpose", sa.String(500), nullable=True),
    _col("element_id", ID, nullable=True, index=True),
    _col("version_id", ID, nullable=True),
    _col("proposal_id", ID, nullable=True),
    _col("baseline_id", ID, nullable=True),
    _col("payload", sa.JSON),
    sa.UniqueConstraint("chain_key", "chain_seq"),
    sa.Index(None, "chain_key", "occurred_at"),
    sa.Index(None, "actor"),
)

access_log = sa.Table(
    "access_log",
    metadata,
    _col("access_id", sa.Integer, primary_key=True, autoincrement=True),
    _col("at", TS),
    _col("principal_id", PRINCIPAL),
    _col("on_behalf_of", PRINCIPAL, nullable=True),
    _col("purpose", sa.String(500), nullable=True),
    _col("operation", sa.String(64)),
    _col("repo_key", REPO, nullable=True, index=True),
    _col("subject", sa.JSON),
)

# -- derived read side (rebuildable) and its outbox ------------------------------------------

chunks = sa.Table(
    "chunks",
    metadata,
    _col("chunk_id", sa.String(300), primary_key=True),
    _col("version_id", ID, sa.ForeignKey("element_versions.version_id"), index=True),
    _col("element_id", ID),
    _col("ordinal", sa.Integer),
    _col("chunk_key", sa.String(220)),
    _col("heading_path", sa.Text),
    _col("start", sa.Integer),
    _col("end", sa.Integer),
)

index_outbox = sa.Table(
    "index_outbox",
    metadata,
    # Written in the same transaction as the change it announces. Every keyword index (one per
    # index directory; several may share the database) is a consumer with its own position in
    # the outbox, so rows stay until they are older than the retention period and are pruned.
    _col("outbox_id", sa.Integer, primary_key=True, autoincrement=True),
    _col("element_id", ID, index=True),
    _col("version_id", ID, nullable=True),
    _col("enqueued_at", TS, index=True),
)

index_outbox_pruned = sa.Table(
    "index_outbox_pruned",
    metadata,
    # Outbox rows up to the largest ``pruned_through`` are gone: an index whose position is
    # below it missed work it can no longer read, so it must be rebuilt from the database.
    _col("pruned_through", sa.Integer, primary_key=True, autoincrement=False),
    _col("pruned_at", TS),
)

selection_stamp = sa.Table(
    "selection_stamp",
    metadata,
    # One row, advanced by triggers (see its migration) on every change to the tables a read's
    # selection comes from: a cached selection is good while the stamp is unchanged.
    _col("stamp_id", sa.Integer, primary_key=True, autoincrement=False),
    _col("value", sa.BigInteger),
)

read_contexts = sa.Table(
    "read_contexts",
    metadata,
    _col("context_id", ID, primary_key=True),
    _col("at", TS),
    _col("principal_id", PRINCIPAL),
    _col("on_behalf_of", PRINCIPAL, nullable=True),
    _col("purpose", sa.String(500), nullable=True),
    _col("repo_key", REPO, nullable=True, index=True),
    _col("request", sa.JSON),
    _col("response", sa.JSON),
)

element_retirements = sa.Table(
    "element_retirements",
    metadata,
    # Every retirement and reinstatement, so "was it retired at T?" has an answer for any T.
    _col("retirement_id", ID, primary_key=True),
    _col("element_id", ID, sa.ForeignKey("elements.element_id"), index=True),
    _col("retired_at", TS),
    _col("retired_by", PRINCIPAL),
    _col("reinstated_at", TS, nullable=True),
    _col("reinstated_by", PRINCIPAL, nullable=True),
)

# -- ingest ---------------------------------------------------------------------------------

ingest_sources = sa.Table(
    "ingest_sources",
    metadata,
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key"), primary_key=True),
    _col("source_repo", sa.String(500), primary_key=True),
    _col("last_commit", sa.String(64), nullable=True),
    _col("last_ref", sa.String(250), nullable=True),
    _col("last_run_at", TS, nullable=True),
    _col("last_run_by", PRINCIPAL, nullable=True),
    _col("last_report", sa.JSON, nullable=True),
    _col("run_count", sa.Integer),
)

ingest_files = sa.Table(
    "ingest_files",
    metadata,
    # Where each mirrored file lives now, so renames and deletions find their element.
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key"), primary_key=True),
    _col("source_repo", sa.String(500), primary_key=True),
    _col("path", sa.String(1000), primary_key=True),
    _col("element_id", ID, sa.ForeignKey("elements.element_id"), index=True),
    _col("commit_sha", sa.String(64)),
)

# -- drift ----------------------------------------------------------------------------------

drift_reviews = sa.Table(
    "drift_reviews",
    metadata,
    # A curator looked at a curated version citing evidence that moved, up to an evidence
    # version: the drift is settled until the evidence moves again (docs/drift.md).
    _col("review_id", ID, primary_key=True),
    _col("repo_key", REPO, sa.ForeignKey("repositories.repo_key"), index=True),
    _col("curated_element_id", ID),
    _col("curated_version_id", ID),
    _col("evidence_element_id", ID),
    _col("evidence_version_id", ID),
    _col("reviewed_at", TS),
    _col("reviewed_by", PRINCIPAL),
    _col("on_behalf_of", PRINCIPAL, nullable=True),
    _col("note", sa.String(2000), nullable=True),
    sa.UniqueConstraint(
        "curated_version_id",
        "evidence_element_id",
        "evidence_version_id",
        name="uq_drift_reviews_reviewed_up_to",
    ),
)
# The registered sources' tables (same metadata), defined in their own module.
from storage import schema_sources as _schema_sources  # noqa: E402, F401
