"""``WhooshKeywordIndex``: the :class:`~projection.keyword_index.KeywordIndex` port on Whoosh.

The only module that imports Whoosh (so a Whoosh upgrade touches one file, which is why it is
longer than most). A directory holds ``state.json`` (current generation, watermark and
:data:`FORMAT`) and ``generation-<n>/`` with two Whoosh indexes — ``chunks`` (one document per
chunk) and ``versions`` (one per version: title, every heading, the whole body), so each keeps
its own BM25 statistics.

- User text is analysed like the indexed text (English stemming) into words: it never reaches a
  query parser, so ``title:x``, ``AND`` or ``*`` are words. Every word counts (an OR).
- Searching is term at a time over Whoosh's posting blocks: BM25 (k1 1.2, b 0.75) per word and
  weighted field, summed per document. Whoosh's own matcher tree walked every matching document
  through several Python calls and was 10x slower; the exact top list is then cut by score.
- Filters are sets of admitted document numbers per segment, applied while scoring, so
  ``limit`` fills from permitted documents. Segments never change, so the documents of each
  criterion and each filter's admitted set are cached per segment (and deletion count): after a
  commit only new segments are filtered. Identifier allowlists use one value→documents map.
- Word counts of each field live in a column read in one go per segment; Whoosh does not keep
  lengths itself ("scorable" fields cost a column lookup for every posting written).
- One searcher per index is reused until this process commits. Writes are serialised by a lock;
  one process should own a directory (Whoosh's file lock refuses a second concurrent writer).
- Erasure rewrites the segments holding deleted documents, so erased words leave the files.
- An index of another :data:`FORMAT` is set aside: the new one starts empty and
  :meth:`~WhooshKeywordIndex.needs_rebuild` tells the owner to rebuild it.
"""

# Whoosh's own annotations are partial; strict mypy would flag every call into it.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import functools
import heapq
import itertools
import json
import os
import re
import shutil
import sys
import threading
from array import array
from collections import Counter, OrderedDict
from collections.abc import (
    Callable,
    Collection,
    Generator,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
)
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

from whoosh import fields, formats, index, scoring
from whoosh.analysis.analyzers import StemmingAnalyzer
from whoosh.codec.whoosh3 import W3Codec, W3LeafMatcher
from whoosh.columns import NumericColumn
from whoosh.matching.wrappers import FilterMatcher
from whoosh.query.qcore import Query
from whoosh.query.ranges import NumericRange
from whoosh.query.terms import Term
from whoosh.reading import SegmentReader, TermNotFound
from whoosh.searching import Searcher
from whoosh.writing import IndexWriter

from projection import keyword_index as port

FORMAT = 2
"""What the index files hold; bump it when the schema or the indexed values change."""
MAX_QUERY_TERMS = 32
_B, _K1 = 0.75, 1.2  # BM25F parameters (Whoosh's defaults)
CHUNK_FIELD_WEIGHTS = (("title", 2.0), ("heading", 1.5), ("text", 1.0))
VERSION_FIELD_WEIGHTS = (("title", 3.0), ("heading", 1.5), ("text", 1.0))
# Uncompressed posting blocks: zlib took ~3% of indexing and ~8% of a search, for little space.
_WRITER_OPTIONS: dict[str, Any] = {"limitmb": 256, "timeout": 10.0, "codec": W3Codec(compression=0)}
_FILTER_CACHE_SIZE = 16
_SEGMENT_CACHE_SIZE = 2_000
_ALLOWLISTED = frozenset({"version_id", "element_id"})  # filtered by long lists of values
_NO_DOCS: frozenset[int] = frozenset()
# Read in bulk through their internals (whoosh3 is pinned); other classes take the public way.
_BLOCK_MATCHER: Any = W3LeafMatcher
_COLUMN_READER: Any = NumericColumn.Reader
_REBUILD_BATCH = 20_000
_Stems = Callable[[str], list[str]]
_TEXT_FIELDS = ("title", "heading", "text")
_WHOOSH_WORD_GROUPED = r"[\w\*]+(\.?[\w\*]+)*"  # RegexTokenizer's default expression
_WHOOSH_WORD = r"[\w\*]+(?:\.?[\w\*]+)*"
_LENGTH = "_length"  # suffix of the column holding each document's word count of a field
_T = TypeVar("_T")
_CHUNK_HIT_FIELDS = ("chunk_id", "chunk_key", "heading_path", "start", "end")
_VERSION_HIT_FIELDS = (
    *("element_id", "version_id", "repository_key", "source_kind", "type_key"),
    *("recorded_at", "retired_at", "superseded"),
)


