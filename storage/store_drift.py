"""The queries behind drift and knowledge gaps (docs/drift.md), trimmed in SQL.

A citation is a live relationship from a canonical (curated) element to an ingested evidence
element whose ``metadata.target_version_id`` pins one evidence version. It has drifted when the
evidence's head is no longer that version, or the evidence was retired. Both ends — the elements
and the versions shown — must be readable under ``access`` inside the ``WHERE`` clause, so an
unreadable end is never fetched, counted or hinted at.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from domain.values import SourceKind
from storage import schema as t

Access = Mapping[str, Sequence[str]]

_CANONICAL = SourceKind.CANONICAL.value
_EVIDENCE = SourceKind.INGESTED_EVIDENCE.value


def _element_readable(el: Any, access: Access) -> ColumnElement[bool]:
    allowed = [
        sa.and_(el.c.repo_key == repo, el.c.classification.in_(list(levels)))
        for repo, levels in sorted(access.items())
        if levels
    ]
    return sa.or_(*allowed) if allowed else sa.false()


def _version_readable(v: Any, levels: Sequence[str]) -> ColumnElement[bool]:
    """A version written above its element's level only for callers cleared for that level."""
    return sa.or_(v.c.classification.is_(None), v.c.classification.in_(list(levels)))


class DriftStore:
    """Mixin of ``Store``: drifted citations, drift reviews, the counts of a gaps report."""

    conn: Connection

    def drifted_citations(self, repo_key: str, access: Access) -> list[dict[str, Any]]:
        """Live citations of readable canonical elements pinning a readable evidence version
        that is no longer the evidence's head (or whose evidence is retired), without those a
        review settled up to the current head. Oldest relationship first."""
        levels = list(access.get(repo_key, ()))
        rel = t.relationships
        cur, ev = t.elements.alias("cur"), t.elements.alias("ev")
        cur_v = t.element_versions.alias("cur_v")
        pin_v, head_v = t.element_versions.alias("pin_v"), t.element_versions.alias("head_v")
        review = t.drift_reviews
        pinned_id = rel.c.metadata["target_version_id"].as_string()
        q = (
            sa.select(
                rel.c.relationship_id,
                rel.c.type_key,
                cur.c.element_id.label("curated_element_id"),
                cur_v.c.version_id.label("curated_version_id"),
                cur_v.c.title.label("curated_title"),
                ev.c.element_id.label("evidence_element_id"),
                ev.c.retired_at.label("evidence_retired_at"),
                pin_v.c.version_id.label("pinned_version_id"),
                head_v.c.version_id.label("current_version_id"),
            )
            .select_from(
                rel.join(cur, cur.c.element_id == rel.c.source_element_id)
                .join(cur_v, cur_v.c.version_id == cur.c.head_version_id)
                .join(ev, ev.c.element_id == rel.c.target_element_id)
                .join(pin_v, sa.and_(pin_v.c.version_id == pinned_id))
                .join(head_v, head_v.c.version_id == ev.c.head_version_id)
                .outerjoin(
                    review,
                    sa.and_(
                        review.c.curated_version_id == cur_v.c.version_id,
                        review.c.evidence_element_id == ev.c.element_id,
                        review.c.evidence_version_id == head_v.c.version_id,
                    ),
                )
            )
            .where(
                rel.c.repo_key == repo_key,
                rel.c.retired_at.is_(None),
                cur.c.source_kind == _CANONICAL,
                cur.c.retired_at.is_(None),
                ev.c.source_kind == _EVIDENCE,
                pin_v.c.element_id == ev.c.element_id,
                _element_readable(cur, access),
                _element_readable(ev, access),
                _version_readable(cur_v, levels),
                _version_readable(pin_v, levels),
                _version_readable(head_v, levels),
                sa.or_(head_v.c.version_id != pin_v.c.version_id, ev.c.retired_at.is_not(None)),
                review.c.review_id.is_(None),
            )
            .order_by(rel.c.recorded_at, rel.c.relationship_id)
        )
        return [dict(r._mapping) for r in self.conn.execute(q)]

    def first_version_after(self, element_id: str, seq: int) -> datetime | None:
        """When the first version of an element after ``seq`` was recorded (None: none)."""
        v = t.element_versions.c
        q = sa.select(sa.func.min(v.recorded_at)).where(v.element_id == element_id, v.seq > seq)
        value: datetime | None = self.conn.execute(q).scalar()
        return value

    def insert_drift_review(self, **row: Any) -> None:
        """Record that a curator reviewed a drift up to an evidence version."""
        self.conn.execute(t.drift_reviews.insert().values(**row))

    def gap_rows(self, repo_key: str, access: Access, words: Sequence[str]) -> list[dict[str, Any]]:
        """Readable canonical and evidence elements of a repository whose head title or body
        contains every word (case-insensitive): kind, retirement, head time and metadata."""
        levels = list(access.get(repo_key, ()))
        e, v = t.elements, t.element_versions
        q = (
            sa.select(
                e.c.element_id,
                e.c.source_kind,
                e.c.retired_at,
                v.c.recorded_at,
                v.c.metadata,
            )
            .select_from(e.join(v, v.c.version_id == e.c.head_version_id))
            .where(
                e.c.repo_key == repo_key,
                e.c.source_kind.in_([_CANONICAL, _EVIDENCE]),
                _element_readable(e, access),
                _version_readable(v, levels),
            )
        )
        for word in words:
            escaped = word.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern = f"%{escaped}%"
            q = q.where(
                sa.or_(
                    sa.func.lower(v.c.title).like(pattern, escape="\\"),
                    sa.func.lower(v.c.body).like(pattern, escape="\\"),
                )
            )
        return [dict(r._mapping) for r in self.conn.execute(q)]

    def stored_questions(
        self, repo_key: str, principals: Sequence[str] | None, limit: int
    ) -> list[dict[str, Any]]:
        """The newest stored read contexts of one repository, only those asked by (or for) one
        of ``principals`` — every one when ``principals`` is None (an auditor's view)."""
        c = t.read_contexts.c
        q = (
            sa.select(c.context_id, c.at, c.principal_id, c.request, c.response)
            .where(c.repo_key == repo_key)
            .order_by(c.at.desc(), c.context_id)
            .limit(limit)
        )
        if principals is not None:
            q = q.where(
                sa.or_(c.principal_id.in_(list(principals)), c.on_behalf_of.in_(list(principals)))
            )
        return [dict(r._mapping) for r in self.conn.execute(q)]
