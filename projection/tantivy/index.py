"""``TantivyKeywordIndex``: the port's methods over a directory's state and two tantivy indexes.

The directory is laid out like the Whoosh engine's (the same code keeps it,
:mod:`projection.generational`): ``state.json`` (current generation, watermark with its open
gaps, :data:`~projection.tantivy.schema.FORMAT`) and ``generation-<n>/`` with two tantivy
indexes — ``chunks`` (one document per chunk) and ``versions`` (one per version: title, every
heading, the whole body), so each keeps its own BM25 statistics.

- Query text is analysed like the indexed text into words (never parsed: ``title:x``, ``AND``
  or ``*`` are words); every word counts (an OR of per-field term queries, boosted like the
  Whoosh engine's fields). The :class:`~projection.keyword_index.IndexFilter` is part of the
  query (a zero-scoring ``Must`` plus ``MustNot`` clauses), so ``limit`` fills from permitted
  documents only and the top list is exact.
- **BM25 statistics** never count what the caller cannot read: the scores are computed here
  (:mod:`~projection.tantivy.statistics`) from the statistics of the documents the caller may
  read as of the read's instant, tantivy only ranking the candidates, which are rescored until
  none further down can enter — the exact list, so content the caller cannot see moves neither
  a score nor an order (tantivy's own statistics cover the whole index).
- Processes share a directory: every change holds the write lock (one tantivy writer at a
  time) and first follows ``state.json``; a search reloads its reader when ``meta.json`` (one
  ``stat``) changed, i.e. when any process committed. The state, generations and watermark —
  set aside when of another format or engine, noticed when deleted — are the
  engine-independent :class:`~projection.generational.GenerationalIndex`.
"""

from __future__ import annotations

import functools
import json
import logging
import operator
import os
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields as dataclass_fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

import tantivy

from projection import keyword_index as port
from projection.generational import GenerationalIndex
from projection.keyword_index import MAX_QUERY_TERMS, QUESTION_WORDS
from projection.lru import Lru
from projection.tantivy import statistics
from projection.tantivy.schema import (
    FORMAT,
    LENGTH_FIELDS,
    SCOPED_FIELDS,
    STORED,
    TERMS,
    TERMS_SEPARATOR,
    Terms,
    analyzer,
    key,
    long_allowlists,
    micros,
    partition,
    schema,
)

ENGINE = "tantivy"
# Field weights: the Whoosh engine's (projection.whoosh.scoring, measured there).
CHUNK_FIELD_WEIGHTS = (("title", 1.0), ("heading", 0.5), ("text", 1.0))
VERSION_FIELD_WEIGHTS = (("title", 1.0), ("heading", 0.5), ("text", 1.0))
_WRITE_HEAP = 64_000_000  # bytes per incremental writer (tantivy's floor is 15 MB a thread)
_REBUILD_HEAP = 256_000_000  # bytes per rebuild writer, split between its threads
_REBUILD_THREADS = 2
_VERSION_HIT_FIELDS = (
    *("element_id", "version_id", "repository_key", "title", "source_kind", "type_key"),
    *("recorded_at", "retired_at", "superseded"),
)
_HIT_FIELDS = (
    *("chunk_id", "chunk_key", "heading_path", "start", "end", "element_id", "version_id"),
    *("repository_key", "source_kind", "type_key", "recorded_at", "retired_at", "superseded"),
)
_CHUNK_FIELDS = tuple(field.name for field in dataclass_fields(port.IndexedChunk))
_chunk_values = operator.attrgetter(*_CHUNK_FIELDS)  # one C call per chunk
_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # made once
log = logging.getLogger("ameide.index")


