"""The store ports: what the service layer asks of storage, one narrow Protocol per concern.

Each Protocol lists exactly the store methods the use cases call, typed with the domain's
records (rows come back as plain mappings where the read side wants rows). ``Store`` combines
them; it is the type of ``UnitOfWork.store``. The SQLAlchemy adapter (``storage.store.Store``)
implements them by shape — ``storage`` imports only the domain — and mypy proves it where the
two meet, in the composition root (``runtime``). Helpers that need one concern take that
concern's port, so a fake for a test implements only what it is asked.

| port | concern | storage module |
|---|---|---|
| ``RepositoryStore`` | tenants, repositories, legal hold | ``store`` |
| ``ElementStore`` | elements, versions, heads, retirement, erasure | ``store`` |
| ``RelationshipStore`` | relationships | ``store`` |
| ``BaselineStore`` | baselines, the published pointer and its moves | ``store`` |
| ``ProposalStore`` | proposals, decisions, idempotency keys | ``store_governance`` |
| ``GrantStore`` / ``TokenStore`` | grants; bearer tokens | ``store_governance`` |
| ``AuditStore`` | audit chains and the access log | ``store_governance`` |
| ``ReadModelStore`` | the read model's set-based selections | ``store_read`` |
| ``ReadContextStore`` | stored read contexts | ``store_read`` |
| ``IngestStore`` | ingest sources, mirrored paths, bulk writes of a run | ``store_ingest`` |
| ``IndexOutboxStore`` | the index outbox, indexable versions, chunk rows | ``store_index`` |
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol

from domain.audit import AuditEvent
from domain.model import (
    Baseline,
    Element,
    ElementVersion,
    PointerMove,
    Proposal,
    ProposalStatus,
    Relationship,
)
from domain.permissions import GrantRecord, TokenRecord
from domain.records import IndexableVersion, MirroredFile
from domain.repository import Repository
from domain.values import Classification, RepoRef

Access = Mapping[str, Sequence[str]]
"""Readable repository key → the classifications readable there (the read side's filter)."""

Row = Mapping[str, Any]
"""A row as the read side gets it: column name → value."""

OutboxRow = tuple[int, str, str | None]
"""An index outbox row: (outbox_id, element_id, version_id or None for the whole element)."""


class RepositoryStore(Protocol):
    """Tenants, organizations and repositories."""

    def ensure_tenant_and_org(self, ref: RepoRef, at: datetime) -> None: ...
    def insert_repository(self, repo: Repository) -> None: ...
    def get_repository(self, key: str) -> Repository | None: ...
    def list_repository_keys(self, prefix: str | None = None) -> list[str]: ...
    def set_legal_hold(self, key: str, held: bool, at: datetime, by: str) -> None: ...


class ElementStore(Protocol):
    """Elements and their immutable versions; heads move by compare-and-swap."""

    def insert_element(self, el: Element, head: ElementVersion | None = None) -> None: ...
    def get_element(self, element_id: str, *, for_update: bool = False) -> Element | None: ...
    def move_head(self, element_id: str, expected: str | None, new: ElementVersion) -> bool: ...
    def insert_version(self, v: ElementVersion) -> None: ...
    def get_version(self, version_id: str) -> ElementVersion | None: ...
    def list_versions(self, element_id: str) -> list[ElementVersion]: ...
    def head_as_of(self, element_id: str, at: datetime) -> ElementVersion | None: ...
    def retire_element(self, el: Element) -> None: ...
    def reinstate_element(self, element_id: str, at: datetime, by: str) -> None: ...
    def retired_at_instant(self, element_id: str, at: datetime) -> bool: ...
    def save_erasure(self, v: ElementVersion) -> None: ...
    def versions_with_content(
        self, repo_key: str, content_sha256: str, *, for_update: bool = False
    ) -> list[ElementVersion]: ...
    def canonical_heads(self, repo_key: str) -> dict[str, str]: ...


class RelationshipStore(Protocol):
    """Typed relationships between elements (recorded, retired, never changed)."""

    def insert_relationships(self, rels: Sequence[Relationship]) -> None: ...
    def get_relationship(self, relationship_id: str) -> Relationship | None: ...
    def retire_relationship(self, relationship_id: str, at: datetime, by: str) -> bool: ...
    def relationships_of(
        self, element_id: str, as_of: datetime | None = None
    ) -> list[Relationship]: ...


class BaselineStore(Protocol):
    """Baselines and the published pointer (moved by compare-and-swap on its revision)."""

    def insert_baseline(self, b: Baseline) -> None: ...
    def get_baseline(self, baseline_id: str) -> Baseline | None: ...
    def list_baselines(self, repo_key: str) -> list[dict[str, Any]]: ...
    def get_pointer(self, repo_key: str) -> tuple[str | None, int]: ...
    def move_pointer(
        self, repo_key: str, expected_revision: int, to: str, at: datetime
    ) -> bool: ...
    def insert_move(self, m: PointerMove) -> None: ...
    def pointer_as_of(self, repo_key: str, at: datetime) -> str | None: ...
    def list_moves(self, repo_key: str) -> list[PointerMove]: ...


class IdempotencyRecord(Protocol):
    """What the service reads of a remembered ``client_request_id``."""

    @property
    def request_fingerprint(self) -> str: ...
    @property
    def proposal_id(self) -> str: ...


class ProposalStore(Protocol):
    """Proposals (saved by compare-and-swap on their status), decisions, idempotency keys."""

    def insert_proposal(self, p: Proposal, create_spec: dict[str, Any] | None = None) -> None: ...
    def get_proposal(self, proposal_id: str) -> Proposal | None: ...
    def get_create_spec(self, proposal_id: str) -> dict[str, Any]: ...
    def save_proposal(self, p: Proposal, expected_status: ProposalStatus) -> bool: ...
    def list_proposals(
        self, repo_key: str, status: ProposalStatus | None = None, proposer: str | None = None
    ) -> list[Proposal]: ...
    def open_proposal_counts(self) -> dict[str, int]: ...
    def proposals_of_elements(self, element_ids: Sequence[str]) -> dict[str, str]: ...
    def insert_decision(self, values: dict[str, Any]) -> None: ...
    def get_idempotency(
        self, repo_key: str, principal: str, key: str
    ) -> IdempotencyRecord | None: ...
    def insert_idempotency(
        self,
        repo_key: str,
        principal: str,
        key: str,
        fingerprint: str,
        proposal_id: str,
        at: datetime,
    ) -> None: ...


class GrantStore(Protocol):
    """Role grants on scopes (the authorization gate's data)."""

    def grants_for(self, principals: list[str]) -> list[GrantRecord]: ...
    def grants_on(self, scope_key: str) -> list[GrantRecord]: ...
    def upsert_grant(self, g: GrantRecord) -> None: ...
    def delete_grant(self, principal: str, role: str, scope_key: str) -> bool: ...


class TokenStore(Protocol):
    """Bearer tokens (only hashes are stored) and the tokens they minted."""

    def insert_token(
        self,
        token_id: str,
        principal: str,
        token_hash: str,
        at: datetime,
        by: str,
        parent_token_id: str | None = None,
    ) -> None: ...
    def token_by_hash(self, token_hash: str) -> TokenRecord | None: ...
    def get_token(self, token_id: str) -> TokenRecord | None: ...
    def list_tokens(self, principal: str | None = None) -> list[TokenRecord]: ...
    def child_token_ids(self, parent_ids: list[str]) -> list[str]: ...
    def revoke_token(self, token_id: str, at: datetime, by: str) -> None: ...


class AuditStore(Protocol):
    """The audit hash chains (written by the unit of work at commit) and the access log."""

    def audit_chain_head(self, chain_key: str) -> tuple[int, str] | None: ...
    def audit_events(
        self,
        chain_key: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        element_id: str | None = None,
        actor: str | None = None,
        limit: int | None = None,
    ) -> list[AuditEvent]: ...
    def access_log(self, repo_key: str, limit: int = 1000) -> list[dict[str, Any]]: ...


class ReadModelStore(Protocol):
    """The read side's queries: selections as version sets, trimmed to ``access`` in SQL."""

    def element_page(
        self, access: Access, after: str | None, limit: int
    ) -> list[dict[str, Any]]: ...
    def selection_stamp(self) -> int: ...
    def latest_versions(
        self, access: Access, source_kind: str, at: datetime | None
    ) -> list[Row]: ...
    def pinned_versions(
        self, baseline_id: str, access: Access, at: datetime | None
    ) -> list[Row]: ...
    def listed_versions(
        self, version_ids: Sequence[str], access: Access, at: datetime | None
    ) -> list[dict[str, Any]]: ...
    def baseline_header(self, baseline_id: str) -> dict[str, Any] | None: ...
    def version_metadata(self, version_ids: Sequence[str]) -> dict[str, dict[str, Any]]: ...
    def version_rows(self, version_ids: Sequence[str]) -> dict[str, dict[str, Any]]: ...
    def neighbours(
        self,
        element_ids: Sequence[str],
        access: Access,
        at: datetime | None,
        type_keys: Sequence[str] = (),
    ) -> list[dict[str, Any]]: ...


class ReadContextStore(Protocol):
    """Stored read_context responses (who asked, for whom, why) and their erasure."""

    def insert_read_context(
        self,
        *,
        context_id: str,
        at: datetime,
        principal_id: str,
        on_behalf_of: str | None,
        purpose: str | None,
        repo_key: str | None,
        request: dict[str, Any],
        response: dict[str, Any],
    ) -> None: ...
    def get_read_context(self, context_id: str) -> dict[str, Any] | None: ...
    def erased_among(
        self, version_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, datetime]: ...
    def contexts_showing(self, repo_key: str, version_ids: Sequence[str]) -> list[str]: ...
    def read_context_responses(self, context_ids: Sequence[str]) -> dict[str, dict[str, Any]]: ...
    def erase_read_context_query(self, context_id: str, marker: str) -> None: ...
    def replace_read_context_response(self, context_id: str, response: dict[str, Any]) -> None: ...


class IngestStore(Protocol):
    """Ingest sources with their last run, mirrored paths, the bulk reads and writes of a run."""

    def get_ingest_source(self, repo_key: str, source_repo: str) -> dict[str, Any] | None: ...
    def list_ingest_sources(self, repo_key: str) -> list[dict[str, Any]]: ...
    def record_ingest_run(
        self,
        repo_key: str,
        source_repo: str,
        *,
        commit: str,
        ref: str,
        at: datetime,
        by: str,
        report: dict[str, Any],
    ) -> int: ...
    def mirrored_files(self, source_repo: str) -> list[MirroredFile]: ...
    def save_ingest_file(
        self,
        repo_key: str,
        source_repo: str,
        path: str,
        element_id: str,
        commit: str,
        *,
        exists: bool = True,
    ) -> None: ...
    def insert_ingest_files(self, rows: Sequence[dict[str, str]]) -> None: ...
    def drop_ingest_file(
        self, repo_key: str, source_repo: str, path: str, element_id: str
    ) -> bool: ...
    def elements_with_head_hash(
        self, element_ids: Iterable[str]
    ) -> dict[str, tuple[Element, str | None]]: ...
    def insert_new_elements(self, created: Sequence[tuple[Element, ElementVersion]]) -> None: ...
    def pin_version_classification(self, element_id: str, level: Classification) -> int: ...
    def set_classification(self, element_id: str, classification: str, at: datetime) -> None: ...
    def head_metadata(self, element_ids: Iterable[str]) -> dict[str, dict[str, Any]]: ...
    def live_relationships_from(
        self, element_ids: Iterable[str], type_key: str
    ) -> dict[str, list[Relationship]]: ...


class IndexOutboxStore(Protocol):
    """The index outbox each derived index consumes, indexable versions, stored chunk rows."""

    def index_work_after(self, position: int, limit: int) -> list[OutboxRow]: ...
    def index_work_in(self, ranges: Sequence[tuple[int, int]]) -> list[OutboxRow]: ...
    def index_work_count(self, position: int, ranges: Sequence[tuple[int, int]] = ()) -> int: ...
    def outbox_ids_between(self, low: int, high: int) -> list[int]: ...
    def oldest_work_enqueued(
        self, position: int, ranges: Sequence[tuple[int, int]] = ()
    ) -> datetime | None: ...

    def max_outbox_id(self) -> int: ...
    def outbox_pruned_through(self) -> int: ...
    def prune_index_outbox(self, enqueued_before: datetime, at: datetime) -> int: ...
    def indexable_versions(
        self, *, version_ids: Sequence[str] = (), element_ids: Sequence[str] = ()
    ) -> list[IndexableVersion]: ...
    def all_indexable_versions(self, batch: int = 500) -> Iterator[IndexableVersion]: ...
    def replace_chunk_rows(
        self, version_ids: Sequence[str], rows: list[dict[str, Any]]
    ) -> None: ...
    def clear_chunk_rows(self) -> None: ...
    def chunk_count(self) -> int: ...
    def indexable_version_count(self) -> int: ...


class Store(
    RepositoryStore,
    ElementStore,
    RelationshipStore,
    BaselineStore,
    ProposalStore,
    GrantStore,
    TokenStore,
    AuditStore,
    ReadModelStore,
    ReadContextStore,
    IngestStore,
    IndexOutboxStore,
    Protocol,
):
    """Everything a unit of work's store offers the service (``UnitOfWork.store``)."""


class OutboxUnitOfWork(Protocol):
    """A transaction as index upkeep (``service.index_ops``) uses it: the outbox and chunk rows
    of its store, and an explicit commit (``service.core.UnitOfWork`` is the full port)."""

    @property
    def store(self) -> IndexOutboxStore: ...
    def __enter__(self) -> OutboxUnitOfWork: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
    def commit(self) -> None: ...
