"""What the index upkeep writes: a version's index documents and chunk rows, and the open gaps
of a watermark (``service.indexing.upkeep``)."""

from __future__ import annotations

import itertools
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from domain.records import IndexableVersion
from projection.keyword_index import Gap, IndexedChunk, classification_rank, indexed_chunks
from projection.selection import epoch_of, is_superseded
from service.outbox import IndexOutboxStore


def chunks_of(v: IndexableVersion) -> list[IndexedChunk]:
    """The index documents of one indexable version."""
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
        replaced_at=epoch_of(v.replaced_at),
    )


ChunkRowKey = tuple[str, str, str, str, str, int, int]
"""A chunk row's fields without its ordinal: chunk id, version id, element id, chunk key,
heading path, start, end (no text)."""


def chunk_row_key(c: IndexedChunk) -> ChunkRowKey:
    """What a chunk row needs of an index document (not its text)."""
    return (c.chunk_id, c.version_id, c.element_id, c.chunk_key, c.heading_path, c.start, c.end)


def chunk_rows(chunks: Iterable[IndexedChunk]) -> list[dict[str, Any]]:
    """The ``chunks`` table rows of index documents."""
    return list(_rows(map(chunk_row_key, chunks)))


def write_all_chunk_rows(store: IndexOutboxStore, keys: Iterable[ChunkRowKey]) -> None:
    """Replace every chunk row by the rows of ``keys`` (a rebuild's), in batches."""
    store.clear_chunk_rows()
    rows = _rows(keys)
    while batch := list(itertools.islice(rows, 2_000)):
        store.replace_chunk_rows((), batch)


def _rows(keys: Iterable[ChunkRowKey]) -> Iterator[dict[str, Any]]:
    """Chunk rows one at a time, each version's ordinals counting on across batches."""
    counters: dict[str, int] = {}
    for chunk_id, version_id, element_id, chunk_key, heading_path, start, end in keys:
        ordinal = counters.get(version_id, 0)
        counters[version_id] = ordinal + 1
        yield {
            "chunk_id": chunk_id, "version_id": version_id, "element_id": element_id,
            "ordinal": ordinal, "chunk_key": chunk_key, "heading_path": heading_path,
            "start": start, "end": end,
        }  # fmt: skip


def skipped(position: int, ids: list[int], seen: float) -> list[Gap]:
    """The ranges of ids after ``position`` that the ascending ``ids`` skip."""
    gaps: list[Gap] = []
    previous = position
    for outbox_id in ids:
        if outbox_id > previous + 1:
            gaps.append((previous + 1, outbox_id - 1, seen))
        previous = max(previous, outbox_id)
    return gaps


def without(gaps: list[Gap], found: list[int]) -> list[Gap]:
    """``gaps`` minus the ids ``found`` in them (a range splits around each)."""
    remaining: list[Gap] = []
    for low, high, seen in gaps:
        inside = sorted(i for i in found if low <= i <= high)
        remaining += skipped(low - 1, inside, seen)
        last = inside[-1] if inside else low - 1
        if last < high:
            remaining.append((last + 1, high, seen))
    return remaining


def stream_chunks(
    versions: Iterable[IndexableVersion], progress: Callable[[int], None] | None
) -> Iterator[IndexedChunk]:
    """The chunks of ``versions`` (erased ones hold none), as they are read; ``progress`` gets
    the count of versions read every 100."""
    for n, v in enumerate(versions, start=1):
        if not v.erased:
            yield from chunks_of(v)
        if progress is not None and n % 100 == 0:
            progress(n)


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class RowSpool:
    """Chunk row fields kept in a temporary file as they pass, read back in order: a rebuild
    writes the chunk rows after the index, and a million chunks' fields held in memory were
    about 400 MiB of its peak (before that, their text too: 1.9 GB)."""

    BATCH = 10_000

    def __init__(self) -> None:
        # kept open as long as the spool (its owner closes it): a context manager cannot span
        self._file = tempfile.TemporaryFile(prefix="ameide-chunk-rows-")  # noqa: SIM115
        self._batch: list[ChunkRowKey] = []
        self.count = 0
        self.version_ids: set[str] = set()

    def append(self, key: ChunkRowKey) -> None:
        self._batch.append(key)
        self.count += 1
        self.version_ids.add(key[1])
        if len(self._batch) >= self.BATCH:
            self._spill()

    def _spill(self) -> None:
        if self._batch:
            self._file.write(_encode(self._batch).encode("utf-8") + b"\n")
            self._batch = []

    def __iter__(self) -> Iterator[ChunkRowKey]:
        """Every row's fields, in the order they were appended (read once)."""
        self._spill()
        self._file.seek(0)
        for line in self._file:  # a batch a line
            yield from map(tuple, json.loads(line))

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RowSpool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def kept(chunks: Iterable[IndexedChunk], into: RowSpool) -> Iterator[IndexedChunk]:
    """``chunks``, appending each one's row fields (not its text) to ``into`` as it passes."""
    for chunk in chunks:
        into.append(chunk_row_key(chunk))
        yield chunk
