"""Ingest's queries: sources with their last ingested commit, mirrored paths, bulk writes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from domain.model import Element, ElementVersion, Relationship
from domain.records import MirroredFile
from domain.values import Classification
from storage import schema as t
from storage.rows import element_from_row, element_row, relationship_from_row, version_row

_CHUNK = 500  # ids per IN (...) list, well under every driver's parameter limit


class IngestStore:
    """Mixin of ``Store``: ``ingest_sources``, ``ingest_files`` and the bulk reads of a run."""

    conn: Connection

    if TYPE_CHECKING:  # provided by ``Store``

        def enqueue_index(self, element_id: str, version_id: str | None, at: datetime) -> None:
            """Announce index work in this transaction."""

    # -- sources -------------------------------------------------------------------------
    def get_ingest_source(self, repo_key: str, source_repo: str) -> dict[str, Any] | None:
        """The record of one source ingested into a repository (None before the first run)."""
        c = t.ingest_sources.c
        row = self.conn.execute(
            sa.select(t.ingest_sources).where(c.repo_key == repo_key, c.source_repo == source_repo)
        ).first()
        return dict(row._mapping) if row else None

    def list_ingest_sources(self, repo_key: str) -> list[dict[str, Any]]:
        """Every source ingested into a repository, by source name."""
        c = t.ingest_sources.c
        rows = self.conn.execute(
            sa.select(t.ingest_sources).where(c.repo_key == repo_key).order_by(c.source_repo)
        )
        return [dict(r._mapping) for r in rows]

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
    ) -> int:
        """Remember the last ingested commit and report; returns the source's run count."""
        c = t.ingest_sources.c
        values = {
            "last_commit": commit,
            "last_ref": ref[:250],
            "last_run_at": at,
            "last_run_by": by,
            "last_report": report,
        }
        done = self.conn.execute(
            t.ingest_sources.update()
            .where(c.repo_key == repo_key, c.source_repo == source_repo)
            .values(run_count=c.run_count + 1, **values)
        )
        if done.rowcount == 0:
            self.conn.execute(
                t.ingest_sources.insert().values(
                    repo_key=repo_key, source_repo=source_repo, run_count=1, **values
                )
            )
        count = self.conn.execute(
            sa.select(c.run_count).where(c.repo_key == repo_key, c.source_repo == source_repo)
        ).scalar_one()
        return int(count)

    # -- mirrored files ------------------------------------------------------------------
    def mirrored_files(self, source_repo: str) -> list[MirroredFile]:
        """Every path mirrored from a source (any repository), with its element's live head."""
        f, e, v = t.ingest_files.c, t.elements.c, t.element_versions.c
        q = (
            sa.select(
                f.repo_key, f.path, f.element_id, e.retired_at, e.classification, v.content_sha256
            )
            .join_from(t.ingest_files, t.elements, e.element_id == f.element_id)
            .join(t.element_versions, v.version_id == e.head_version_id, isouter=True)
            .where(f.source_repo == source_repo)
        )
        return [
            MirroredFile(
                r.repo_key,
                r.path,
                r.element_id,
                r.retired_at is None,
                r.content_sha256,
                r.classification,
            )
            for r in self.conn.execute(q)
        ]

    def save_ingest_file(
        self,
        repo_key: str,
        source_repo: str,
        path: str,
        element_id: str,
        commit: str,
        *,
        exists: bool = True,
    ) -> None:
        """Record that ``path`` is mirrored by ``element_id`` (as of ``commit``); ``exists=False``
        says the caller knows there is no row yet (one statement instead of two)."""
        c = t.ingest_files.c
        where = (c.repo_key == repo_key, c.source_repo == source_repo, c.path == path)
        updated = exists and (
            self.conn.execute(
                t.ingest_files.update()
                .where(*where)
                .values(element_id=element_id, commit_sha=commit)
            ).rowcount
            == 1
        )
        if not updated:
            self.conn.execute(
                t.ingest_files.insert().values(
                    repo_key=repo_key,
                    source_repo=source_repo,
                    path=path,
                    element_id=element_id,
                    commit_sha=commit,
                )
            )

    def insert_ingest_files(self, rows: Sequence[dict[str, str]]) -> None:
        """Record many newly mirrored paths in one statement (``ingest_files`` rows: repo_key,
        source_repo, path, element_id, commit_sha), where the caller knows none exists yet."""
        if rows:
            self.conn.execute(t.ingest_files.insert(), list(rows))

    def drop_ingest_file(self, repo_key: str, source_repo: str, path: str, element_id: str) -> bool:
        """Forget ``path`` (a rename moved it) if it still maps to ``element_id``."""
        c = t.ingest_files.c
        done = self.conn.execute(
            t.ingest_files.delete().where(
                c.repo_key == repo_key,
                c.source_repo == source_repo,
                c.path == path,
                c.element_id == element_id,
            )
        )
        return done.rowcount == 1

    # -- elements ------------------------------------------------------------------------
    def elements_with_head_hash(
        self, element_ids: Iterable[str]
    ) -> dict[str, tuple[Element, str | None]]:
        """element id → (element, its head's ``content_sha256``) for the ids that exist."""
        e, v = t.elements.c, t.element_versions.c
        out: dict[str, tuple[Element, str | None]] = {}
        for chunk in _chunks(sorted(set(element_ids))):
            q = (
                sa.select(t.elements, v.content_sha256)
                .join_from(
                    t.elements, t.element_versions, v.version_id == e.head_version_id, isouter=True
                )
                .where(e.element_id.in_(chunk))
            )
            for r in self.conn.execute(q):
                out[r.element_id] = (element_from_row(r), r.content_sha256)
        return out

    def insert_new_elements(self, created: Sequence[tuple[Element, ElementVersion]]) -> None:
        """Insert new elements, each with its first version as head, and announce the versions
        to the index: three statements for a whole batch, where one at a time takes four per
        element (``insert_element``, ``move_head``, ``insert_version``) and leaves the same rows."""
        if not created:
            return
        for el, v in created:
            if v.element_id != el.element_id or v.seq != 1 or v.parent_version_id is not None:
                raise ValueError(f"{v.version_id} is not the first version of {el.element_id}")
        self.conn.execute(t.elements.insert(), [element_row(el, v) for el, v in created])
        self.conn.execute(t.element_versions.insert(), [version_row(v) for _, v in created])
        self.conn.execute(
            t.index_outbox.insert(),
            [
                {
                    "element_id": v.element_id,
                    "version_id": v.version_id,
                    "enqueued_at": v.recorded_at,
                }
                for _, v in created
            ],
        )

    def pin_version_classification(self, element_id: str, level: Classification) -> int:
        """Keep every version of an element at ``level`` at least (before the element is
        lowered below it); the number of versions pinned."""
        v = t.element_versions.c
        below = [c.value for c in Classification if c.rank < level.rank]
        result = self.conn.execute(
            t.element_versions.update()
            .where(v.element_id == element_id)
            .where(sa.or_(v.classification.is_(None), v.classification.in_(below)))
            .values(classification=level.value)
        )
        return int(result.rowcount or 0)

    def set_classification(self, element_id: str, classification: str, at: datetime) -> None:
        """Re-classify an element (routing rules decide an ingested file's classification) and
        announce it to the index, which filters on classification."""
        self.conn.execute(
            t.elements.update()
            .where(t.elements.c.element_id == element_id)
            .values(classification=classification)
        )
        self.enqueue_index(element_id, None, at)

    def head_metadata(self, element_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """element id → its head version's metadata."""
        e, v = t.elements.c, t.element_versions.c
        out: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(sorted(set(element_ids))):
            q = (
                sa.select(e.element_id, v.metadata)
                .join_from(t.elements, t.element_versions, v.version_id == e.head_version_id)
                .where(e.element_id.in_(chunk))
            )
            out.update({r.element_id: dict(r.metadata or {}) for r in self.conn.execute(q)})
        return out

    # -- relationships -------------------------------------------------------------------
    def live_relationships_from(
        self, element_ids: Iterable[str], type_key: str
    ) -> dict[str, list[Relationship]]:
        """source element id → its live relationships of ``type_key``."""
        c = t.relationships.c
        out: dict[str, list[Relationship]] = {}
        for chunk in _chunks(sorted(set(element_ids))):
            q = (
                sa.select(t.relationships)
                .where(
                    c.source_element_id.in_(chunk),
                    c.type_key == type_key,
                    c.retired_at.is_(None),
                )
                .order_by(c.recorded_at)
            )
            for r in self.conn.execute(q):
                out.setdefault(r.source_element_id, []).append(relationship_from_row(r))
        return out


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]
