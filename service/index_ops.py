"""Index maintenance: the keyword index is a projection of the database, kept by the outbox.

Every write that changes what the index should hold adds ``index_outbox`` rows in its own
transaction (``Store.insert_version``, ``retire_element``, ``save_erasure`` …). After each commit
the unit of work calls ``IndexMaintainer.catch_up``, which applies the pending rows to the index
and only then deletes them. A crash between the commit and the index update therefore leaves
exactly the work still to do, which the next write, read or ``ameide index status`` applies.
``rebuild`` recomputes everything from the database; it answers exactly like incremental upkeep.
An index that starts empty because its files were of an older format (``needs_rebuild``) is
rebuilt by the first catch-up, i.e. by the first write or read after an upgrade. So is an index
whose directory was deleted while the process held it open (``is_intact`` false): the open
files keep answering, but ``status`` reports it not on disk (so ``health`` says not ready) until
the next catch-up rebuilds it from the database, with a warning.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from projection.keyword_index import IndexedChunk, KeywordIndex, classification_rank, indexed_chunks
from projection.selection import epoch_of, is_superseded

BATCH = 500
log = logging.getLogger("ameide.index")


def chunks_of(v: Any) -> list[IndexedChunk]:
    """The index documents of one indexable version (``storage.store_index.IndexableVersion``)."""
    recorded_at = epoch_of(v.recorded_at)
    assert recorded_at is not None
    return indexed_chunks(
        body=v.body,
        title=v.title,
        repository_key=v.repo_key,
        element_id=v.element_id,
        version_id=v.version_id,
        classification_rank=classification_rank(v.classification),
        source_kind=v.source_kind,
        type_key=v.type_key,
        recorded_at=recorded_at,
        retired_at=epoch_of(v.retired_at),
        effective_from=epoch_of(v.metadata.get("effective_from")),
        effective_to=epoch_of(v.metadata.get("effective_to")),
        superseded=is_superseded(v.metadata),
    )


def chunk_rows(chunks: Iterable[IndexedChunk]) -> list[dict[str, Any]]:
    """The ``chunks`` table rows of index documents."""
    counters: dict[str, int] = {}
    rows = []
    for c in chunks:
        ordinal = counters.get(c.version_id, 0)
        counters[c.version_id] = ordinal + 1
        rows.append({
            "chunk_id": c.chunk_id, "version_id": c.version_id, "element_id": c.element_id,
            "ordinal": ordinal, "chunk_key": c.chunk_key, "heading_path": c.heading_path,
            "start": c.start, "end": c.end,
        })  # fmt: skip
    return rows


class IndexMaintainer:
    """Applies the outbox to a keyword index; rebuilds it; reports its lag."""

    def __init__(self, uow_factory: Callable[..., Any], open_index: Callable[[], KeywordIndex]):
        self._uow = uow_factory  # units of work WITHOUT the on-commit hook (no recursion)
        self._open_index = open_index
        self._index: KeywordIndex | None = None
        self._lock = threading.Lock()
        self._dirty = False
        self._checked_history = False  # see _rebuild_if_history_missing

    @property
    def index(self) -> KeywordIndex:
        """The keyword index, opened on first use."""
        if self._index is None:
            self._index = self._open_index()
        return self._index

    def catch_up(self, *, wait: bool = False) -> int:
        """Apply every pending outbox row; returns how many were applied.

        Without ``wait`` a call that finds another one running only marks more work, which the
        running one picks up before it returns, so committing threads never queue on the index.
        """
        applied = 0
        while True:
            self._dirty = True  # before trying the lock, so a running drain always sees it
            if not self._lock.acquire(blocking=wait):
                return applied
            try:
                self._dirty = False
                started_empty = not self._checked_history and self.index.doc_count() == 0
                if self.index.needs_rebuild():  # e.g. opened on files of an older format
                    self._rebuild()
                elif not self.index.is_intact():  # e.g. its directory deleted under the process
                    log.warning("the keyword index is missing on disk: rebuilding it")
                    self._rebuild()
                while n := self._apply_batch():
                    applied += n
                if not self._checked_history:
                    self._checked_history = True
                    if started_empty:
                        self._rebuild_if_history_missing()
            finally:
                self._lock.release()
            if not self._dirty:
                return applied

    def _rebuild_if_history_missing(self) -> None:
        """An index that opened empty over a database with more than the pending work (its
        directory was removed while no process held it): rebuild it from the database."""
        indexed = getattr(self.index, "version_count", None)
        if indexed is None:
            return
        with self._uow(readonly=True) as uow:
            expected = uow.store.indexable_version_count()
        if indexed() < expected:
            log.warning(
                "the keyword index opened empty but the database has %d indexable versions: "
                "rebuilding it",
                expected,
            )
            self._rebuild()

    def _apply_batch(self) -> int:
        with self._uow(readonly=True) as uow:
            work = uow.store.pending_index_work(BATCH)
            if not work:
                return 0
            versions = uow.store.indexable_versions(
                version_ids=sorted({v for _, _, v in work if v}),
                element_ids=sorted({e for _, e, v in work if v is None}),
            )
        live = [v for v in versions if not v.erased]
        erased = [v.version_id for v in versions if v.erased]
        chunks = [c for v in live for c in chunks_of(v)]
        position = max(outbox_id for outbox_id, _, _ in work)
        self.index.replace_versions(chunks, version_ids=[v.version_id for v in live])
        self.index.delete_versions(erased, position=position)
        with self._uow() as uow:
            uow.store.replace_chunk_rows([v.version_id for v in versions], chunk_rows(chunks))
            uow.store.delete_index_work([outbox_id for outbox_id, _, _ in work])
            uow.commit()
        return len(work)

    def rebuild(self, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
        """Recompute the index and the chunk rows from the database, then catch up."""
        with self._lock:
            built = self._rebuild(progress)
        self.catch_up(wait=True)
        return built

    def _rebuild(self, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
        """:meth:`rebuild` without the catching up (call holding the lock)."""
        with self._uow(readonly=True) as uow:
            top = uow.store.max_outbox_id()
            chunks = list(self._stream(uow.store.all_indexable_versions(), progress))
        self.index.rebuild(chunks, position=top)
        with self._uow() as uow:
            uow.store.clear_chunk_rows()
            rows = chunk_rows(chunks)
            for start in range(0, len(rows), 2_000):
                uow.store.replace_chunk_rows((), rows[start : start + 2_000])
            uow.store.delete_index_work_up_to(top)
            uow.commit()
        return {"chunks": len(chunks), "versions": len({c.version_id for c in chunks})}

    @staticmethod
    def _stream(
        versions: Iterable[Any], progress: Callable[[int], None] | None
    ) -> Iterator[IndexedChunk]:
        for n, v in enumerate(versions, start=1):
            if not v.erased:
                yield from chunks_of(v)
            if progress is not None and n % 100 == 0:
                progress(n)

    def status(self) -> dict[str, Any]:
        """Lag and consistency: pending outbox rows, indexed versus expected versions, and
        whether the index is on disk at all (counts of an index that is not are ``None``: the
        files it still holds open are gone)."""
        with self._uow(readonly=True) as uow:
            pending = uow.store.pending_index_count()
            expected = uow.store.indexable_version_count()
            chunk_rows_ = uow.store.chunk_count()
        on_disk = self.index.is_intact()
        indexed = chunks = None
        if on_disk:
            indexed = self.index.version_count() if hasattr(self.index, "version_count") else None
            chunks = self.index.doc_count()
        return {
            "pending": pending,
            "last_applied_position": self.index.last_applied_position(),
            "indexed_versions": indexed,
            "expected_versions": expected,
            "indexed_chunks": chunks,
            "stored_chunk_rows": chunk_rows_,
            "on_disk": on_disk,
            "consistent": on_disk and pending == 0 and (indexed is None or indexed == expected),
        }

    def close(self) -> None:
        """Release the index."""
        if self._index is not None:
            self._index.close()
            self._index = None
