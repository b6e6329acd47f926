"""Result shapes of the operations ``service.results`` did not type before issue 29: pages of
the queue and of the audit history, checkpoints, the legal-hold status, the bootstrap, the
indexes and health, evaluation and ingest. Like the others: the models the use cases return,
REST's response models and the MCP output schemas; open to fields added later."""

from __future__ import annotations

from typing import Any

from pydantic import Field, RootModel

from service.results import AuditEvent, Proposal, View


class ProposalPage(View):
    proposals: list[Proposal]
    next_cursor: str | None = Field(
        default=None,
        description="With a limit: the proposal to continue after; null on the last page.",
    )


class HistoryPage(View):
    events: list[AuditEvent]
    prev_cursor: int | None = Field(description="Pass as before for older events (else null).")
    next_cursor: int | None = Field(description="Pass as after for newer events (else null).")


class AuditCheckpoint(View):
    repository_id: str | None = Field(description="Null for the global chain.")
    chain: str
    length: int
    head_hash: str
    taken_at: str


class HoldStatus(View):
    repository_id: str
    legal_hold: bool


class AdminBootstrapped(View):
    principal_id: str
    role: str
    scope: str
    created: bool = Field(description="False when the principal already was a global admin.")


class EmbeddingBuild(View):
    pending_before: int
    applied: int


class Health(View):
    """Caller-free readiness (counts only)."""

    ready: bool
    database: str = Field(description="ok, or the driver error's class name.")
    index: dict[str, Any] | None


class OpenProposalCounts(RootModel[dict[str, int]]):
    """OPEN proposals per repository (TENANT/ORG/REPO)."""


class Evaluation(View):
    repository_id: str
    k: int
    selector: str
    queries: int
    pipelines: dict[str, dict[str, float]] = Field(description="Mean metrics per pipeline.")
    per_query: list[dict[str, Any]] | None = None


class IngestReport(View):
    repository: str
    source_repo: str
    ref: str
    glob: str
    from_commit: str | None
    to_commit: str | None
    full_scan: bool
    noop: bool
    counts: dict[str, int]
    skipped: list[dict[str, Any]]
    skipped_by_code: dict[str, int]
    pii: dict[str, Any]
    links: dict[str, int]
    supersedes: dict[str, int]
    front_matter_repaired: int
    versions_written: int
    repositories: list[str]
    files: int
    bytes: int
    notes: list[str]
    duration_s: float
    dry_run: bool | None = None
    timings: dict[str, float] | None = None
    run: int | None = Field(default=None, description="The recorded run's id (absent on a no-op).")


class IngestStatus(View):
    repository: str
    sources: list[dict[str, Any]]


class RoutingExplanation(View):
    path: str
    repository: str | None
    skipped: dict[str, Any] | None
    decision: dict[str, Any] | None
    error: str | None
    summary: str
    rules: list[dict[str, Any]]
    front_matter: dict[str, Any]
    signals: dict[str, Any]