class _Side:
    """One tantivy index of a generation, with a reader reloaded when ``meta.json`` changes."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = directory / name
        self.path.mkdir(exist_ok=True)
        self.ix = tantivy.Index(schema(), str(self.path), reuse=True)
        self.ix.config_reader("Manual", 0)
        self.schema = self.ix.schema
        self._seen: tuple[int, int, int] | None = self._meta_key()
        self._lock = threading.Lock()
        self.epoch = 0
        """Counts reloads: what :mod:`~projection.tantivy.statistics` keeps is per epoch."""
        self.kept = Lru(statistics.KEPT)
        self.documents = Lru(statistics.DOCUMENTS_KEPT)

    def _meta_key(self) -> tuple[int, int, int] | None:
        try:
            stat = os.stat(self.path / "meta.json")
        except OSError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def searcher(self) -> tantivy.Searcher:
        """The current searcher, reloaded first if any process committed since."""
        return self.snapshot()[0]

    def snapshot(self) -> tuple[tantivy.Searcher, int]:
        """The current searcher with its epoch, reloaded first if any process committed since."""
        key = self._meta_key()
        with self._lock:
            if key is not None and key != self._seen:
                self.ix.reload()
                self._seen = key
                self.epoch += 1
            return self.ix.searcher(), self.epoch

    def reloaded(self) -> None:
        """Follow this process's commit at once."""
        with self._lock:
            self.ix.reload()
            self._seen = self._meta_key()
            self.epoch += 1

    def writer(self, *, heap: int = _WRITE_HEAP, threads: int = 1) -> tantivy.IndexWriter:
        return self.ix.writer(heap_size=heap, num_threads=threads)


