"""``WhooshKeywordIndex``: the :class:`~projection.keyword_index.KeywordIndex` port on Whoosh.

The only module that imports Whoosh (so a Whoosh upgrade touches one file, which is why it is
longer than most). A directory holds ``state.json`` (current generation and watermark) and
``generation-<n>/`` with two Whoosh indexes — ``chunks`` (one document per chunk) and
``versions`` (one per version: title, every heading, the whole body), so each keeps its own
BM25 statistics.

- User text is analysed like the indexed text (English stemming) and turned into ``Term``
  objects directly: it never reaches a query parser, so ``title:x``, ``AND`` or ``*`` are words.
- Filters become the set of admitted document numbers given to Whoosh's collector, so they apply
  while matching and ``limit`` fills from permitted documents. Per segment, the documents of each
  filter term are cached (segments never change), so a new filter costs a few set operations.
- One searcher per index is reused until this process commits. Writes are serialised by a lock;
  one process should own a directory (Whoosh's file lock refuses a second concurrent writer).
- Erasure rewrites the segments holding deleted documents, so erased words leave the files.
"""

# Whoosh's own annotations are partial; strict mypy would flag every call into it.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import json
import os
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from whoosh import collectors, fields, index
from whoosh.analysis.analyzers import StemmingAnalyzer
from whoosh.query.compound import Or
from whoosh.query.qcore import Query
from whoosh.query.ranges import NumericRange
from whoosh.query.terms import Term
from whoosh.reading import SegmentReader
from whoosh.searching import Searcher
from whoosh.writing import IndexWriter

from projection import keyword_index as port

MAX_QUERY_TERMS = 32
COMMON_TERM_FRACTION = 0.05  # a word in more than 5% of the documents is "common"
CHUNK_FIELD_WEIGHTS = (("title", 2.0), ("heading", 1.5), ("text", 1.0))
VERSION_FIELD_WEIGHTS = (("title", 3.0), ("heading", 1.5), ("text", 1.0))
_WRITER_OPTIONS: dict[str, Any] = {"limitmb": 256, "timeout": 10.0}
_FILTER_CACHE_SIZE = 16
_SEGMENT_CACHE_SIZE = 20_000
_TIE_SLACK = 2
_REBUILD_BATCH = 20_000
_Stems = Callable[[str], list[str]]
_T = TypeVar("_T")
_CHUNK_HIT_FIELDS = ("chunk_id", "chunk_key", "heading_path", "start", "end")
_VERSION_HIT_FIELDS = (
    *("element_id", "version_id", "repository_key", "source_kind", "type_key"),
    *("recorded_at", "retired_at", "superseded"),
)


def _schema() -> fields.Schema:
    """One schema for both indexes; ``hit`` stores the fields of a Hit / VersionHit."""
    analyzer = StemmingAnalyzer()
    text: dict[str, Any] = {"analyzer": analyzer, "phrase": False}
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
        title=fields.TEXT(**text),
        heading=fields.TEXT(**text),
        text=fields.TEXT(**text),
        hit=fields.STORED(),
    )