class _Counts(formats.Format):
    """Postings whose weight is the word's frequency, with no other value (Whoosh's
    ``Frequency`` also stores every frequency again as four value bytes)."""

    posting_size = 0

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Any:
        counts = Counter(token.text for token in analyzer(value, **kwargs))
        return ((word, count, float(count), b"") for word, count in counts.items())


class _Words(fields.FieldType):
    """Text given already analysed, as ``{word: frequency}`` (the index stems each text once
    for both documents). Not "scorable": searching computes BM25 from the ``<name>_length``
    column, so Whoosh need not look up a length for every posting it writes."""

    def __init__(self, analyzer: Any) -> None:
        super().__init__(_Counts(), analyzer)

    def index(self, value: Any, **kwargs: Any) -> Generator[tuple[bytes, int, float, bytes]]:
        counts = value if isinstance(value, Mapping) else Counter(value)
        for word, count in counts.items():
            yield word.encode("utf-8"), count, float(count), b""


def _schema() -> fields.Schema:
    """One schema for both indexes; ``hit`` stores the fields of a Hit / VersionHit."""
    analyzer = StemmingAnalyzer()
    time: dict[str, Any] = {
        "numtype": int,
        "bits": 64,
        "shift_step": 16,
    }  # microseconds, 4 trie terms a value
    return fields.Schema(
        version_id=fields.ID(),
        element_id=fields.ID(),
        access=fields.ID(),  # "<rank>:<repository key>": one term per readable pair
        source_kind=fields.ID(),
        type_key=fields.ID(),
        superseded=fields.ID(),  # these four are left out when unset
        retired_at=fields.NUMERIC(**time),
        effective_from=fields.NUMERIC(**time),
        effective_to=fields.NUMERIC(**time),
        recorded_at=fields.NUMERIC(**time),
        title=_Words(analyzer),
        heading=_Words(analyzer),
        text=_Words(analyzer),
        **{f"{name}{_LENGTH}": fields.COLUMN(NumericColumn("I")) for name in _TEXT_FIELDS},
        hit=fields.STORED(),
    )


def _schema_is_current(schema: fields.Schema) -> bool:
    """Whether an index's schema has this module's fields and field types."""
    expected = _schema()
    return schema.names() == expected.names() and all(
        type(schema[name]) is type(expected[name]) for name in expected.names()
    )