class TantivyKeywordIndex(GenerationalIndex[tuple[_Side, _Side]]):
    """A :class:`~projection.keyword_index.KeywordIndex` on tantivy, kept in ``directory``
    (its state and generations: :class:`~projection.generational.GenerationalIndex`)."""

    engine = ENGINE
    format = FORMAT

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._analyzer = analyzer()
        self._terms = Terms()
        self._question_words = frozenset(self._analyzer.analyze(" ".join(QUESTION_WORDS)))
        # search_both's second thread (started at the first submit)
        self._helper = ThreadPoolExecutor(2, thread_name_prefix="tantivy-search")
        super().__init__(directory)

    def _open_sides(self, path: Path) -> tuple[_Side, _Side]:
        return _Side(path, "chunks"), _Side(path, "versions")

    def _build(self, path: Path, groups: Iterable[list[port.IndexedChunk]]) -> tuple[_Side, _Side]:
        sides = self._open_sides(path)
        writers = [side.writer(heap=_REBUILD_HEAP, threads=_REBUILD_THREADS) for side in sides]
        for group in groups:
            _add_version(sides, writers, group, self._terms)
        _commit(sides, writers)
        return sides

    # -- writing ------------------------------------------------------------------------------

    def replace_versions(
        self,
        chunks: Iterable[port.IndexedChunk],
        *,
        version_ids: Collection[str] = (),
        position: int | None = None,
    ) -> None:
        """Replace everything indexed for ``version_ids`` and for the versions of ``chunks``."""
        grouped = port.chunks_by_version(chunks)
        with self.exclusive():
            if version_ids or grouped:
                self._write(set(version_ids) | grouped.keys(), grouped.values())
            self._save_state(position=position)

    def delete_versions(self, version_ids: Collection[str], *, position: int | None = None) -> None:
        """Erase versions, words included: the index is rewritten from its stored chunks
        without them (a deleted tantivy document keeps its words until a merge, which
        tantivy-py cannot ask for), as a new generation like a rebuild — unless it holds none
        of them (the term dictionary still counts deleted documents, so none is left out)."""
        with self.exclusive():
            searchers = [side.searcher() for side in self._sides]
            erased = {v for v in version_ids if any(s.doc_freq("version_id", v) for s in searchers)}
            if erased:
                kept = [c for c in self._stored_chunks() if c.version_id not in erased]
                kept_at = self.last_applied_position() if position is None else position
                self.rebuild(kept, position=kept_at, gaps=self.open_gaps())
            self._save_state(position=position)

    def _write(self, deletions: set[str], groups: Iterable[list[port.IndexedChunk]]) -> None:
        sides = self._sides
        writers = [side.writer() for side in sides]
        try:
            for version_id in sorted(deletions):
                for writer in writers:
                    writer.delete_documents_by_term("version_id", version_id)
            for group in groups:
                _add_version(sides, writers, group, self._terms)
        except BaseException:
            for writer in writers:
                writer.rollback()
                writer.wait_merging_threads()
            raise
        _commit(sides, writers)

    # -- searching ----------------------------------------------------------------------------

    def search(
        self,
        query_text: str,
        index_filter: port.IndexFilter,
        limit: int = 10,
        *,
        per_version: int | None = None,
    ) -> list[port.Hit]:
        """Best permitted chunks for ``query_text``, at most ``per_version`` of each version."""
        found = self._search(0, CHUNK_FIELD_WEIGHTS, query_text, index_filter, limit, per_version)
        return [
            port.Hit(**{name: stored[name] for name in _HIT_FIELDS}, score=score)
            for stored, score in found
        ]

    def search_versions(
        self, query_text: str, index_filter: port.IndexFilter, limit: int = 10
    ) -> list[port.VersionHit]:
        """Best permitted whole versions for ``query_text``."""
        found = self._search(1, VERSION_FIELD_WEIGHTS, query_text, index_filter, limit, None)
        return [port.VersionHit(**stored, score=score) for stored, score in found]

    def words(self, text: str) -> list[str]:
        """See :meth:`projection.keyword_index.KeywordIndex.words`."""
        return self._terms(text).split()

    def query_words(self, text: str) -> list[str]:
        """See :meth:`projection.keyword_index.KeywordIndex.query_words`."""
        analysed = list(dict.fromkeys(self._analyzer.analyze(text)))
        # the words of how a question is asked say nothing of its topic (see QUESTION_WORDS)
        terms = [w for w in analysed if w not in self._question_words] or analysed
        return terms[:MAX_QUERY_TERMS]

    def search_both(
        self, query_text: str, index_filter: port.IndexFilter, limit: int, per_version: int
    ) -> tuple[list[port.Hit], list[port.VersionHit]]:
        """Both searches at once: the whole versions on a helper thread while this one searches
        the chunks. tantivy searches without the GIL, so on two cores a read waits for the
        longer search, not both (about 1.5 ms of a read at a million chunks)."""
        versions = self._helper.submit(self.search_versions, query_text, index_filter, limit)
        try:
            chunks = self.search(query_text, index_filter, limit, per_version=per_version)
        finally:
            found = versions.result()
        return chunks, found

    def _search(
        self,
        which: int,
        weights: tuple[tuple[str, float], ...],
        query_text: str,
        index_filter: port.IndexFilter,
        limit: int,
        per_version: int | None,
    ) -> list[tuple[dict[str, Any], float]]:
        if limit < 1 or (per_version is not None and per_version < 1):
            raise ValueError("limit and per_version must be positive")
        terms = self.query_words(query_text)
        if not terms or index_filter.admits_nothing():
            return []
        self._follow()
        side = self._sides[which]
        searcher, epoch = side.snapshot()
        return statistics.search(
            side.kept,
            side.documents,
            epoch,
            searcher,
            side.schema,
            terms,
            weights,
            index_filter,
            limit,
            per_version,
            _long_allowlists(index_filter),
            _read,
        )

    # -- state (the rest: GenerationalIndex) --------------------------------------------

    def doc_count(self) -> int:
        """Number of chunks indexed."""
        self._follow()
        return int(self._sides[0].searcher().num_docs)

    def version_count(self) -> int:
        """Number of versions indexed."""
        self._follow()
        return int(self._sides[1].searcher().num_docs)

    def close(self) -> None:
        """Release the generation; the object cannot be used afterwards."""
        super().close()
        self._helper.shutdown(wait=True)

    def _stored_chunks(self) -> list[port.IndexedChunk]:
        """Every indexed chunk, from the chunk side's stored fields, each version's together."""
        searcher = self._sides[0].searcher()
        total = int(searcher.num_docs)
        if not total:
            return []
        found = searcher.search(tantivy.Query.all_query(), limit=total, count=False).hits
        chunks = [_stored(searcher, address) for _, address in found]
        chunks.sort(key=lambda c: (c["version_id"], c["start"], c["chunk_id"]))
        return [port.IndexedChunk(**chunk) for chunk in chunks]


def _commit(sides: Sequence[_Side], writers: Sequence[tantivy.IndexWriter]) -> None:
    """Commit the chunk side first: a crash in between leaves the watermark behind, and
    replaying the changes after it repairs both. Each writer is then released (its merges
    finished), so another process can write."""
    for side, writer in zip(sides, writers, strict=True):
        writer.commit()
        writer.wait_merging_threads()
        side.reloaded()