class _Side:
    """One Whoosh index of the directory, with its reusable searcher and filter caches."""

    def __init__(self, directory: Path, name: str) -> None:
        if index.exists_in(str(directory), indexname=name):
            self.ix = index.open_dir(str(directory), indexname=name)
        else:
            self.ix = index.create_in(str(directory), _schema(), indexname=name)
        self.stale = False
        self.closed = False
        self._searcher: Searcher | None = None
        self._lock = threading.Lock()
        self._admitted: OrderedDict[port.IndexFilter, set[int]] = OrderedDict()
        self._segment_docs: OrderedDict[tuple[str, Hashable], frozenset[int]] = OrderedDict()

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
                self._searcher = self.ix.searcher()
                self._admitted.clear()
            yield self._searcher

    def admitted(self, searcher: Searcher, index_filter: port.IndexFilter) -> set[int]:
        """Document numbers the filter admits (call inside :meth:`searching`)."""
        docs = self._admitted.get(index_filter)
        if docs is None:
            docs = _docs_admitted(index_filter, lambda criterion: self._docs(searcher, criterion))
            self._admitted[index_filter] = docs
            _trim(self._admitted, _FILTER_CACHE_SIZE)
        self._admitted.move_to_end(index_filter)
        return docs

    def _docs(self, searcher: Searcher, criterion: tuple[Any, ...]) -> set[int]:
        """Documents matching one criterion, from per-segment caches where possible.

        Deleted documents may stay in a cached set: the matcher never yields them anyway.
        """
        found: set[int] = set()
        for leaf, offset in searcher.leaf_searchers():
            segment = leaf.reader().segment()
            key = (segment.segment_id(), criterion) if segment is not None else None
            local = self._segment_docs.get(key) if key else None
            if local is None:
                local = frozenset(leaf.docs_for_query(_query(criterion)))
                if key:
                    self._segment_docs[key] = local
                    _trim(self._segment_docs, _SEGMENT_CACHE_SIZE)
            found.update(map(offset.__add__, local) if offset else local)
        return found

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self._searcher is not None:
                self._searcher.close()
                self._searcher = None
            self.ix.close()


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
            self._state = json.loads((self._directory / "state.json").read_text("utf-8"))
        except FileNotFoundError:
            self._state = {"generation": 1, "position": None}
        self._sides = self._open_generation(self._state["generation"])
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
            admitted = side.admitted(searcher, index_filter)
            return _ranked(searcher, terms, weights, admitted, limit, per_version)

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
        state = {"generation": generation or self._state["generation"], "position": position}
        path = self._directory / "state.json"
        temporary = path.with_suffix(".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(state, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        self._state = state


def _ranked(
    searcher: Searcher,
    terms: list[str],
    weights: tuple[tuple[str, float], ...],
    admitted: set[int],
    limit: int,
    per_version: int | None,
) -> list[tuple[Any, float]]:
    """Search the admitted documents for every word of the query (plain BM25 over all words).

    A CommonTermsQuery-style shortcut (common words scoring only where a rarer word matched) was
    tried and dropped: with small limits it returned documents matching one rare word ahead of
    the documents that answer the question (the best chunk for "how do I run phase 0/1/2
    tests?" fell out of the top 12).
    """
    if not admitted:  # Whoosh would take an empty allow set for "no filter"
        return []
    rare, common = _split_terms(searcher, terms, weights)
    if not (rare or common):
        return []
    return _run(searcher, Or(rare + common), limit, admitted, per_version)


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


def _split_terms(
    searcher: Searcher, terms: list[str], weights: tuple[tuple[str, float], ...]
) -> tuple[list[Query], list[Query]]:
    """Weighted field queries for the words the index holds, split into rare and common."""
    reader = searcher.reader()
    common_above = COMMON_TERM_FRACTION * searcher.doc_count_all()
    rare: list[Query] = []
    common: list[Query] = []
    for term in terms:
        frequencies = [(name, weight, reader.doc_frequency(name, term)) for name, weight in weights]
        queries = [Term(name, term, boost=weight) for name, weight, df in frequencies if df]
        most = max(df for _, _, df in frequencies)
        (common if most > common_above else rare).extend(queries)
    return rare, common


def _run(
    searcher: Searcher, matching: Query, limit: int, admitted: set[int], per_version: int | None
) -> list[tuple[Any, float]]:
    """The top ``limit`` results, at most ``per_version`` per version, equal scores by id.

    Both work on an exact top list longer than the limit, lengthened until it is enough: a
    version's best chunks are all in such a list if any is, and document numbers (Whoosh's tie
    order) depend on how segments were merged, while ids make a rebuild answer alike.
    """
    wanted = limit * _TIE_SLACK * (1 if per_version is None else 4)
    while True:
        collector = collectors.FilterCollector(collectors.TopCollector(wanted), allow=admitted)
        searcher.search_with_collector(matching, collector)
        found = [(hit["hit"], float(hit.score)) for hit in collector.results()]
        exhausted = len(found) < wanted  # the heap only stays short if nothing else matched
        found.sort(key=lambda item: (-item[1], item[0].get("chunk_id", item[0]["version_id"])))
        if per_version is not None:
            taken: dict[str, int] = {}
            found = [item for item in found if _take(taken, item[0]["version_id"], per_version)]
        if len(found) >= limit or exhausted:
            return found[:limit]
        wanted *= 4


def _take(taken: dict[str, int], key: str, most: int) -> bool:
    """Count one more for ``key``; true while the count stays within ``most``."""
    taken[key] = taken.get(key, 0) + 1
    return taken[key] <= most


def _docs_admitted(
    index_filter: port.IndexFilter, docs_for: Callable[[tuple[Any, ...]], set[int]]
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

    Each text is analysed once and both documents get the word lists (Whoosh indexes a list as
    already analysed), which nearly halves the cost of the version document.
    """
    first = group[0]
    indexed = {
        "version_id": first.version_id,
        "element_id": first.element_id,
        "access": f"{first.classification_rank}:{first.repository_key}",
        "source_kind": first.source_kind,
        "type_key": first.type_key,
        "superseded": "yes" if first.superseded else None,  # None leaves a field out
        "retired_at": _micros(first.retired_at),
        "effective_from": _micros(first.effective_from),
        "effective_to": _micros(first.effective_to),
        "recorded_at": _micros(first.recorded_at),
        "title": stems(first.title),
    }
    stored = {name: getattr(first, name) for name in _VERSION_HIT_FIELDS}
    body: list[str] = []
    headings: dict[str, list[str]] = {}
    for chunk in sorted(group, key=lambda chunk: chunk.start):
        text = stems(chunk.text)
        heading = headings.setdefault(chunk.heading_path, stems(chunk.heading_path))
        body += text
        hit = stored | {name: getattr(chunk, name) for name in _CHUNK_HIT_FIELDS}
        writers[0].add_document(**indexed, heading=heading, text=text, hit=hit)
    all_headings = [word for words in headings.values() for word in words]
    hit = stored | {"title": first.title}
    writers[1].add_document(**indexed, heading=all_headings, text=body, hit=hit)


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

    def stems(text: str) -> list[str]:
        words = (match.group().lower() for match in pattern.finditer(text))
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