class _Side:
    """One Whoosh index of the directory, with its reusable searcher and per-segment caches."""

    def __init__(self, directory: Path, name: str) -> None:
        if index.exists_in(str(directory), indexname=name):
            self.ix = index.open_dir(str(directory), indexname=name)
        else:
            self.ix = index.create_in(str(directory), _schema(), indexname=name)
        self.stale = False
        self.closed = False
        self._searcher: Searcher | None = None
        self._leaves: list[_Leaf] = []
        self._lock = threading.Lock()
        self._admitted: OrderedDict[tuple[str, int, port.IndexFilter], set[int]] = OrderedDict()
        self._by_value: dict[tuple[str, Hashable], dict[str, frozenset[int]]] = {}
        self._segment_docs: OrderedDict[tuple[str, Hashable], frozenset[int]] = OrderedDict()
        self._lengths: dict[tuple[str, str], tuple[array[int], int]] = {}
        self._norms: dict[str, tuple[float, float]] = {}  # per field, for the current searcher

    @contextmanager
    def searching(self) -> Iterator[Searcher]:
        """The shared searcher, reopened first if this process committed since."""
        with self._lock:
            if self.closed:  # replaced by a rebuild: the caller retries on the new one
                raise _Replaced
            if self._searcher is None or self.stale:
                self.stale = False  # before opening: a commit racing the open marks it again
                # Not Searcher.refresh(): in whoosh3 3.54 it keeps replaced segments around.
                if self._searcher is not None:
                    self._searcher.close()
                self._searcher = self.ix.searcher(weighting=scoring.BM25F(B=_B, K1=_K1))
                self._leaves = [_Leaf(*leaf) for leaf in self._searcher.leaf_searchers()]
                live = {leaf.key for leaf in self._leaves}
                self._lengths = {k: v for k, v in self._lengths.items() if k[0] in live}
                self._by_value = {k: v for k, v in self._by_value.items() if k[0] in live}
                self._norms = {}
            yield self._searcher

    def scores(
        self,
        searcher: Searcher,
        terms: list[str],
        weights: tuple[tuple[str, float], ...],
        index_filter: port.IndexFilter,
    ) -> dict[int, float]:
        """BM25F score of every admitted document matching a word (call inside :meth:`searching`).

        Term at a time, straight from the posting blocks: per word and field
        ``boost · idf · tf·(k1+1) / (tf + k1·(1 - b + b·length/average length))``, summed as
        Whoosh's ``Or`` of weighted ``Term`` queries would (idf and average lengths from the
        whole index), without its per-document matcher tree, which took most of a search.
        """
        scored: dict[int, float] = {}
        admitted = self.admitted(index_filter)
        if not any(admitted):  # also spares an empty index Whoosh's idf (log of 0 documents)
            return scored
        normalised = {name: self._normalisation(name) for name, _ in weights}
        for term in terms:
            for name, boost in weights:
                scale = boost * searcher.idf(name, term) * (_K1 + 1)
                for leaf, allowed in zip(self._leaves, admitted, strict=True):
                    if allowed:
                        postings = _postings(leaf.reader, name, term)
                        lengths = self.lengths(leaf, name)[0]
                        norm = normalised[name]
                        _accumulate(scored, postings, allowed, leaf.offset, scale, norm, lengths)
        return scored

    def _normalisation(self, name: str) -> tuple[float, float]:
        """BM25's length normalisation ``k1·(1 - b) + k1·b/average · length`` as its two terms."""
        found = self._norms.get(name)
        if found is None:
            total = sum(self.lengths(leaf, name)[1] for leaf in self._leaves)
            documents = sum(leaf.reader.doc_count_all() for leaf in self._leaves)
            average = total / documents if total else 1.0
            found = self._norms[name] = (_K1 * (1 - _B), _K1 * _B / average)
        return found

    def admitted(self, index_filter: port.IndexFilter) -> list[set[int]]:
        """Per segment, the live documents the filter admits (call inside :meth:`searching`).

        Cached per segment and deletion count, so after a commit only new or changed segments
        are filtered again.
        """
        docs = []
        for leaf in self._leaves:
            key = (leaf.key, leaf.deleted, index_filter)
            local = self._admitted.get(key)
            if local is None:
                local = _docs_admitted(index_filter, functools.partial(self._docs, leaf))
                if leaf.deleted:
                    local -= leaf.reader.deleted_docs_set
                self._admitted[key] = local
            self._admitted.move_to_end(key)
            docs.append(local)
        _trim(self._admitted, _FILTER_CACHE_SIZE * max(4, len(self._leaves)))
        return docs

    def _docs(self, leaf: _Leaf, criterion: tuple[Any, ...]) -> frozenset[int]:
        """A segment's documents matching one criterion, cached (segments never change).

        Deleted documents stay in the cached sets; :meth:`admitted` removes them.
        """
        kind, name, *value = criterion
        if kind == "term" and name in _ALLOWLISTED:  # thousands of values: one map per field
            key: tuple[str, Hashable] = (leaf.key, name)
            by_value = self._by_value.get(key)
            if by_value is None:
                by_value = self._by_value[key] = _docs_by_value(leaf.reader, name)
            return by_value.get(value[0], _NO_DOCS)
        key = (leaf.key, criterion)
        local = self._segment_docs.get(key)
        if local is None:
            local = frozenset(leaf.searcher.docs_for_query(_query(criterion)))
            self._segment_docs[key] = local
            _trim(self._segment_docs, _SEGMENT_CACHE_SIZE)
        return local

    def lengths(self, leaf: _Leaf, name: str) -> tuple[array[int], int]:
        """The segment's word count of field ``name`` for each document, and their sum."""
        key = (leaf.key, name)
        found = self._lengths.get(key)
        if found is None:
            lengths = _lengths(leaf.reader, name + _LENGTH)
            found = self._lengths[key] = (lengths, sum(lengths))
        return found

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self._searcher is not None:
                self._searcher.close()
                self._searcher = None
            self.ix.close()


