"""The read model's queries: selections as version sets, candidate rows, neighbours, contexts.

Written for the read path: each selector resolves in one or two set-based statements (never one
query per element), permission trimming (repository × readable classifications) is part of the
``WHERE`` clause, and every statement answers "as of" an instant when given one — versions by
``recorded_at``, retirements from ``element_retirements``, relationships by their recorded and
retired instants. Rows come back as plain dicts; the service maps them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from domain.values import SourceKind
from storage import schema as t

Access = Mapping[str, Sequence[str]]
"""Readable repository key → the classifications readable there."""

READABLE_KINDS = (SourceKind.CANONICAL.value, SourceKind.INGESTED_EVIDENCE.value)
_IN_BATCH = 900
_LIKE_BATCH = 50
_E = t.elements.c
_V = t.element_versions.c


def _readable(access: Access) -> ColumnElement[bool]:
    """Elements the caller may read: in a readable repository, within its clearance."""
    allowed = [
        sa.and_(_E.repo_key == repo, _E.classification.in_(list(levels)))
        for repo, levels in sorted(access.items())
        if levels
    ]
    return sa.or_(*allowed) if allowed else sa.false()


def _version_readable(access: Access) -> ColumnElement[bool]:
    """Versions written at a level above their element's current one (kept when the element was
    lowered) only for callers cleared for that level too."""
    allowed = [
        sa.and_(_E.repo_key == repo, _V.classification.in_(list(levels)))
        for repo, levels in sorted(access.items())
        if levels
    ]
    return sa.or_(_V.classification.is_(None), *allowed)


def _retired(at: datetime | None) -> ColumnElement[bool]:
    """Whether the element was retired at ``at`` (now when None)."""
    if at is None:
        return _E.retired_at.is_not(None)
    r = t.element_retirements.c
    return sa.exists().where(
        r.element_id == _E.element_id,
        r.retired_at <= at,
        sa.or_(r.reinstated_at.is_(None), r.reinstated_at > at),
    )


def _live_at(at: datetime | None) -> ColumnElement[bool]:
    """Relationships live at ``at`` (now, when ``None``): recorded by then, not retired by then."""
    r = t.relationships.c
    if at is None:
        return r.retired_at.is_(None)
    return sa.and_(r.recorded_at <= at, sa.or_(r.retired_at.is_(None), r.retired_at > at))


_SELECTED = (
    *(_V.version_id, _V.element_id, _E.repo_key, _E.source_kind, _E.classification),
    _V.classification.label("version_classification"),
)


def _batches(values: Sequence[str]) -> Iterator[list[str]]:
    ordered = sorted(set(values))
    for start in range(0, len(ordered), _IN_BATCH):
        yield ordered[start : start + _IN_BATCH]


class ReadStore:
    """Mixin of ``Store``: the queries behind read_context and the stored read contexts."""

    conn: Connection

    # -- selections ------------------------------------------------------------------------
    def element_page(self, access: Access, after: str | None, limit: int) -> list[dict[str, Any]]:
        """Readable canonical and evidence elements in ``element_id`` order after ``after``, at
        most ``limit``, each with its head version's title (trimmed to ``access`` in SQL, so a
        page is always full when more readable elements exist)."""
        q = (
            sa.select(
                _E.element_id,
                _E.repo_key,
                _E.element_kind,
                _E.type_key,
                _E.source_kind,
                _E.classification,
                _E.head_version_id,
                _E.retired_at,
                _V.title,
            )
            .select_from(t.elements.join(t.element_versions, _V.version_id == _E.head_version_id))
            .where(
                _readable(access),
                _version_readable(access),
                _E.source_kind.in_(READABLE_KINDS),
            )
            .order_by(_E.element_id)
            .limit(limit)
        )
        if after is not None:
            q = q.where(_E.element_id > after)
        return [dict(r._mapping) for r in self.conn.execute(q)]

    def selection_stamp(self) -> int:
        """The selection stamp: triggers advance it on every change to the tables a read's
        selection comes from (see ``storage.schema.selection_stamp``)."""
        c = t.selection_stamp.c
        return int(self.conn.execute(sa.select(c.value).where(c.stamp_id == 1)).scalar_one())

    def latest_versions(
        self, access: Access, source_kind: str, at: datetime | None
    ) -> list[Mapping[Any, Any]]:
        """The latest version (as of ``at``) of every readable, non-retired element of a kind."""
        if at is None:
            q = (
                sa.select(*_SELECTED, sa.false().label("retired"))
                .select_from(
                    t.elements.join(t.element_versions, _V.version_id == _E.head_version_id)
                )
                .where(_readable(access), _E.source_kind == source_kind, _E.retired_at.is_(None))
                .where(_version_readable(access))
            )
            return [r._mapping for r in self.conn.execute(q)]  # read-only rows, no copies
        latest = (
            sa.select(_V.element_id, sa.func.max(_V.seq).label("seq"))
            .select_from(t.element_versions.join(t.elements, _E.element_id == _V.element_id))
            .where(_readable(access), _E.source_kind == source_kind, _V.recorded_at <= at)
            .group_by(_V.element_id)
            .subquery()
        )
        q = (
            sa.select(*_SELECTED, sa.false().label("retired"))
            .select_from(
                t.element_versions.join(
                    latest, sa.and_(latest.c.element_id == _V.element_id, latest.c.seq == _V.seq)
                ).join(t.elements, _E.element_id == _V.element_id)
            )
            .where(~_retired(at), _version_readable(access))
        )
        return [r._mapping for r in self.conn.execute(q)]  # read-only rows, no copies

    def pinned_versions(
        self, baseline_id: str, access: Access, at: datetime | None
    ) -> list[Mapping[Any, Any]]:
        """The readable pins of a baseline, each flagged when its element was retired at ``at``."""
        p = t.baseline_pins.c
        q = (
            sa.select(*_SELECTED, _retired(at).label("retired"))
            .select_from(
                t.baseline_pins.join(t.element_versions, _V.version_id == p.version_id).join(
                    t.elements, _E.element_id == p.element_id
                )
            )
            .where(p.baseline_id == baseline_id, _readable(access), _version_readable(access))
        )
        return [r._mapping for r in self.conn.execute(q)]  # read-only rows, no copies

    def listed_versions(
        self, version_ids: Sequence[str], access: Access, at: datetime | None
    ) -> list[dict[str, Any]]:
        """The named versions that are readable, readable-kind and recorded by ``at``."""
        rows: list[dict[str, Any]] = []
        for batch in _batches(version_ids):
            q = (
                sa.select(*_SELECTED, _retired(at).label("retired"))
                .select_from(t.element_versions.join(t.elements, _E.element_id == _V.element_id))
                .where(
                    _V.version_id.in_(batch),
                    _readable(access),
                    _version_readable(access),
                    _E.source_kind.in_(READABLE_KINDS),
                )
            )
            if at is not None:
                q = q.where(_V.recorded_at <= at)
            rows += [dict(r._mapping) for r in self.conn.execute(q)]
        return rows

    def baseline_header(self, baseline_id: str) -> dict[str, Any] | None:
        """A baseline's repository and creation instant (without its pins)."""
        b = t.baselines.c
        r = self.conn.execute(
            sa.select(b.baseline_id, b.repo_key, b.created_at).where(b.baseline_id == baseline_id)
        ).first()
        return dict(r._mapping) if r else None

    # -- candidate rows --------------------------------------------------------------------
    def version_metadata(self, version_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Version id → metadata (for validity windows)."""
        out: dict[str, dict[str, Any]] = {}
        for batch in _batches(version_ids):
            q = sa.select(_V.version_id, _V.metadata).where(_V.version_id.in_(batch))
            out.update((r.version_id, dict(r.metadata or {})) for r in self.conn.execute(q))
        return out

    def version_rows(self, version_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Version id → everything an item shows: content, metadata, provenance, erasure."""
        cols = (
            *(_V.version_id, _V.element_id, _V.seq, _V.title, _V.body, _V.metadata),
            *(_V.recorded_at, _V.actor_id, _V.source_repo, _V.commit_sha, _V.path),
            *(_V.erased_at, _V.erased_by, _E.repo_key, _E.source_kind, _E.type_key),
            _E.classification,
        )
        out: dict[str, dict[str, Any]] = {}
        for batch in _batches(version_ids):
            q = (
                sa.select(*cols)
                .select_from(t.element_versions.join(t.elements, _E.element_id == _V.element_id))
                .where(_V.version_id.in_(batch))
            )
            out.update((r.version_id, dict(r._mapping)) for r in self.conn.execute(q))
        return out

    # -- relationships ---------------------------------------------------------------------
    def neighbours(
        self,
        element_ids: Sequence[str],
        access: Access,
        at: datetime | None,
        type_keys: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        """Relationships live at ``at`` from or to the elements whose other end is readable.

        Each row: ``relationship_id, type_key, source_element_id, target_element_id, from,
        to`` where ``from`` is the given element and ``to`` the readable neighbour.
        """
        r = t.relationships.c
        live = _live_at(at)
        rows: list[dict[str, Any]] = []
        for batch in _batches(element_ids):
            for near, far in (
                (r.source_element_id, r.target_element_id),
                (r.target_element_id, r.source_element_id),
            ):
                q = sa.select(
                    r.relationship_id,
                    r.type_key,
                    r.source_element_id,
                    r.target_element_id,
                    near.label("from"),
                    far.label("to"),
                    r.recorded_at,
                ).where(
                    near.in_(batch),
                    live,
                    # the far end's readability as a correlated EXISTS, not a join: the plan
                    # has to start from the given elements' relationships (by index). Joined,
                    # SQLite without statistics started from every element of the readable
                    # repository for more than a few seeds (~60 ms a call at a million chunks)
                    sa.exists().where(_E.element_id == far, _readable(access)),
                )
                if type_keys:
                    q = q.where(r.type_key.in_(sorted(set(type_keys))))
                rows += [dict(x._mapping) for x in self.conn.execute(q)]
        rows.sort(key=lambda x: (x["from"], x["recorded_at"], x["relationship_id"], x["to"]))
        return rows

    def links_between(
        self, repository_keys: Sequence[str], at: datetime | None, type_keys: Sequence[str]
    ) -> list[tuple[str, str, str, str, str]]:
        """``(relationship id, type key, source element, target element, link as written)``
        of every relationship of ``type_keys`` live at ``at`` in the given repositories (the
        link as written is the ``raw`` that ingest records, ``""`` when there is none): what
        a read's link graph is built from. The caller keeps only the pairs whose both ends
        its selection holds."""
        r = t.relationships.c
        live = _live_at(at)
        out: list[tuple[str, str, str, str, str]] = []
        for batch in _batches(sorted(set(repository_keys))):
            q = sa.select(
                r.relationship_id, r.type_key, r.source_element_id, r.target_element_id, r.metadata
            ).where(r.repo_key.in_(batch), r.type_key.in_(sorted(set(type_keys))), live)
            for row in self.conn.execute(q):
                raw = (row.metadata or {}).get("raw")
                out.append(
                    (
                        row.relationship_id,
                        row.type_key,
                        row.source_element_id,
                        row.target_element_id,
                        raw if isinstance(raw, str) else "",
                    )
                )
        out.sort()
        return out

    # -- stored read contexts (the access log of read_context) ------------------------------
    def insert_read_context(self, **row: Any) -> None:
        """Store one read_context response with who asked, for whom and why."""
        self.conn.execute(t.read_contexts.insert().values(**row))

    def get_read_context(self, context_id: str) -> dict[str, Any] | None:
        """A stored read context by id."""
        r = self.conn.execute(
            sa.select(t.read_contexts).where(t.read_contexts.c.context_id == context_id)
        ).first()
        return dict(r._mapping) if r else None

    def erased_among(
        self, version_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, datetime]:
        """Version id → erasure instant, for those of ``version_ids`` that are erased. With
        ``lock`` the rows are share-locked, so a context stored now waits for an erasure of
        one of its versions in flight (and then sees it) instead of racing past it."""
        out: dict[str, datetime] = {}
        for batch in _batches(version_ids):
            q = sa.select(_V.version_id, _V.erased_at).where(_V.version_id.in_(batch))
            if lock:
                q = q.with_for_update(read=True)
            out.update((r.version_id, r.erased_at) for r in self.conn.execute(q) if r.erased_at)
        return out

    def contexts_showing(self, repo_key: str, version_ids: Sequence[str]) -> list[str]:
        """Ids of the stored contexts of a repository (or of a whole organization, which may
        include it) whose response names one of ``version_ids``.

        Version ids are unique random tokens, so a search of the stored JSON text for the quoted
        id finds every response that returned one (and, rarely, one that only traced it; the
        caller checks the items). The database does the search; nothing else is loaded.
        """
        c = t.read_contexts.c
        text = sa.cast(c.response, sa.Text)
        ids, found = sorted(set(version_ids)), set[str]()
        for start in range(0, len(ids), _LIKE_BATCH):
            batch = ids[start : start + _LIKE_BATCH]
            q = sa.select(c.context_id).where(
                sa.or_(c.repo_key == repo_key, c.repo_key.is_(None)),
                sa.or_(*(text.contains(f'"{v}"', autoescape=True) for v in batch)),
            )
            found.update(r.context_id for r in self.conn.execute(q))
        return sorted(found)

    def read_context_responses(self, context_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Context id → stored response, the rows locked for an in-place rewrite (erasure)."""
        c = t.read_contexts.c
        out: dict[str, dict[str, Any]] = {}
        for batch in _batches(context_ids):
            q = sa.select(c.context_id, c.response).where(c.context_id.in_(batch))
            out.update((r.context_id, r.response) for r in self.conn.execute(q.with_for_update()))
        return out

    def erase_read_context_query(self, context_id: str, marker: str) -> None:
        """Replace a stored request's query text (it found erased content, and a query often
        says as much as the text it found)."""
        c = t.read_contexts.c
        row = self.conn.execute(sa.select(c.request).where(c.context_id == context_id)).first()
        if row is None or not isinstance(row.request, dict) or not row.request.get("query"):
            return
        request = {**row.request, "query": marker}
        self.conn.execute(
            t.read_contexts.update().where(c.context_id == context_id).values(request=request)
        )

    def replace_read_context_response(self, context_id: str, response: dict[str, Any]) -> None:
        """Rewrite a stored response: only erasure does this, to take erased text out of it."""
        self.conn.execute(
            t.read_contexts.update()
            .where(t.read_contexts.c.context_id == context_id)
            .values(response=response)
        )
