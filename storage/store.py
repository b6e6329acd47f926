"""The store of one connection (a unit of work's ``store``): repositories, elements, versions,
relationships, baselines here; the mixins add the other concerns, ``storage.rows`` the mapping."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from domain.model import Baseline, Element, ElementVersion, PointerMove, Relationship
from domain.repository import Repository
from domain.values import RepoRef, SourceKind, new_id
from storage import schema as t
from storage.rows import (
    element_as_stored,
    element_from_row,
    element_row,
    relationship_from_row,
    relationship_row,
    version_as_stored,
    version_from_row,
    version_row,
)
from storage.store_drift import DriftStore
from storage.store_governance import GovernanceStore
from storage.store_index import INDEXED_SOURCE_KINDS, IndexStore
from storage.store_ingest import IngestStore
from storage.store_read import ReadStore
from storage.store_sources import SourceStore

_T = TypeVar("_T")

# The statements every governed write runs, built once with bound parameters: executing a
# prebuilt statement lets SQLAlchemy reuse its cache key and compiled form, where building one
# per call (``.where(col == value)``, ``.values(**row)``) coerces every value into a new bound
# parameter and hashes the whole statement again — about five times the Python per execution.
_e, _v = t.elements.c, t.element_versions.c
_ELEMENT = sa.select(t.elements).where(_e.element_id == sa.bindparam("element_id"))
_VERSION = sa.select(t.element_versions).where(_v.version_id == sa.bindparam("version_id"))
_REPOSITORY = sa.select(t.repositories).where(t.repositories.c.repo_key == sa.bindparam("key"))
_POINTER = sa.select(t.published_pointers).where(
    t.published_pointers.c.repo_key == sa.bindparam("key")
)
_INSERT_ELEMENT = t.elements.insert()
_INSERT_VERSION = t.element_versions.insert()
_INSERT_OUTBOX = t.index_outbox.insert()
_INSERT_RELATIONSHIPS = t.relationships.insert()
_HEAD_SET: dict[str, Any] = {
    "head_version_id": sa.bindparam("new_head"),
    "head_seq": sa.bindparam("new_seq"),
}
_MOVE_HEAD = (
    t.elements.update()
    .where(_e.element_id == sa.bindparam("id"), _e.head_version_id == sa.bindparam("expected"))
    .values(_HEAD_SET)
)
_SET_FIRST_HEAD = (
    t.elements.update()
    .where(_e.element_id == sa.bindparam("id"), _e.head_version_id.is_(None))
    .values(_HEAD_SET)
)
# The same, returning the row they leave (SQLite 3.35+, PostgreSQL): what the store remembers.
_MOVE_HEAD_RETURNING = _MOVE_HEAD.returning(*t.elements.c)
_SET_FIRST_HEAD_RETURNING = _SET_FIRST_HEAD.returning(*t.elements.c)


class _Forgetting:
    """A connection that empties the store's memo before every statement that is not a plain
    SELECT: any write (or raw SQL) may change what a memoized read returned. The few writes of
    the governed path whose effect the store knows go around it (``Store._keep``)."""

    __slots__ = ("_conn", "_memo")

    def __init__(self, conn: Connection, memo: dict[Any, Any]) -> None:
        self._conn = conn
        self._memo = memo

    def execute(self, statement: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(statement, sa.Select) or statement._for_update_arg is not None:
            self._memo.clear()
        return self._conn.execute(statement, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class Store(GovernanceStore, ReadStore, IngestStore, IndexStore, DriftStore, SourceStore):
    """Queries and writes of canonical state; no business rules.

    A few lookups a governed write repeats within its transaction (the caller's grants, the
    repository, an element, a version: the gate, the use case and the response each ask) are
    memoized for the unit of work, until its next write or locking read — reads between two
    writes of one transaction may as well share one answer (optimistic concurrency is enforced
    by the compare-and-swap writes, which are never memoized).

    The writes every governed write makes keep the memo, because the store knows what they
    change: inserting an element or a version remembers the row as inserted (a row this
    transaction just wrote, which no other can change before it commits), a head's
    compare-and-swap remembers the row it returns (or forgets the element when it lost), and
    proposals, decisions, relationships and the outbox are no memoized table. Every other
    write still empties the memo."""

    def __init__(self, conn: Connection) -> None:
        self._memo: dict[Any, Any] = {}
        self.conn = cast(Connection, _Forgetting(conn, self._memo))
        self._keep = conn  # for the writes above, which keep the memo

    def _memoized(self, key: tuple[Any, ...], read: Callable[[], _T]) -> _T:
        if key in self._memo:
            found: _T = self._memo[key]
            return found
        value = self._memo[key] = read()
        return value

    # -- tenancy -------------------------------------------------------------------------
    def ensure_tenant_and_org(self, ref: RepoRef, at: datetime) -> None:
        """Create the tenant and organization rows if missing."""
        if not self.conn.execute(
            sa.select(t.tenants.c.tenant_id).where(t.tenants.c.tenant_id == ref.tenant_id)
        ).first():
            self.conn.execute(t.tenants.insert().values(tenant_id=ref.tenant_id, created_at=at))
        if not self.conn.execute(
            sa.select(t.organizations.c.org_key).where(t.organizations.c.org_key == ref.org_key)
        ).first():
            self.conn.execute(
                t.organizations.insert().values(
                    org_key=ref.org_key,
                    tenant_id=ref.tenant_id,
                    organization_id=ref.organization_id,
                    created_at=at,
                )
            )

    def insert_repository(self, repo: Repository) -> None:
        """Insert a repository and its (empty) published pointer."""
        ref = repo.ref
        self.conn.execute(
            t.repositories.insert().values(
                repo_key=ref.key,
                tenant_id=ref.tenant_id,
                organization_id=ref.organization_id,
                repository_id=ref.repository_id,
                org_key=ref.org_key,
                created_at=repo.created_at,
                created_by=repo.created_by,
                legal_hold=False,
            )
        )
        self.conn.execute(
            t.published_pointers.insert().values(
                repo_key=ref.key, baseline_id=None, revision=0, moved_at=None
            )
        )

    def get_repository(self, key: str) -> Repository | None:
        """A repository by ``tenant/org/repo``."""
        found = self._memoized(("repository", key), lambda: self._read_repository(key))
        return None if found is None else copy.copy(found)

    def _read_repository(self, key: str) -> Repository | None:
        r = self.conn.execute(_REPOSITORY, {"key": key}).first()
        if r is None:
            return None
        ref = RepoRef(r.tenant_id, r.organization_id, r.repository_id)
        return Repository(ref, r.created_at, r.created_by, bool(r.legal_hold))

    def list_repository_keys(self, prefix: str | None = None) -> list[str]:
        """All repository keys, optionally under ``tenant`` or ``tenant/org``."""
        q = sa.select(t.repositories.c.repo_key).order_by(t.repositories.c.repo_key)
        if prefix:
            q = q.where(t.repositories.c.repo_key.startswith(prefix + "/"))
        return [r.repo_key for r in self.conn.execute(q)]

    def set_legal_hold(self, key: str, held: bool, at: datetime, by: str) -> None:
        """Set or release the hold."""
        self.conn.execute(
            t.repositories.update()
            .where(t.repositories.c.repo_key == key)
            .values(legal_hold=held, legal_hold_changed_at=at, legal_hold_changed_by=by)
        )

    # -- elements and versions -----------------------------------------------------------
    def insert_element(self, el: Element, head: ElementVersion | None = None) -> None:
        """Insert an element row, with ``head`` as its head (a new element inserted with its
        first version), else without one (set later by ``move_head``)."""
        self._keep.execute(_INSERT_ELEMENT, element_row(el, head))
        self._memo[("element", el.element_id)] = element_as_stored(el, head)

    def get_element(self, element_id: str, *, for_update: bool = False) -> Element | None:
        """An element by id."""
        if for_update:
            r = self.conn.execute(_ELEMENT.with_for_update(), {"element_id": element_id}).first()
            return element_from_row(r) if r else None

        def read() -> Element | None:
            r = self.conn.execute(_ELEMENT, {"element_id": element_id}).first()
            return element_from_row(r) if r else None

        found = self._memoized(("element", element_id), read)
        return None if found is None else copy.copy(found)  # an Element is mutable

    def move_head(self, element_id: str, expected: str | None, new: ElementVersion) -> bool:
        """Compare-and-swap the head from ``expected`` to ``new``; False when another writer won."""
        params = {"id": element_id, "new_head": new.version_id, "new_seq": new.seq}
        if expected is not None:
            params["expected"] = expected
        key = ("element", element_id)
        if not self._keep.dialect.update_returning:  # an SQLite older than 3.35
            self._memo.pop(key, None)
            cas = _SET_FIRST_HEAD if expected is None else _MOVE_HEAD
            return bool(self._keep.execute(cas, params).rowcount == 1)
        cas = _SET_FIRST_HEAD_RETURNING if expected is None else _MOVE_HEAD_RETURNING
        row = self._keep.execute(cas, params).first()
        if row is None:
            self._memo.pop(key, None)  # another writer moved it: read it again when asked
            return False
        self._memo[key] = element_from_row(row)
        return True

    def enqueue_index(self, element_id: str, version_id: str | None, at: datetime) -> None:
        """Announce index work in this transaction: a version to (re)index or drop, or with
        ``version_id=None`` every version of the element (its retirement changed)."""
        self._keep.execute(
            _INSERT_OUTBOX, {"element_id": element_id, "version_id": version_id, "enqueued_at": at}
        )

    def insert_version(self, v: ElementVersion) -> None:
        """Insert an immutable version and announce it to the index — unless this transaction
        knows its element as one no index holds (a proposal's body, a decision: the index
        upkeep would read the row only to skip it). A source kind never changes, so the
        element this transaction remembers tells it; one it does not remember is announced."""
        self._keep.execute(_INSERT_VERSION, version_row(v))
        self._memo[("version", v.version_id)] = version_as_stored(v)
        el = self._memo.get(("element", v.element_id))
        if el is None or el.source_kind.value in INDEXED_SOURCE_KINDS:
            self.enqueue_index(v.element_id, v.version_id, v.recorded_at)

    def get_version(self, version_id: str) -> ElementVersion | None:
        """A version by id."""

        def read() -> ElementVersion | None:
            r = self.conn.execute(_VERSION, {"version_id": version_id}).first()
            return version_from_row(r) if r else None

        return self._memoized(("version", version_id), read)  # frozen

    def list_versions(self, element_id: str) -> list[ElementVersion]:
        """Every version of an element, oldest first."""
        rows = self.conn.execute(
            sa.select(t.element_versions)
            .where(t.element_versions.c.element_id == element_id)
            .order_by(t.element_versions.c.seq)
        )
        return [version_from_row(r) for r in rows]

    def head_as_of(self, element_id: str, at: datetime) -> ElementVersion | None:
        """The head as recorded at instant ``at`` (history is linear, so: latest seq by then)."""
        v = t.element_versions.c
        r = self.conn.execute(
            sa.select(t.element_versions)
            .where(v.element_id == element_id, v.recorded_at <= at)
            .order_by(v.seq.desc())
            .limit(1)
        ).first()
        return version_from_row(r) if r else None

    def retire_element(self, el: Element) -> None:
        """Persist a retirement; every one is also kept for ``as_of`` reads."""
        assert el.retired_at is not None
        assert el.retired_by is not None
        self.conn.execute(
            t.elements.update()
            .where(t.elements.c.element_id == el.element_id)
            .values(retired_at=el.retired_at, retired_by=el.retired_by)
        )
        self.conn.execute(
            t.element_retirements.insert().values(
                retirement_id=new_id("ret"),
                element_id=el.element_id,
                retired_at=el.retired_at,
                retired_by=el.retired_by,
            )
        )
        self.enqueue_index(el.element_id, None, el.retired_at)

    def reinstate_element(self, element_id: str, at: datetime, by: str) -> None:
        """Persist a reinstatement (a retired element comes back, e.g. a re-added file)."""
        self.conn.execute(
            t.elements.update()
            .where(t.elements.c.element_id == element_id)
            .values(retired_at=None, retired_by=None)
        )
        r = t.element_retirements.c
        self.conn.execute(
            t.element_retirements.update()
            .where(r.element_id == element_id, r.reinstated_at.is_(None))
            .values(reinstated_at=at, reinstated_by=by)
        )
        self.enqueue_index(element_id, None, at)

    def retired_at_instant(self, element_id: str, at: datetime) -> bool:
        """Whether the element was retired at instant ``at``."""
        r = t.element_retirements.c
        row = self.conn.execute(
            sa.select(r.retirement_id).where(
                r.element_id == element_id,
                r.retired_at <= at,
                sa.or_(r.reinstated_at.is_(None), r.reinstated_at > at),
            )
        ).first()
        return row is not None

    def save_erasure(self, v: ElementVersion) -> None:
        """Persist a tombstone (the only in-place change a version ever gets)."""
        self.conn.execute(
            t.element_versions.update()
            .where(t.element_versions.c.version_id == v.version_id)
            .values(
                title=v.title,
                body=v.body,
                metadata=v.metadata,
                erased_at=v.erased_at,
                erased_by=v.erased_by,
                erasure_reason=v.erasure_reason,
            )
        )
        assert v.erased_at is not None
        self.enqueue_index(v.element_id, v.version_id, v.erased_at)

    def canonical_heads(self, repo_key: str) -> dict[str, str]:
        """element_id → head version of every canonical, non-retired element with a head."""
        c = t.elements.c
        rows = self.conn.execute(
            sa.select(c.element_id, c.head_version_id).where(
                c.repo_key == repo_key,
                c.source_kind == SourceKind.CANONICAL.value,
                c.retired_at.is_(None),
                c.head_version_id.is_not(None),
            )
        )
        return {r.element_id: r.head_version_id for r in rows}

    # -- relationships -------------------------------------------------------------------
    def insert_relationships(self, rels: Sequence[Relationship]) -> None:
        """Append many relationships in one statement."""
        if not rels:
            return
        rows = [relationship_row(r) for r in rels]
        self._keep.execute(_INSERT_RELATIONSHIPS, rows[0] if len(rows) == 1 else rows)

    def get_relationship(self, relationship_id: str) -> Relationship | None:
        """A relationship by id."""
        r = self.conn.execute(
            sa.select(t.relationships).where(t.relationships.c.relationship_id == relationship_id)
        ).first()
        return relationship_from_row(r) if r else None

    def retire_relationship(self, relationship_id: str, at: datetime, by: str) -> bool:
        """Mark retired; False when it already was."""
        c = t.relationships.c
        res = self.conn.execute(
            t.relationships.update()
            .where(c.relationship_id == relationship_id, c.retired_at.is_(None))
            .values(retired_at=at, retired_by=by)
        )
        return res.rowcount == 1

    def relationships_of(
        self, element_id: str, as_of: datetime | None = None
    ) -> list[Relationship]:
        """Relationships touching an element, live now or at ``as_of``."""
        c = t.relationships.c
        q = sa.select(t.relationships).where(
            sa.or_(c.source_element_id == element_id, c.target_element_id == element_id)
        )
        if as_of is None:
            q = q.where(c.retired_at.is_(None))
        else:
            q = q.where(
                c.recorded_at <= as_of, sa.or_(c.retired_at.is_(None), c.retired_at > as_of)
            )
        return [relationship_from_row(r) for r in self.conn.execute(q.order_by(c.recorded_at))]

    # -- baselines and the published pointer --------------------------------------------
    def insert_baseline(self, b: Baseline) -> None:
        """Insert a baseline and its pins."""
        self.conn.execute(
            t.baselines.insert().values(
                baseline_id=b.baseline_id,
                repo_key=b.repo_key,
                name=b.name,
                created_at=b.created_at,
                created_by=b.created_by,
                parent_baseline_id=b.parent_baseline_id,
            )
        )
        if b.pins:
            self.conn.execute(
                t.baseline_pins.insert(),
                [
                    {"baseline_id": b.baseline_id, "element_id": e, "version_id": v}
                    for e, v in sorted(b.pins.items())
                ],
            )

    def get_baseline(self, baseline_id: str) -> Baseline | None:
        """A baseline with its pins."""
        r = self.conn.execute(
            sa.select(t.baselines).where(t.baselines.c.baseline_id == baseline_id)
        ).first()
        if r is None:
            return None
        pins = {
            p.element_id: p.version_id
            for p in self.conn.execute(
                sa.select(t.baseline_pins).where(t.baseline_pins.c.baseline_id == baseline_id)
            )
        }
        return Baseline(
            r.baseline_id,
            r.repo_key,
            r.name,
            r.created_at,
            r.created_by,
            pins,
            r.parent_baseline_id,
        )

    def list_baselines(self, repo_key: str) -> list[dict[str, Any]]:
        """Baselines of a repository, newest first (without pins)."""
        c = t.baselines.c
        rows = self.conn.execute(
            sa.select(t.baselines).where(c.repo_key == repo_key).order_by(c.created_at.desc())
        )
        return [dict(r._mapping) for r in rows]

    def get_pointer(self, repo_key: str) -> tuple[str | None, int]:
        """(published baseline id, revision)."""
        r = self.conn.execute(_POINTER, {"key": repo_key}).one()
        return r.baseline_id, r.revision

    def move_pointer(self, repo_key: str, expected_revision: int, to: str, at: datetime) -> bool:
        """Compare-and-swap the pointer on its revision; False when another promotion won."""
        c = t.published_pointers.c
        res = self.conn.execute(
            t.published_pointers.update()
            .where(c.repo_key == repo_key, c.revision == expected_revision)
            .values(baseline_id=to, revision=expected_revision + 1, moved_at=at)
        )
        return res.rowcount == 1

    def insert_move(self, m: PointerMove) -> None:
        """Record a pointer move."""
        self.conn.execute(
            t.pointer_moves.insert().values(
                move_id=m.move_id,
                repo_key=m.repo_key,
                from_baseline_id=m.from_baseline_id,
                to_baseline_id=m.to_baseline_id,
                at=m.at,
                by=m.by,
                reason=m.reason,
            )
        )

    def pointer_as_of(self, repo_key: str, at: datetime) -> str | None:
        """The published baseline at instant ``at`` (None before the first promotion)."""
        c = t.pointer_moves.c
        r = self.conn.execute(
            sa.select(c.to_baseline_id)
            .where(c.repo_key == repo_key, c.at <= at)
            .order_by(c.at.desc(), c.move_id)
            .limit(1)
        ).first()
        return r.to_baseline_id if r else None

    def list_moves(self, repo_key: str) -> list[PointerMove]:
        """Every recorded move, oldest first."""
        c = t.pointer_moves.c
        rows = self.conn.execute(
            sa.select(t.pointer_moves).where(c.repo_key == repo_key).order_by(c.at)
        )
        return [
            PointerMove(
                r.move_id, r.repo_key, r.from_baseline_id, r.to_baseline_id, r.at, r.by, r.reason
            )
            for r in rows
        ]