class _Leaf:
    """One segment of the current searcher: its searcher, reader and document number offset."""

    def __init__(self, searcher: Searcher, offset: int) -> None:
        reader: Any = searcher.reader()  # a SegmentReader (an EmptyReader when empty)
        segment = reader.segment()
        self.searcher = searcher
        self.reader = reader
        self.offset = offset
        self.key: str = segment.segment_id() if segment is not None else f"unsaved-{id(self)}"
        self.deleted: int = len(reader.deleted_docs_set) if reader.has_deletions() else 0


class _Replaced(Exception):
    """A rebuild swapped the index while a search was about to use the old one."""


class WhooshKeywordIndex:
    """A :class:`~projection.keyword_index.KeywordIndex` kept in ``directory``.

    The Whoosh indexes live in ``generation-<n>/``; ``state.json`` names the current generation
    and the watermark. A rebuild fills a new generation (committing as it goes, which keeps large
    rebuilds fast) and switches both in one atomic rename, so readers never see a partial index
    and a crashed rebuild leaves the old one current.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._directory = Path(directory)
        self._directory.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        try:
            state = json.loads((self._directory / "state.json").read_text("utf-8"))
        except FileNotFoundError:
            state = {"generation": 1, "position": None, "format": FORMAT}
        self._state = state
        self._outdated: bool = state.get("format", 1) != FORMAT
        if not self._outdated:
            self._sides = self._open_generation(state["generation"])
            self._outdated = not all(_schema_is_current(side.ix.schema) for side in self._sides)
            if self._outdated:
                for side in self._sides:
                    side.close()
        if self._outdated:  # files of another format: start empty, to be rebuilt by the owner
            self._state = {"generation": state["generation"] + 1, "position": None}
            self._sides = self._open_generation(self._state["generation"])
            self._save_state(position=None, always=True)
        for leftover in self._directory.glob("generation-*"):
            if leftover != self._generation_path(self._state["generation"]):
                shutil.rmtree(leftover, ignore_errors=True)  # from a crashed rebuild
        self._analyzer = self._sides[0].ix.schema["text"].analyzer
        self._stems = _stemmer(self._analyzer)

    def replace_versions(
        self,
        chunks: Iterable[port.IndexedChunk],
        *,
        version_ids: Collection[str] = (),
        position: int | None = None,
    ) -> None:
        """Replace everything indexed for ``version_ids`` and for the versions of ``chunks``."""
        grouped = port.chunks_by_version(chunks)
        with self._write_lock:
            if version_ids or grouped:
                self._write(set(version_ids) | grouped.keys(), grouped.values())
            self._save_state(position=position)

    def delete_versions(self, version_ids: Collection[str], *, position: int | None = None) -> None:
        """Erase versions, rewriting the segments that held them so their words are gone."""
        with self._write_lock:
            if version_ids:
                self._write(set(version_ids), (), mergetype=_purge_deleted)
            self._save_state(position=position)

    def rebuild(self, chunks: Iterable[port.IndexedChunk], *, position: int | None = None) -> None:
        """Replace the whole index with ``chunks`` (each version's chunks contiguous)."""
        with self._write_lock:
            generation = self._state["generation"] + 1
            shutil.rmtree(self._generation_path(generation), ignore_errors=True)
            sides = self._open_generation(generation)
            try:
                _fill(sides, port.contiguous_versions(chunks), self._stems)
            except BaseException:
                for side in sides:
                    side.close()
                shutil.rmtree(self._generation_path(generation), ignore_errors=True)
                raise
            self._save_state(position=position, generation=generation, always=True)
            self._outdated = False
            old, self._sides = self._sides, sides
            for side in old:
                side.close()
            shutil.rmtree(self._generation_path(generation - 1), ignore_errors=True)

    def clear(self, *, position: int | None = None) -> None:
        """Remove every document and set the watermark to ``position``."""
        self.rebuild((), position=position)

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
        return [port.Hit(**stored, score=score) for stored, score in found]

    def search_versions(
        self, query_text: str, index_filter: port.IndexFilter, limit: int = 10
    ) -> list[port.VersionHit]:
        """Best permitted whole versions for ``query_text``."""
        found = self._search(1, VERSION_FIELD_WEIGHTS, query_text, index_filter, limit, None)
        return [port.VersionHit(**stored, score=score) for stored, score in found]

    def needs_rebuild(self) -> bool:
        """True when the directory held an index of another :data:`FORMAT`, which was set aside:
        this one starts empty and only a :meth:`rebuild` fills it."""
        return self._outdated

    def last_applied_position(self) -> int | None:
        """The position stored with the last durable write (kept across reopening)."""
        position = self._state["position"]
        return None if position is None else int(position)

    def doc_count(self) -> int:
        """Number of chunks indexed."""
        return self._using(0, lambda side, searcher: int(searcher.doc_count()))

    def version_count(self) -> int:
        """Number of versions indexed."""
        return self._using(1, lambda side, searcher: int(searcher.doc_count()))

    def close(self) -> None:
        """Close searchers and indexes; the object cannot be used afterwards."""
        for side in self._sides:
            side.close()

    def _search(
        self,
        which: int,
        weights: tuple[tuple[str, float], ...],
        query_text: str,
        index_filter: port.IndexFilter,
        limit: int,
        per_version: int | None,
    ) -> list[tuple[Any, float]]:
        if limit < 1 or (per_version is not None and per_version < 1):
            raise ValueError("limit and per_version must be positive")
        words = (token.text for token in self._analyzer(query_text, mode="query"))
        terms = list(dict.fromkeys(words))[:MAX_QUERY_TERMS]
        if not terms or index_filter.admits_nothing():
            return []

        def ranked(side: _Side, searcher: Searcher) -> list[tuple[Any, float]]:
            scored = side.scores(searcher, terms, weights, index_filter)
            return _top(searcher, scored, limit, per_version)

        return self._using(which, ranked)

    def _using(self, which: int, use: Callable[[_Side, Searcher], _T]) -> _T:
        """Run ``use`` with the current side's searcher, again if a rebuild replaced it."""
        while True:
            side = self._sides[which]
            try:
                with side.searching() as searcher:
                    return use(side, searcher)
            except _Replaced:
                continue

    def _write(
        self, deletions: set[str], groups: Iterable[list[port.IndexedChunk]], mergetype: Any = None
    ) -> None:
        with _writing(self._sides, mergetype=mergetype) as writers:
            for version_id in sorted(deletions):
                for writer in writers:
                    writer.delete_by_term("version_id", version_id)
            for group in groups:
                _add_version(writers, group, self._stems)

    def _generation_path(self, generation: int) -> Path:
        return self._directory / f"generation-{generation}"

    def _open_generation(self, generation: int) -> tuple[_Side, _Side]:
        path = self._generation_path(generation)
        path.mkdir(exist_ok=True)
        return _Side(path, "chunks"), _Side(path, "versions")

    def _save_state(
        self, *, position: int | None, generation: int | None = None, always: bool = False
    ) -> None:
        """Durably replace ``state.json`` (write, fsync, rename); no position keeps the old."""
        if position is None and not always:
            return
        generation = generation or self._state["generation"]
        state = {"generation": generation, "position": position, "format": FORMAT}
        path = self._directory / "state.json"
        temporary = path.with_suffix(".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(state, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        self._state = state


def _fill(
    sides: tuple[_Side, _Side], groups: Iterable[list[port.IndexedChunk]], stems: _Stems
) -> None:
    """Bulk-load versions into empty indexes, committing every ``_REBUILD_BATCH`` chunks.

    Whoosh sorts a writer's postings at commit; one huge commit spills to disk and is far slower.
    """
    remaining = iter(groups)
    while True:
        with _writing(sides, merge=False) as writers:
            added = 0
            for group in remaining:
                _add_version(writers, group, stems)
                added += len(group)
                if added >= _REBUILD_BATCH:
                    break
            else:
                return


@contextmanager
def _writing(sides: tuple[_Side, ...], **commit: Any) -> Iterator[tuple[IndexWriter, ...]]:
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


def _postings(reader: SegmentReader, name: str, term: str) -> Iterator[tuple[Any, Any]]:
    """The term's postings in a segment as (document numbers, frequencies) blocks; deleted
    documents included (the admitted sets leave them out)."""
    try:
        matcher: Any = reader.postings(name, term)
    except TermNotFound:
        return
    if isinstance(matcher, FilterMatcher):  # only excludes deleted documents
        matcher = matcher.child
    if type(matcher) is _BLOCK_MATCHER and not matcher._byteids:
        # Whole blocks, ~10x faster than id()/weight()/next(): a block's data is (document
        # number deltas, frequencies: None when all are 1, one number when all are equal, or
        # one each, values); accumulate() undoes the deltas in C.
        while matcher.is_active():
            matcher._read_data()
            deltas, frequencies = matcher._data[:2]
            if frequencies is None or isinstance(frequencies, float | int):
                frequencies = itertools.repeat(float(frequencies or 1.0), len(deltas))
            yield itertools.accumulate(deltas), frequencies
            matcher._next_block()
        return
    ids, frequencies = [], []
    while matcher.is_active():
        ids.append(matcher.id())
        frequencies.append(matcher.weight())
        matcher.next()
    yield ids, frequencies


def _accumulate(
    scored: dict[int, float],
    postings: Iterable[tuple[Any, Any]],
    allowed: Collection[int],
    offset: int,
    scale: float,
    norm: tuple[float, float],
    lengths: array[int],
) -> None:
    """Add one word's BM25 score in one field to the admitted documents of one segment."""
    get = scored.get
    constant, per_word = norm
    for ids, frequencies in postings:
        for doc, tf in zip(ids, frequencies, strict=True):
            if doc in allowed:
                key = doc + offset
                scored[key] = get(key, 0.0) + scale * tf / (tf + constant + per_word * lengths[doc])


def _lengths(reader: SegmentReader, column_name: str) -> array[int]:
    """A segment's values of a length column, one per document (0 where none was written)."""
    count = reader.doc_count_all()
    lengths: array[int] = array("I")
    if not count:
        return lengths
    column: Any = reader.column_reader(column_name, translate=False)
    if type(column) is _COLUMN_READER and column._typecode == "I":  # one read, not one a doc
        lengths.frombytes(column._dbfile.get(column._basepos, column._count * 4))
        if sys.byteorder == "little":  # the column is big-endian
            lengths.byteswap()
        lengths.extend(itertools.repeat(0, count - len(lengths)))
    else:
        lengths.extend(column[doc] for doc in range(count))
    return lengths


def _top(
    searcher: Searcher, scored: dict[int, float], limit: int, per_version: int | None
) -> list[tuple[Any, float]]:
    """The top ``limit`` results, at most ``per_version`` per version, equal scores by id.

    Whole groups of equal scores are taken in descending order, each sorted by id (document
    numbers depend on how segments were merged; ids make a rebuild answer alike), and stored
    fields are only read for the groups needed. A group cut by the end of the top list
    lengthens the list.
    """
    reader = searcher.reader()
    wanted = limit * (1 if per_version is None else 4) + 1
    while True:
        best = heapq.nlargest(wanted, scored.items(), key=itemgetter(1))
        complete = len(best) < wanted  # holds every match
        found: list[tuple[Any, float]] = []
        taken: dict[str, int] = {}
        start = 0
        while start < len(best):
            score = best[start][1]
            end = start + 1
            while end < len(best) and best[end][1] == score:
                end += 1
            if end == len(best) and not complete:
                break  # the group may go on past the list
            hits = [reader.stored_fields(doc)["hit"] for doc, _ in best[start:end]]
            hits.sort(key=lambda hit: hit.get("chunk_id", hit["version_id"]))
            for hit in hits:
                if per_version is None or _take(taken, hit["version_id"], per_version):
                    found.append((hit, score))
            if len(found) >= limit:
                return found[:limit]
            start = end
        if complete:
            return found
        wanted *= 4


def _take(taken: dict[str, int], key: str, most: int) -> bool:
    """Count one more for ``key``; true while the count stays within ``most``."""
    taken[key] = taken.get(key, 0) + 1
    return taken[key] <= most


def _docs_by_value(reader: Any, name: str) -> dict[str, frozenset[int]]:
    """Every value of an identifier field in a segment with the documents holding it."""
    if not reader.doc_count_all():
        return {}
    found = {}
    for value in reader.lexicon(name):
        text = value.decode("utf-8")
        found[text] = frozenset(doc for ids, _ in _postings(reader, name, text) for doc in ids)
    return found


def _docs_admitted(
    index_filter: port.IndexFilter, docs_for: Callable[[tuple[Any, ...]], frozenset[int]]
) -> set[int]:
    """Intersect the criteria's document sets (each a union), then remove the exclusions."""
    included, excluded = _criteria(index_filter)
    docs: set[int] | None = None
    for alternatives in included:
        found = set().union(*(docs_for(criterion) for criterion in alternatives))
        docs = found if docs is None else docs & found
        if not docs:
            return set()
    docs = docs or set()
    for criterion in excluded:
        docs -= docs_for(criterion)
    return docs


def _criteria(
    f: port.IndexFilter,
) -> tuple[list[list[tuple[Any, ...]]], list[tuple[Any, ...]]]:
    """What a document must match (one of each list) and what it must not match.

    Retirement, superseding and effective windows are only indexed when set, so they are
    criteria that exclude the documents with a disqualifying value.
    """
    access = [
        ("term", "access", f"{rank}:{repository}")
        for repository, top in f.max_rank_by_repository.items()
        for rank in range(min(top, 3) + 1)
    ]
    included: list[list[tuple[Any, ...]]] = [access]
    for name, values in (
        ("version_id", f.version_ids),
        ("element_id", f.element_ids),
        ("source_kind", f.source_kinds),
        ("type_key", f.type_keys),
    ):
        if values is not None:
            included.append([("term", name, value) for value in sorted(values)])
    if f.as_of is not None:
        included.append([("range", "recorded_at", None, _micros(f.as_of), False)])
    excluded: list[tuple[Any, ...]] = []
    if f.valid_at is not None:
        excluded.append(("range", "effective_from", _micros(f.valid_at), None, True))
        excluded.append(("range", "effective_to", None, _micros(f.valid_at), False))
    if f.live_at is not None:
        excluded.append(("range", "retired_at", None, _micros(f.live_at), False))
    if f.exclude_superseded:
        excluded.append(("term", "superseded", "yes"))
    return included, excluded


def _query(criterion: tuple[Any, ...]) -> Query:
    if criterion[0] == "term":
        return Term(criterion[1], criterion[2])
    _, name, low, high, low_excluded = criterion
    return NumericRange(name, low, high, startexcl=low_excluded)


def _add_version(
    writers: tuple[IndexWriter, ...], group: list[port.IndexedChunk], stems: _Stems
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
        "retired_at": _micros(first.retired_at),
        "effective_from": _micros(first.effective_from),
        "effective_to": _micros(first.effective_to),
        "recorded_at": _micros(first.recorded_at),
        "title": title,
        "title" + _LENGTH: title.total(),
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


def _stemmer(analyzer: Any) -> _Stems:
    """The words ``analyzer`` indexes for a text, in one pass when it is the stock
    ``StemmingAnalyzer`` chain (tokenize, lower-case, drop stop and short words, stem), else by
    running it. A property test checks both agree."""
    try:
        tokenizer, lowercase, stop, stemmer = analyzer.items
        pattern, stops, min_size, stem = tokenizer.expression, stop.stops, stop.min, stemmer._stem
        stock = not tokenizer.gaps and stop.max is None and not stemmer.ignore
        stock = stock and type(lowercase).__name__ == "LowercaseFilter"
    except (AttributeError, TypeError, ValueError):
        stock = False
    if not stock:
        return lambda text: [token.text for token in analyzer(text)]

    # The same tokens without capture groups, so findall() yields whole words.
    whole_words = re.compile(_WHOOSH_WORD) if pattern.pattern == _WHOOSH_WORD_GROUPED else None

    def stems(text: str) -> list[str]:
        if whole_words is None:
            words: Iterable[str] = (match.group().lower() for match in pattern.finditer(text))
        elif text.isascii():  # lower-casing first changes no token
            words = whole_words.findall(text.lower())
        else:
            words = map(str.lower, whole_words.findall(text))
        return [stem(word) for word in words if len(word) >= min_size and word not in stops]

    return stems


def _micros(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1_000_000)


def _trim(cache: OrderedDict[Any, Any], size: int) -> None:
    while len(cache) > size:
        cache.popitem(last=False)


def _purge_deleted(writer: Any, segments: list[Any]) -> list[Any]:
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


def _drop_all(writer: Any, segments: list[Any]) -> list[Any]:
    """Merge policy: drop every existing segment (a rebuild replaces them all)."""
    return []