def _add_version(
    sides: Sequence[_Side],
    writers: Sequence[tantivy.IndexWriter],
    group: list[port.IndexedChunk],
    terms: Terms,
) -> None:
    """Add one version: a document per chunk and one for the whole version, their text
    analysed here (see :func:`~projection.tantivy.schema.index_analyzer`), once for both."""
    first = group[0]
    indexed: dict[str, Any] = {
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
        "replaced_at": micros(first.replaced_at),
        "title": terms(first.title),
        "version_key": key(first.version_id),
        "element_key": key(first.element_id),
    }
    indexed = {name: value for name, value in indexed.items() if value is not None}
    chunks_side, versions_side = sides
    ordered = sorted(group, key=lambda chunk: chunk.start)
    headings = {path: terms(path) for path in dict.fromkeys(c.heading_path for c in ordered)}
    texts = [terms(chunk.text) for chunk in ordered]
    scope = partition(indexed["access"], replaced=first.replaced_at is not None)
    scoped_title = {scope: indexed["title"]}
    title_length = _length(indexed["title"])
    lengths = {path: _length(heading) for path, heading in headings.items()}
    text_lengths = [_length(text) for text in texts]
    for chunk, text, text_length in zip(ordered, texts, text_lengths, strict=True):
        stored = _json(_chunk_values(chunk)).encode("utf-8")  # by position: smaller
        fields = {
            **indexed,
            "heading": headings[chunk.heading_path],
            "text": text,
            STORED: stored,
            TERMS: _terms_value(indexed["title"], headings[chunk.heading_path], text),
            LENGTH_FIELDS["title"]: title_length,
            LENGTH_FIELDS["heading"]: lengths[chunk.heading_path],
            LENGTH_FIELDS["text"]: text_length,
            SCOPED_FIELDS["title"]: scoped_title,
            SCOPED_FIELDS["heading"]: {scope: headings[chunk.heading_path]},
            SCOPED_FIELDS["text"]: {scope: text},
        }
        writers[0].add_document(tantivy.Document.from_dict(fields, chunks_side.schema))
    hit = {name: getattr(first, name) for name in _VERSION_HIT_FIELDS}
    all_headings = " ".join(heading for heading in headings.values() if heading)
    body = " ".join(t for t in texts if t)
    fields = {
        **indexed,
        "heading": list(headings.values()),
        "text": texts,
        STORED: _json(hit).encode("utf-8"),
        TERMS: _terms_value(indexed["title"], all_headings, body),
        LENGTH_FIELDS["title"]: title_length,
        LENGTH_FIELDS["heading"]: sum(lengths.values()),
        LENGTH_FIELDS["text"]: sum(text_lengths),
        SCOPED_FIELDS["title"]: scoped_title,
        SCOPED_FIELDS["heading"]: {scope: all_headings},
        SCOPED_FIELDS["text"]: {scope: body},
    }
    writers[1].add_document(tantivy.Document.from_dict(fields, versions_side.schema))


def _terms_value(title: str, heading: str, text: str) -> bytes:
    """The stored :data:`~projection.tantivy.schema.TERMS` of a document."""
    return TERMS_SEPARATOR.join((title, heading, text)).encode("utf-8")


def _length(terms: str) -> int:
    """The number of terms in a field's analysed text (what tantivy counts as its length)."""
    return terms.count(" ") + 1 if terms else 0


def _read(document: tantivy.Document) -> tuple[dict[str, Any], list[str]]:
    """A document's stored hit (a chunk's: every field) and its analysed title, headings and
    text (stored: analysing a chunk's text again took a third of a search)."""
    hit, analysed = document.get_first(STORED), document.get_first(TERMS)
    assert isinstance(hit, bytes)
    assert isinstance(analysed, bytes)
    found = json.loads(hit)
    if isinstance(found, list):  # a chunk: its fields by position
        found = dict(zip(_CHUNK_FIELDS, found, strict=True))
    return found, analysed.decode("utf-8").split(TERMS_SEPARATOR)


def _stored(searcher: tantivy.Searcher, address: tantivy.DocAddress) -> dict[str, Any]:
    value = searcher.doc(address).get_first(STORED)
    assert isinstance(value, bytes)  # every document is written with it
    found = json.loads(value)
    if isinstance(found, list):  # a chunk: its fields by position
        return dict(zip(_CHUNK_FIELDS, found, strict=True))
    result: dict[str, Any] = found
    return result


@functools.lru_cache(maxsize=32)
def _long_allowlists(index_filter: port.IndexFilter) -> Mapping[str, frozenset[int]]:
    """:func:`~projection.tantivy.schema.long_allowlists`, kept for the filters of the last
    reads (hashing thousands of ids is the costly part; reads repeat selections)."""
    return MappingProxyType(long_allowlists(index_filter))
