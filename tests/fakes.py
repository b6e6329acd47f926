"""In-memory fakes of the store ports (``service.ports``) for fast service tests without a database.

``FakeStore`` implements the write side's core concerns — repositories, grants, elements and
versions, relationships, baselines and the published pointer, proposals — with the semantics
the SQL store has (compare-and-swap heads, pointers and proposal statuses; copies out, so an
object changed by a use case is stored only when the use case saves it), and the read side —
the read model's selections and the stored read contexts — through its mixin
``tests.fakes_read.FakeReadStore``. Of the index concerns it keeps only the chunk rows (an
erasure clears them). The other concerns (ingest, the index outbox's reads, tokens, audit
reads) raise ``NotImplementedError`` naming the method: a test that reaches one says what to
add.

``FakeDatabase`` keeps the committed state; each ``FakeUnitOfWork`` works on a copy that its
commit publishes, and leaving without commit drops it (the rollback default). mypy checks the
fakes against the ports (``FakeStore`` against every method it implements, ``FakeUnitOfWork``
against ``service.core.UnitOfWork``) — see the end of this module; ``FakeReadStore`` is checked
against ``ReadModelStore`` and ``ReadContextStore`` in full at the end of its own module, and
``tests/integration/test_fake_read_store_contract.py`` compares its rows with the SQL store's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from domain.audit import AuditEvent
from domain.errors import Conflict
from domain.model import (
    Baseline,
    Element,
    ElementVersion,
    PointerMove,
    Proposal,
    ProposalStatus,
    Relationship,
)
from domain.permissions import DelegationRecord, GrantRecord
from domain.repository import Repository
from domain.values import RepoRef, SourceKind
from tests.fakes_read import FakeReadStore


@dataclass(frozen=True)
class FakeIdempotency:
    """A remembered ``client_request_id`` (``service.ports.IdempotencyRecord``)."""

    request_fingerprint: str
    proposal_id: str
    created_at: datetime


@dataclass
class FakeState:
    """The canonical tables, as plain collections."""

    repositories: dict[str, Repository] = field(default_factory=dict)
    pointers: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    moves: list[PointerMove] = field(default_factory=list)
    grants: list[GrantRecord] = field(default_factory=list)
    delegations: list[DelegationRecord] = field(default_factory=list)
    elements: dict[str, Element] = field(default_factory=dict)
    versions: dict[str, ElementVersion] = field(default_factory=dict)
    retirements: list[tuple[str, datetime, datetime | None]] = field(default_factory=list)
    relationships: dict[str, Relationship] = field(default_factory=dict)
    baselines: dict[str, Baseline] = field(default_factory=dict)
    proposals: dict[str, Proposal] = field(default_factory=dict)
    create_specs: dict[str, dict[str, Any]] = field(default_factory=dict)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    idempotency: dict[tuple[str, str, str], FakeIdempotency] = field(default_factory=dict)
    index_outbox: list[tuple[str, str | None, datetime]] = field(default_factory=list)
    read_contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    chunks: dict[str, dict[str, Any]] = field(default_factory=dict)  # chunk_id → chunk row


class FakeStore(FakeReadStore):
    """The store ports over a ``FakeState`` (one unit of work's working copy)."""

    def __init__(self, state: FakeState, before_cas: Callable[[FakeState, str], None] | None):
        self.state = state
        self._before_cas = before_cas  # a test's "concurrent writer", run before each CAS
        # (of a head: with the element id; of the published pointer: with the repository key)

    def __getattr__(self, name: str) -> Any:
        raise NotImplementedError(f"FakeStore.{name} is not implemented (see tests/fakes.py)")

    # -- RepositoryStore -------------------------------------------------------------------
    def ensure_tenant_and_org(self, ref: RepoRef, at: datetime) -> None:
        """Tenants and organizations are implied by repository keys here."""

    def insert_repository(self, repo: Repository) -> None:
        if repo.key in self.state.repositories:
            raise Conflict("a concurrent change won; re-read and retry")
        self.state.repositories[repo.key] = copy.copy(repo)
        self.state.pointers[repo.key] = (None, 0)

    def get_repository(self, key: str) -> Repository | None:
        found = self.state.repositories.get(key)
        return copy.copy(found) if found else None

    def list_repository_keys(self, prefix: str | None = None) -> list[str]:
        keys = sorted(self.state.repositories)
        return [k for k in keys if not prefix or k.startswith(prefix + "/")]

    def set_legal_hold(self, key: str, held: bool, at: datetime, by: str) -> None:
        self.state.repositories[key].legal_hold = held

    # -- GrantStore ------------------------------------------------------------------------
    def grants_for(self, principals: list[str]) -> list[GrantRecord]:
        return [g for g in self.state.grants if g.principal_id in principals]

    def grants_on(self, scope_key: str) -> list[GrantRecord]:
        found = [g for g in self.state.grants if g.scope_key == scope_key]
        return sorted(found, key=lambda g: (g.principal_id, g.role))

    def upsert_grant(self, g: GrantRecord) -> None:
        same = (g.principal_id, g.role, g.scope_key)
        for i, old in enumerate(self.state.grants):
            if (old.principal_id, old.role, old.scope_key) == same:
                self.state.grants[i] = replace(old, clearance=g.clearance)
                return
        self.state.grants.append(g)

    def delete_grant(self, principal: str, role: str, scope_key: str) -> bool:
        before = len(self.state.grants)
        self.state.grants = [
            g
            for g in self.state.grants
            if (g.principal_id, g.role, g.scope_key) != (principal, role, scope_key)
        ]
        return len(self.state.grants) < before

    def delegations_of(self, principal: str) -> list[DelegationRecord]:
        return [d for d in self.state.delegations if d.principal_id == principal]

    def delegations_on(self, scope_key: str) -> list[DelegationRecord]:
        found = [d for d in self.state.delegations if d.scope_key == scope_key]
        return sorted(found, key=lambda d: (d.principal_id, d.on_behalf_of))

    def insert_delegation(self, d: DelegationRecord) -> bool:
        same = (d.principal_id, d.on_behalf_of, d.scope_key)
        if any(
            (o.principal_id, o.on_behalf_of, o.scope_key) == same for o in self.state.delegations
        ):
            return False
        self.state.delegations.append(d)
        return True

    def delete_delegation(self, principal: str, on_behalf_of: str, scope_key: str) -> bool:
        before = len(self.state.delegations)
        self.state.delegations = [
            d
            for d in self.state.delegations
            if (d.principal_id, d.on_behalf_of, d.scope_key) != (principal, on_behalf_of, scope_key)
        ]
        return len(self.state.delegations) < before

    # -- ElementStore ----------------------------------------------------------------------
    def insert_element(self, el: Element, head: ElementVersion | None = None) -> None:
        self.state.elements[el.element_id] = replace(
            el, head_version_id=head.version_id if head else None, head_seq=head.seq if head else 0
        )

    def get_element(self, element_id: str, *, for_update: bool = False) -> Element | None:
        found = self.state.elements.get(element_id)
        return replace(found) if found else None

    def move_head(self, element_id: str, expected: str | None, new: ElementVersion) -> bool:
        if self._before_cas is not None:
            self._before_cas(self.state, element_id)
        el = self.state.elements[element_id]
        if el.head_version_id != expected:
            return False
        el.head_version_id, el.head_seq = new.version_id, new.seq
        return True

    def insert_version(self, v: ElementVersion) -> None:
        if v.version_id in self.state.versions:
            raise Conflict("a concurrent change won; re-read and retry")
        self.state.versions[v.version_id] = v
        self.state.index_outbox.append((v.element_id, v.version_id, v.recorded_at))

    def get_version(self, version_id: str) -> ElementVersion | None:
        return self.state.versions.get(version_id)

    def list_versions(self, element_id: str) -> list[ElementVersion]:
        mine = [v for v in self.state.versions.values() if v.element_id == element_id]
        return sorted(mine, key=lambda v: v.seq)

    def head_as_of(self, element_id: str, at: datetime) -> ElementVersion | None:
        then = [v for v in self.list_versions(element_id) if v.recorded_at <= at]
        return then[-1] if then else None

    def retire_element(self, el: Element) -> None:
        assert el.retired_at is not None
        stored = self.state.elements[el.element_id]
        stored.retired_at, stored.retired_by = el.retired_at, el.retired_by
        self.state.retirements.append((el.element_id, el.retired_at, None))
        self.state.index_outbox.append((el.element_id, None, el.retired_at))

    def reinstate_element(self, element_id: str, at: datetime, by: str) -> None:
        stored = self.state.elements[element_id]
        stored.retired_at, stored.retired_by = None, None
        self.state.retirements = [
            (e, since, at if e == element_id and until is None else until)
            for e, since, until in self.state.retirements
        ]
        self.state.index_outbox.append((element_id, None, at))

    def retired_at_instant(self, element_id: str, at: datetime) -> bool:
        return any(
            e == element_id and since <= at and (until is None or until > at)
            for e, since, until in self.state.retirements
        )

    def save_erasure(self, v: ElementVersion) -> None:
        assert v.erased_at is not None
        self.state.versions[v.version_id] = v
        self.state.index_outbox.append((v.element_id, v.version_id, v.erased_at))

    def versions_with_content(
        self, repo_key: str, content_sha256: str, *, for_update: bool = False
    ) -> list[ElementVersion]:
        found = [
            v
            for v in self.state.versions.values()
            if v.content_sha256 == content_sha256
            and self.state.elements[v.element_id].repo_key == repo_key
        ]
        return sorted(found, key=lambda v: (v.recorded_at, v.version_id))

    def canonical_heads(self, repo_key: str) -> dict[str, str]:
        return {
            el.element_id: el.head_version_id
            for el in self.state.elements.values()
            if el.repo_key == repo_key
            and el.source_kind is SourceKind.CANONICAL
            and not el.retired
            and el.head_version_id is not None
        }

    # -- RelationshipStore -----------------------------------------------------------------
    def insert_relationships(self, rels: Sequence[Relationship]) -> None:
        for r in rels:
            self.state.relationships[r.relationship_id] = r

    def get_relationship(self, relationship_id: str) -> Relationship | None:
        return self.state.relationships.get(relationship_id)

    def retire_relationship(self, relationship_id: str, at: datetime, by: str) -> bool:
        r = self.state.relationships[relationship_id]
        if r.retired_at is not None:
            return False
        self.state.relationships[relationship_id] = replace(r, retired_at=at, retired_by=by)
        return True

    def relationships_of(
        self, element_id: str, as_of: datetime | None = None
    ) -> list[Relationship]:
        def live(r: Relationship) -> bool:
            if as_of is None:
                return r.retired_at is None
            return r.recorded_at <= as_of and (r.retired_at is None or r.retired_at > as_of)

        touching = [
            r
            for r in self.state.relationships.values()
            if element_id in (r.source_element_id, r.target_element_id) and live(r)
        ]
        return sorted(touching, key=lambda r: r.recorded_at)

    # -- BaselineStore ---------------------------------------------------------------------
    def insert_baseline(self, b: Baseline) -> None:
        self.state.baselines[b.baseline_id] = b

    def get_baseline(self, baseline_id: str) -> Baseline | None:
        return self.state.baselines.get(baseline_id)

    def list_baselines(self, repo_key: str) -> list[dict[str, Any]]:
        mine = [b for b in self.state.baselines.values() if b.repo_key == repo_key]
        return [
            {
                "baseline_id": b.baseline_id,
                "repo_key": b.repo_key,
                "name": b.name,
                "created_at": b.created_at,
                "created_by": b.created_by,
                "parent_baseline_id": b.parent_baseline_id,
            }
            for b in sorted(mine, key=lambda b: b.created_at, reverse=True)
        ]

    def get_pointer(self, repo_key: str) -> tuple[str | None, int]:
        return self.state.pointers[repo_key]

    def move_pointer(self, repo_key: str, expected_revision: int, to: str, at: datetime) -> bool:
        if self._before_cas is not None:
            self._before_cas(self.state, repo_key)
        if self.state.pointers[repo_key][1] != expected_revision:
            return False
        self.state.pointers[repo_key] = (to, expected_revision + 1)
        return True

    def insert_move(self, m: PointerMove) -> None:
        self.state.moves.append(m)

    def pointer_as_of(self, repo_key: str, at: datetime) -> str | None:
        then = [m for m in self.list_moves(repo_key) if m.at <= at]
        return then[-1].to_baseline_id if then else None

    def list_moves(self, repo_key: str) -> list[PointerMove]:
        return sorted((m for m in self.state.moves if m.repo_key == repo_key), key=lambda m: m.at)

    # -- ProposalStore ---------------------------------------------------------------------
    def insert_proposal(self, p: Proposal, create_spec: dict[str, Any] | None = None) -> None:
        self.state.proposals[p.proposal_id] = replace(p)
        self.state.create_specs[p.proposal_id] = dict(create_spec or {})

    def get_proposal(self, proposal_id: str) -> Proposal | None:
        found = self.state.proposals.get(proposal_id)
        return replace(found) if found else None

    def get_create_spec(self, proposal_id: str) -> dict[str, Any]:
        return dict(self.state.create_specs[proposal_id])

    def save_proposal(self, p: Proposal, expected_status: ProposalStatus) -> bool:
        if self.state.proposals[p.proposal_id].status is not expected_status:
            return False
        self.state.proposals[p.proposal_id] = replace(p)
        return True

    def list_proposals(
        self, repo_key: str, status: ProposalStatus | None = None, proposer: str | None = None
    ) -> list[Proposal]:
        return [
            replace(p)
            for p in sorted(self.state.proposals.values(), key=lambda p: p.created_at)
            if p.repo_key == repo_key
            and (status is None or p.status is status)
            and (proposer is None or p.proposed_by.actor_id == proposer)
        ]

    def open_proposal_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for p in self.state.proposals.values():
            if p.status is ProposalStatus.OPEN:
                counts[p.repo_key] = counts.get(p.repo_key, 0) + 1
        return counts

    def proposals_of_elements(self, element_ids: Sequence[str]) -> dict[str, str]:
        wanted = set(element_ids)
        return {
            p.element_id: p.proposal_id
            for p in self.state.proposals.values()
            if p.element_id in wanted
        }

    def insert_decision(self, values: dict[str, Any]) -> None:
        self.state.decisions.append(dict(values))

    def get_idempotency(self, repo_key: str, principal: str, key: str) -> FakeIdempotency | None:
        return self.state.idempotency.get((repo_key, principal, key))

    def insert_idempotency(
        self,
        repo_key: str,
        principal: str,
        key: str,
        fingerprint: str,
        proposal_id: str,
        at: datetime,
    ) -> None:
        if (repo_key, principal, key) in self.state.idempotency:
            raise Conflict("a concurrent change won; re-read and retry")
        self.state.idempotency[(repo_key, principal, key)] = FakeIdempotency(
            fingerprint, proposal_id, at
        )

    # -- IndexOutboxStore (the chunk rows only) --------------------------------------------
    def replace_chunk_rows(self, version_ids: Sequence[str], rows: list[dict[str, Any]]) -> None:
        keep, of = {r["chunk_id"] for r in rows}, set(version_ids)
        self.state.chunks = {
            k: c for k, c in self.state.chunks.items() if c["version_id"] not in of or k in keep
        }
        self.state.chunks.update((r["chunk_id"], dict(r)) for r in rows)


class FakeDatabase:
    """The committed state, the audit events and access-log entries of committed units."""

    def __init__(self) -> None:
        self.state = FakeState()
        self.events: list[AuditEvent] = []
        self.access: list[tuple[Any, ...]] = []
        self.before_cas: Callable[[FakeState, str], None] | None = None
        self.commits = 0

    def uow(self, readonly: bool = False) -> FakeUnitOfWork:
        """A unit of work (the service's ``uow_factory``)."""
        return FakeUnitOfWork(self, readonly=readonly)


class FakeUnitOfWork:
    """A transaction over a copy of the committed state; ``commit`` publishes the copy."""

    def __init__(self, db: FakeDatabase, *, readonly: bool = False) -> None:
        self._db = db
        self._readonly = readonly
        self._store: FakeStore | None = None
        self.events: list[AuditEvent] = []
        self.after_commit: list[Callable[[], None]] = []
        self._access: list[tuple[Any, ...]] = []

    @property
    def store(self) -> FakeStore:
        """The working copy's store (only inside ``with``)."""
        assert self._store is not None, "use the unit of work in a with block"
        return self._store

    def __enter__(self) -> FakeUnitOfWork:
        self._store = FakeStore(copy.deepcopy(self._db.state), self._db.before_cas)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._store = None  # uncommitted work is dropped

    def record(self, event: AuditEvent) -> None:
        self.events.append(event)

    def log_access(self, *entry: Any) -> None:
        self._access.append(entry)

    def commit(self) -> None:
        if not self._readonly:
            self._db.state = self.store.state
        self._db.events += self.events
        self._db.access += self._access
        self._db.commits += 1
        for hook in self.after_commit:
            hook()


if TYPE_CHECKING:
    from service import ports
    from service.core import UnitOfWork

    # mypy checks the fakes against the ports, like runtime/ checks the SQLAlchemy adapter.
    _STORE: type[ports.Store] = FakeStore
    _UOW: type[UnitOfWork] = FakeUnitOfWork
