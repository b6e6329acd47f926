"""Index maintenance: the keyword index is a projection of the database, kept by the outbox.

Every write that changes what the index should hold adds ``index_outbox`` rows in its own
transaction (``Store.insert_version``, ``retire_element``, ``save_erasure`` …). Each keyword
index (one directory per home; several homes or hosts may share one database) is a *consumer*
with its own position in the outbox, its watermark. A commit only wakes the background upkeep
(``service.indexing.background``), whose ``catch_up`` applies the rows after the watermark in id
order, in batches, and only then advances it; a read first makes the index cover the outbox head as
of its start (``ensure_applied``: read your writes). Rows are not deleted when applied — other
indexes need them too — so a crash before the upkeep ran leaves exactly the work still to do,
for the next read, ``index status`` or open; other processes' commits reach it the same way.

Ids can commit out of order on PostgreSQL (a transaction holding id 10 commits after the one
holding id 11): ids skipped below the watermark are kept with it as open *gaps*, re-read on
every catch-up and dropped once :data:`GAP_TIMEOUT` has passed (their transaction rolled back).
Re-applying a row is idempotent (it re-indexes the version as the database has it), so erring
toward re-application is safe.

Catch-up also prunes rows older than :data:`RETENTION` (at most every :data:`PRUNE_INTERVAL`
per process) and records how far it pruned; an index whose watermark is below that was offline
too long to catch up and is rebuilt instead. ``rebuild`` recomputes everything from the
database; it answers exactly like incremental upkeep. An index that starts empty — new, of an
older format (``needs_rebuild``), or with its directory deleted while the process held it open
(``is_intact`` false) — is rebuilt by the first catch-up. A deleted directory keeps answering
from the open files, but ``status`` reports it not on disk (so ``health`` says not ready) until
the next catch-up rebuilds it from the database, with a warning.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

from domain.errors import IndexBuilding
from projection.keyword_index import DerivedIndex, IndexedChunk
from service.indexing import rows as index_rows
from service.indexing.rows import chunk_rows, chunks_of, skipped, without
from service.outbox import OutboxUnitOfWork

P = TypeVar("P", bound=DerivedIndex)

BATCH = 500
GAP_TIMEOUT = 600.0  # seconds an id skipped below the watermark is looked for (then: rolled back)
GAP_WINDOW = 10_000  # a rebuild treats ids missing this far below the newest as open gaps
RETENTION = timedelta(days=7)  # outbox rows older than this are pruned
PRUNE_INTERVAL = 600.0  # seconds between two prunes by one process
READ_WAIT = 5.0  # seconds a read waits for the index to cover the writes before it
log = logging.getLogger("ameide.index")


class IndexMaintainer(Generic[P]):
    """Applies the outbox to a projection of chunks — the keyword index, or the embedding index
    (``projection.semantic``) — rebuilds it, reports its lag. Only the keyword index's upkeep
    keeps the database's chunk rows (``chunk_rows``)."""

    def __init__(
        self,
        uow_factory: Callable[..., OutboxUnitOfWork],
        open_index: Callable[[], P],
        *,
        label: str = "keyword index",
        chunk_rows: bool = True,
    ):
        self._uow = uow_factory  # units of work WITHOUT the on-commit hook (no recursion)
        self._open_index = open_index
        self._index: P | None = None
        self.label = label
        self._keeps_chunk_rows = chunk_rows
        self._lock = threading.Lock()
        self._opening = threading.Lock()
        self._dirty = False
        self._pruned_at: float | None = None  # time.monotonic() of this process's last prune

    @property
    def opened(self) -> P | None:
        """The projection if it was opened (``None``: never used in this process)."""
        return self._index

    @property
    def index(self) -> P:
        """The projection, opened on first use."""
        index = self._index
        if index is None:
            with self._opening:  # one object per process: threads racing here share it
                if self._index is None:
                    self._index = self._open_index()
                index = self._index
        return index

    def head(self) -> int:
        """The newest outbox id committed now: a read that makes the index apply up to it sees
        every write that returned before the read began (read your writes)."""
        with self._uow(readonly=True) as uow:
            return uow.store.max_outbox_id()

    def ensure_applied(self, target: int | None = None, *, timeout: float = READ_WAIT) -> bool:
        """Make the index cover every outbox row up to ``target`` (default: :meth:`head` now),
        waiting at most ``timeout`` seconds; True when it does.

        Cheap when it already does (the background upkeep applied it: the watermark is at or
        past ``target`` and no open gap at or below it has filled since). Else it waits for the
        batch in progress — the background upkeep's or another read's, in this process or
        another one — instead of racing it, looks again, and only then applies what is missing
        itself. After ``timeout`` (another thread or process rebuilding) the read answers as
        it is; one never built (a new home, another engine's): :class:`IndexBuilding`."""
        if target is None:
            target = self.head()
        if self._covers(target):
            return True
        deadline = time.monotonic() + timeout
        while not self._lock.acquire(timeout=0.05):  # a batch of this process runs: join it
            if self._covers(target):
                return True
            if time.monotonic() >= deadline:
                self._refuse_if_building()
                log.warning("the %s stayed busy for %.1f s: reading it as is", self.label, timeout)
                return False
        try:
            if self._covers(target):  # the batch waited for covered it
                return True
            while True:
                with self._exclusive(wait=False) as mine:
                    if mine:
                        self._drain()
                        return True
                if self._covers(target):  # the other process's batch or rebuild covered it
                    return True
                if time.monotonic() >= deadline:
                    self._refuse_if_building()
                    log.warning("another process held the %s for %.1f s: reading it as it "
                                "is", self.label, timeout)  # fmt: skip
                    return False
                time.sleep(0.01)  # another process applies or rebuilds: poll its lock
        finally:
            self._lock.release()

    def _refuse_if_building(self) -> None:
        """Raise :class:`IndexBuilding` rather than let a read answer from an index another
        thread or process is still building: never built (or set aside) with content to build."""
        index = self.index
        if index.last_applied_position() is None or index.needs_rebuild():
            with self._uow(readonly=True) as uow:
                if uow.store.indexable_version_count():
                    raise IndexBuilding(f"the {self.label} is being built: retry in a minute")

    def _covers(self, target: int) -> bool:
        """True when the index has applied every outbox row up to ``target``: its watermark is
        there and none of its open gaps at or below it has turned up since (an index to
        rebuild covers nothing)."""
        index = self.index
        position = index.last_applied_position()
        if position is None or position < target or index.needs_rebuild():
            return False
        if not index.is_intact():
            return False
        gaps = [(low, min(high, target)) for low, high, _ in index.open_gaps() if low <= target]
        if not gaps:
            return True
        with self._uow(readonly=True) as uow:
            return not uow.store.index_work_in(gaps)

    def catch_up(self, *, wait: bool = False) -> int:
        """Apply every outbox row after the index's watermark (and in its open gaps); returns
        how many were applied (a rebuild counts the rows it covered).

        Without ``wait`` a call that finds another one running only marks more work, which the
        running one picks up before it returns, so committing threads never queue on the index;
        one that finds another *process* holding the index (catching up or rebuilding) leaves
        the work to it or to the next write, read or status.
        """
        applied = 0
        while True:
            self._dirty = True  # before trying the lock, so a running drain always sees it
            if not self._lock.acquire(blocking=wait):
                return applied
            try:
                self._dirty = False
                with self._exclusive(wait=wait) as mine:
                    if not mine:
                        return applied
                    applied += self._drain()
            finally:
                self._lock.release()
            if not self._dirty:
                return applied

    @contextmanager
    def _exclusive(self, *, wait: bool) -> Iterator[bool]:
        """Hold the projection's write lock across processes, if it has one (the keyword
        index's): reading the watermark, applying and advancing it, or rebuilding, is then one
        step no other process interleaves with. Yields ``False`` (without ``wait``) when another
        process holds it."""
        exclusive = getattr(self.index, "exclusive", None)
        if exclusive is None:
            yield True
            return
        with exclusive(blocking=wait) as mine:
            yield bool(mine)

    def _drain(self) -> int:
        """:meth:`catch_up` once (call holding the locks)."""
        applied = 0
        if self.index.needs_rebuild():  # e.g. opened on files of an older format
            applied += self._rebuild_covering()
        elif not self.index.is_intact():  # e.g. its directory deleted under the process
            log.warning("the %s is missing on disk: rebuilding it", self.label)
            applied += self._rebuild_covering()
        elif self._behind_pruning():
            applied += self._rebuild_covering()
        with self._uow(readonly=True) as uow:
            target = uow.store.max_outbox_id()
        with_gaps = True
        while n := self._apply_batch(with_gaps=with_gaps):
            applied += n
            with_gaps = False
            if (self.index.last_applied_position() or 0) >= target:
                break  # what was committed before: later commits catch up themselves (else
                # other processes writing faster than this applies would keep it, and the
                # index's lock, busy for as long as they write)
        self._prune_now_and_then()
        return applied

    def _behind_pruning(self) -> bool:
        """True when the index cannot catch up from the outbox: it never did (it opened empty,
        or with a watermark of an older release), rows after its watermark were pruned (it was
        offline longer than the retention), or its watermark is beyond the newest row (the
        database was restored or replaced underneath it)."""
        position = self.index.last_applied_position()
        with self._uow(readonly=True) as uow:
            if position is None:
                expected = uow.store.indexable_version_count()
                if expected:
                    log.warning("the %s opened empty (or without an outbox position) but the "
                                "database has %d indexable versions: rebuilding it",
                                self.label, expected)  # fmt: skip
                return True
            pruned = uow.store.outbox_pruned_through()
            newest = uow.store.max_outbox_id()
        if position < pruned or position > newest:
            log.warning("the %s is at outbox position %d but the outbox was pruned up to %d "
                        "and ends at %d: rebuilding it", self.label, position, pruned,
                        newest)  # fmt: skip
            return True
        return False

    def _apply_batch(self, *, with_gaps: bool) -> int:
        """Apply the next rows after the watermark (and, ``with_gaps``, those that turned up in
        the open gaps), then advance the watermark; returns how many rows were applied."""
        position = self.index.last_applied_position() or 0
        gaps = self.index.open_gaps()
        with self._uow(readonly=True) as uow:
            work = uow.store.index_work_after(position, BATCH)
            late = []
            if with_gaps and gaps:
                late = uow.store.index_work_in([(low, high) for low, high, _ in gaps])
            versions = []
            if work or late:
                versions = uow.store.indexable_versions(
                    version_ids=sorted({v for _, _, v in work + late if v}),
                    element_ids=sorted({e for _, e, v in work + late if v is None}),
                )
        now = time.time()
        open_ = [g for g in without(gaps, [i for i, _, _ in late]) if now - g[2] < GAP_TIMEOUT]
        open_ += skipped(position, [i for i, _, _ in work], now)
        if work or late:
            live = [v for v in versions if not v.erased]
            chunks = [c for v in live for c in chunks_of(v)]
            self.index.replace_versions(chunks, version_ids=[v.version_id for v in live])
            self.index.delete_versions([v.version_id for v in versions if v.erased])
            if self._keeps_chunk_rows:
                with self._uow() as uow:
                    rows = chunk_rows(chunks)
                    uow.store.replace_chunk_rows([v.version_id for v in versions], rows)
                    uow.commit()
        if work or late or open_ != gaps:
            self.index.advance(work[-1][0] if work else position, open_)
        return len(work) + len(late)

    def _prune_now_and_then(self) -> None:
        """Delete outbox rows older than :data:`RETENTION`, at most every
        :data:`PRUNE_INTERVAL` in this process."""
        now = time.monotonic()
        if self._pruned_at is not None and now - self._pruned_at < PRUNE_INTERVAL:
            return
        self._pruned_at = now
        at = datetime.now(UTC)
        try:
            with self._uow() as uow:
                through = uow.store.prune_index_outbox(at - RETENTION, at)
                uow.commit()
        except Exception:  # housekeeping only: the next interval tries again
            log.exception("pruning the index outbox failed")
            return
        if through:
            log.info("pruned the index outbox up to %d", through)

    def rebuild(self, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
        """Recompute the index and the chunk rows from the database, then catch up."""
        with self._lock, self._exclusive(wait=True):
            built = self._rebuild(progress)
        self.catch_up(wait=True)
        return built

    def _rebuild_covering(self) -> int:
        """:meth:`_rebuild`, returning how many outbox rows were pending (it covers them)."""
        pending = self._pending()
        self._rebuild()
        return pending

    def _rebuild(self, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
        """:meth:`rebuild` without the catching up (call holding the lock).

        The watermark becomes the newest outbox id, read before the versions; ids missing
        just below it (up to :data:`GAP_WINDOW`) may belong to transactions still open, so
        they become open gaps. No outbox row is deleted: other indexes may still need them.
        """
        chunks: list[IndexedChunk] = []
        with index_rows.RowSpool() as keys:  # what the chunk rows need, not the text
            with self._uow(readonly=True) as uow:
                top = uow.store.max_outbox_id()
                low = max(top - GAP_WINDOW, uow.store.outbox_pruned_through()) + 1
                present = uow.store.outbox_ids_between(low, top) if top >= low else []
                gaps = skipped(low - 1, present, time.time())
                read = index_rows.stream_chunks(uow.store.all_indexable_versions(), progress)
                stream = index_rows.kept(read, keys)
                if self._keeps_chunk_rows:
                    # The keyword index takes the chunks as they are read: its engine indexes
                    # on its own threads meanwhile (tantivy's), not after all the chunking.
                    self.index.rebuild(stream, position=top, gaps=gaps)
                else:  # the embedding index's long rebuild runs outside the read transaction
                    chunks = list(stream)
            if not self._keeps_chunk_rows:
                self.index.rebuild(chunks, position=top, gaps=gaps)
            else:
                with self._uow() as uow:
                    index_rows.write_all_chunk_rows(uow.store, keys)
                    uow.commit()
            return {"chunks": keys.count, "versions": len(keys.version_ids)}

    def _pending(self) -> int:
        """Outbox rows after the watermark or in its open gaps (the index's lag)."""
        position = self.index.last_applied_position() or 0
        gaps = [(low, high) for low, high, _ in self.index.open_gaps()]
        with self._uow(readonly=True) as uow:
            return int(uow.store.index_work_count(position, gaps))

    def status(self) -> dict[str, Any]:
        """Lag and consistency: pending outbox rows (after this index's watermark or in its
        open gaps; writes return before the background upkeep applies them), how far the
        watermark is behind the outbox's newest id, how long the oldest pending row has waited,
        indexed versus expected versions, and whether the index is on disk at all
        (counts of an index that is not are ``None``: the files it still holds open are gone)
        and can still catch up (``behind_pruning``: only a rebuild can)."""
        position = self.index.last_applied_position()
        gaps = [(low, high) for low, high, _ in self.index.open_gaps()]
        with self._uow(readonly=True) as uow:
            pending = uow.store.index_work_count(position or 0, gaps)
            head = uow.store.max_outbox_id()
            oldest = uow.store.oldest_work_enqueued(position or 0, gaps) if pending else None
            pruned = uow.store.outbox_pruned_through()
            expected = uow.store.indexable_version_count()
            chunk_rows_ = uow.store.chunk_count()
        on_disk = self.index.is_intact()
        behind = position is not None and position < pruned
        indexed = chunks = None
        if on_disk:
            indexed = self.index.version_count()
            chunks = self.index.doc_count()
        consistent = on_disk and pending == 0 and not behind and indexed == expected
        age = None
        if oldest is not None:
            at = oldest if oldest.tzinfo else oldest.replace(tzinfo=UTC)
            age = round(max(0.0, (datetime.now(UTC) - at).total_seconds()), 3)
        return {
            "pending": pending,
            "outbox_head": head,
            "positions_behind": max(0, head - (position or 0)),
            "oldest_pending_age_seconds": age,
            "last_applied_position": position,
            "open_gaps": len(gaps),
            "behind_pruning": behind,
            "indexed_versions": indexed,
            "expected_versions": expected,
            "indexed_chunks": chunks,
            "stored_chunk_rows": chunk_rows_,
            "on_disk": on_disk,
            "consistent": consistent,
        }

    def close(self) -> None:
        """Release the index."""
        if self._index is not None:
            self._index.close()
            self._index = None
