"""Writing the two indexes: one document per chunk and one per version, committed together.

Chunks commit first, so a crash in between leaves the watermark behind and replaying repairs
both. Erasure rewrites the segments holding deleted documents, so erased words leave the files.
A rebuild bulk-loads in batches (one huge commit spills to disk and is far slower).
"""

# Whoosh's own annotations are partial; strict mypy would flag every call into it.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from whoosh.codec.whoosh3 import W3Codec
from whoosh.reading import SegmentReader
from whoosh.writing import IndexWriter, SegmentWriter

from projection import keyword_index as port
from projection.whoosh.schema import LENGTH, Stems, micros
from projection.whoosh.segments import Side

# Uncompressed posting blocks: zlib took ~3% of indexing and ~8% of a search, for little space.
_WRITER_OPTIONS: dict[str, Any] = {"limitmb": 256, "timeout": 10.0, "codec": W3Codec(compression=0)}
_REBUILD_BATCH = 20_000
_CHUNK_HIT_FIELDS = ("chunk_id", "chunk_key", "heading_path", "start", "end")
_VERSION_HIT_FIELDS = (
    *("element_id", "version_id", "repository_key", "source_kind", "type_key"),
    *("recorded_at", "retired_at", "superseded"),
)


def fill(sides: tuple[Side, Side], groups: Iterable[list[port.IndexedChunk]], stems: Stems) -> None:
    """Bulk-load versions into empty indexes, committing every ``_REBUILD_BATCH`` chunks.

    Whoosh sorts a writer's postings at commit; one huge commit spills to disk and is far slower.
    Postings are grouped by word as they come (:class:`GroupingPool`) rather than sorted one by
    one at commit.
    """
    remaining = iter(groups)
    while True:
        with writing(sides, merge=False) as writers:
            for writer in writers:
                _group_postings(writer)
            added = 0
            for group in remaining:
                add_version(writers, group, stems)
                added += len(group)
                if added >= _REBUILD_BATCH:
                    break
            else:
                return


@contextmanager
def writing(sides: tuple[Side, ...], **commit: Any) -> Iterator[tuple[IndexWriter, ...]]:
    """Writers for the sides, committed in order (chunks first) or all cancelled on error.

    Chunks commit first: a crash in between leaves the watermark behind, and replaying the
    changes after the watermark repairs both indexes.
    """
    writers: list[IndexWriter] = []
    try:
        writers.extend(side.ix.writer(**_WRITER_OPTIONS) for side in sides)
        yield tuple(writers)
    except BaseException:
        for writer in writers:
            writer.cancel()
        raise
    for number, (writer, side) in enumerate(zip(writers, sides, strict=True)):
        try:
            writer.commit(**commit)
        except BaseException:
            for later in writers[number + 1 :]:
                later.cancel()
            raise
        finally:
            side.stale = True


def add_version(
    writers: tuple[IndexWriter, ...], group: list[port.IndexedChunk], stems: Stems
) -> None:
    """Add one version: a document per chunk and one for the whole version.

    Each text is analysed and counted once; the version document adds up its chunks' counts.
    """
    first = group[0]
    title = Counter(stems(first.title))
    indexed = {
        "version_id": first.version_id,
        "element_id": first.element_id,
        "access": f"{first.classification_rank}:{first.repository_key}",
        "source_kind": first.source_kind,
        "type_key": first.type_key,
        "superseded": "yes" if first.superseded else None,
        "retired_at": micros(first.retired_at),
        "effective_from": micros(first.effective_from),
        "effective_to": micros(first.effective_to),
        "recorded_at": micros(first.recorded_at),
        "title": title,
        "title" + LENGTH: title.total(),
    }
    indexed = {name: value for name, value in indexed.items() if value is not None}  # left out
    stored = {name: getattr(first, name) for name in _VERSION_HIT_FIELDS}
    body: Counter[str] = Counter()
    headings: dict[str, Counter[str]] = {}
    for chunk in sorted(group, key=lambda chunk: chunk.start):
        text = Counter(stems(chunk.text))
        heading = headings.get(chunk.heading_path)
        if heading is None:
            heading = headings[chunk.heading_path] = Counter(stems(chunk.heading_path))
        body.update(text)
        hit = stored | {name: getattr(chunk, name) for name in _CHUNK_HIT_FIELDS}
        writers[0].add_document(
            **indexed,
            heading=heading,
            heading_length=heading.total(),
            text=text,
            text_length=text.total(),
            hit=hit,
        )
    all_headings: Counter[str] = Counter()
    for heading in headings.values():
        all_headings.update(heading)
    hit = stored | {"title": first.title}
    writers[1].add_document(
        **indexed,
        heading=all_headings,
        heading_length=all_headings.total(),
        text=body,
        text_length=body.total(),
        hit=hit,
    )


class GroupingPool:
    """A writer's postings grouped per (field, word) as documents are added, yielded in the
    order Whoosh's sorting pool yields them: sorted by (field, word, document, weight, value).

    Whoosh's ``PostingPool`` keeps every posting as a tuple and sorts them all at commit (plus
    a size estimate per posting): a quarter of a corpus rebuild. For a bulk load into a new
    segment (no segments merged into the pool) grouping gives the same postings in the same
    order, so the segment files are the same.
    """

    def __init__(self) -> None:
        self._words: defaultdict[tuple[str, bytes], list[tuple[int, float, bytes | None]]] = (
            defaultdict(list)
        )
        self.fieldnames: set[str] = set()

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        fieldname, word, docnum, weight, value = item
        self._words[fieldname, word].append((docnum, weight, value))

    def iter_postings(self) -> Iterator[tuple[str, bytes, int, float, bytes | None]]:
        words = self._words
        self.fieldnames = {fieldname for fieldname, _ in words}
        for key in sorted(words):
            fieldname, word = key
            postings = words[key]
            postings.sort()  # documents come in order: one pass
            for docnum, weight, value in postings:
                yield fieldname, word, docnum, weight, value

    def cleanup(self) -> None:
        self._words.clear()


def _group_postings(writer: IndexWriter) -> None:
    """Give a bulk-loading ``SegmentWriter`` a :class:`GroupingPool` (another writer keeps
    its own)."""
    if isinstance(writer, SegmentWriter) and not writer.pool.runs and not writer.pool.current:
        writer.pool = GroupingPool()


def purge_deleted(writer: Any, segments: list[Any]) -> list[Any]:
    """Merge policy: rewrite every segment holding deleted documents, keep the others."""
    kept = []
    for segment in segments:
        if segment.has_deletions():
            reader = SegmentReader(writer.storage, writer.schema, segment)
            writer.add_reader(reader)
            reader.close()
        else:
            kept.append(segment)
    return kept
