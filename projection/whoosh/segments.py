"""One Whoosh index of the directory (a "side"): its reusable searcher and per-segment caches.

One searcher per index is reused until this process commits. Segments never change, so the
documents of each filter criterion and each filter's admitted set are cached per segment (and
deletion count): after a commit only new segments are filtered. Field lengths are cached per
segment too, and the average lengths per searcher. A word's postings are kept decoded per
segment, and weighed (BM25 before idf) per admitted set and average length, so a common word is
weighed once per filter rather than once per search; documents' stored hits are kept for the
searcher. Every key names what its value depends on, so a commit, a deletion or another filter
never finds a value computed for another state.
"""

# Whoosh's own annotations are partial; strict mypy would flag every call into it.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import functools
import itertools
import math
import os
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from whoosh.index import EmptyIndexError, create_in, exists_in, open_dir
from whoosh.scoring import BM25F
from whoosh.searching import Searcher

from projection import keyword_index as port
from projection.whoosh.filters import Criterion, docs_admitted, docs_by_value, query
from projection.whoosh.schema import LENGTH, schema
from projection.whoosh.scoring import K1, B, accumulate, column_lengths, postings

_FILTER_CACHE_SIZE = 16
_SEGMENT_CACHE_SIZE = 2_000
_POSTINGS_CACHE_SIZE = 4_000_000
"""Most postings kept decoded in memory, each kept word counting one more (about 12 bytes a
posting: 48 MB at most)."""
_WEIGHTED_CACHE_SIZE = 2_000_000
"""Most admitted postings kept with their BM25 weight per filter, each kept word counting one
more (about 16 bytes a posting: 32 MB at most)."""
_STORED_CACHE_SIZE = 20_000
"""Most documents' stored fields kept decoded for the current searcher."""
Weighted = tuple["array[int]", "array[float]"]
"""Admitted postings of a word as (document numbers plus offset, BM25 weights before idf)."""
_ALLOWLISTED = frozenset({"version_id", "element_id"})  # filtered by long lists of values
_NO_DOCS: frozenset[int] = frozenset()
_MTIME_GRAIN_NS = 3_000_000_000  # coarser than any file system's mtime resolution
_OPEN_ATTEMPTS = 5


class Side:
    """One Whoosh index of the directory, with its reusable searcher and per-segment caches."""

    def __init__(self, directory: Path, name: str) -> None:
        if exists_in(str(directory), indexname=name):
            self.ix = open_dir(str(directory), indexname=name)
        else:
            self.ix = create_in(str(directory), schema(), indexname=name)
        self.stale = False
        self.closed = False
        self._directory = directory
        self._seen_mtime: int | None = None  # the directory's, when last known current
        self._searcher: Searcher | None = None
        self._leaves: list[Leaf] = []
        self._lock = threading.Lock()
        # per (segment, deletions, filter): the admitted documents and a number naming that set
        self._admitted: OrderedDict[tuple[str, int, port.IndexFilter], tuple[set[int], int]] = (
            OrderedDict()
        )
        self._admissions = itertools.count()
        self._by_value: dict[tuple[str, Hashable], dict[str, frozenset[int]]] = {}
        self._segment_docs: OrderedDict[tuple[str, Hashable], frozenset[int]] = OrderedDict()
        self._lengths: dict[tuple[str, str], tuple[array[int], int]] = {}
        # per (segment, field, word): its postings decoded, as (document numbers, frequencies)
        self._postings: OrderedDict[tuple[str, str, str], tuple[array[int], array[float]]] = (
            OrderedDict()
        )
        self._postings_held = 0
        # per (admitted set's number, field, word, normalisation): the admitted postings of the
        # word in that segment's field as (document numbers + offset, BM25 weights before idf)
        self._weighted: OrderedDict[tuple[int, str, str, tuple[float, float]], Weighted] = (
            OrderedDict()
        )
        self._weighted_held = 0
        self._stored: dict[int, Any] = {}  # document number → stored hit, for this searcher
        # per (field, filter): average length over the admitted documents, for this searcher
        self._norms: OrderedDict[tuple[str, Any], tuple[float, float]] = OrderedDict()

    @contextmanager
    def searching(self) -> Iterator[Searcher]:
        """The shared searcher, reopened first if this process committed since, or another
        process sharing the directory did (``up_to_date`` compares the generation on disk)."""
        with self._lock:
            if self.closed:  # replaced by a rebuild: the caller retries on the new one
                raise Replaced
            if self._searcher is None or self.stale or self._changed_elsewhere(self._searcher):
                self.stale = False  # before opening: a commit racing the open marks it again
                self._reopen()
            assert self._searcher is not None
            yield self._searcher

    def _changed_elsewhere(self, searcher: Searcher) -> bool:
        """Whether another writer committed since ``searcher`` opened. A commit adds files, so
        the directory's mtime (one stat) gates the generation check (a listing); within a few
        seconds of a change the listing is always done, for file systems with coarse mtimes."""
        try:
            mtime = os.stat(self._directory).st_mtime_ns
        except OSError:
            return True
        if mtime == self._seen_mtime and time.time_ns() - mtime > _MTIME_GRAIN_NS:
            return False
        if _up_to_date(searcher):
            self._seen_mtime = mtime
            return False
        return True

    def _reopen(self) -> None:
        # Not Searcher.refresh(): in whoosh3 3.54 it keeps replaced segments around.
        try:
            self._seen_mtime = os.stat(self._directory).st_mtime_ns  # before: see searching()
        except OSError:
            self._seen_mtime = None
        for attempt in range(_OPEN_ATTEMPTS):
            try:
                fresh = self.ix.searcher(weighting=BM25F(B=B, K1=K1))
                break
            except (EmptyIndexError, OSError):
                if self._searcher is not None:
                    return  # files deleted underneath: the open ones answer until rebuilt
                if attempt == _OPEN_ATTEMPTS - 1:
                    raise
                # another process's commit replaced the segments the table of contents named
                # between reading it and opening them: the next reading names the new ones
                time.sleep(0.01 * (attempt + 1))
        old, self._searcher = self._searcher, fresh
        if old is not None:
            old.close()
        self._leaves = [Leaf(*leaf) for leaf in fresh.leaf_searchers()]
        live = {leaf.key for leaf in self._leaves}
        self._lengths = {k: v for k, v in self._lengths.items() if k[0] in live}
        self._by_value = {k: v for k, v in self._by_value.items() if k[0] in live}
        self._postings = OrderedDict((k, v) for k, v in self._postings.items() if k[0] in live)
        self._postings_held = sum(len(ids) + 1 for ids, _ in self._postings.values())
        self._norms = OrderedDict()
        self._stored = {}

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
        Whoosh's ``Or`` of weighted ``Term`` queries would, without its per-document matcher
        tree, which took most of a search.

        The statistics — document count, document frequency (idf) and average field length —
        are those of the **admitted set** (what this caller may read and asked to search), never
        of the whole index: otherwise a score would move when someone adds a document the caller
        cannot see, and a caller could count forbidden documents holding a word (issue #16).
        Like Whoosh, ``idf = log(N / (df + 1)) + 1``.
        """
        scored: dict[int, float] = {}
        admitted = self._admitted_sets(index_filter)
        population = sum(len(docs) for docs, _ in admitted)
        if not population:
            return scored
        sets = [docs for docs, _ in admitted]
        normalised = {name: self._normalisation(name, sets, index_filter) for name, _ in weights}
        for term in terms:
            for name, boost in weights:
                found = [
                    self._weighted_postings(leaf, allowed, number, name, term, normalised[name])
                    for leaf, (allowed, number) in zip(self._leaves, admitted, strict=True)
                    if allowed
                ]
                matched = sum(len(keys) for keys, _ in found)
                if not matched:
                    continue
                scale = boost * (math.log(population / (matched + 1)) + 1)
                for keys, values in found:
                    if not scored:  # the same sums in one step: 0.0 + x is x
                        scored = dict(zip(keys, [scale * value for value in values], strict=True))
                        continue
                    get = scored.get
                    for key, value in zip(keys, values, strict=True):
                        scored[key] = get(key, 0.0) + scale * value
        return scored

    def stored_fields(self, searcher: Searcher, doc: int) -> Any:
        """A document's stored hit (call inside :meth:`searching` with its searcher), kept
        decoded until the searcher is reopened: the same documents top one query after another.
        """
        found = self._stored.get(doc)
        if found is None:
            if len(self._stored) >= _STORED_CACHE_SIZE:
                self._stored.clear()
            found = self._stored[doc] = searcher.reader().stored_fields(doc)["hit"]
        return found

    def _weighted_postings(
        self,
        leaf: Leaf,
        allowed: set[int],
        admission: int,
        name: str,
        term: str,
        norm: tuple[float, float],
    ) -> Weighted:
        """A word's admitted postings in one segment's field with their BM25 weight before idf
        (``tf·(k1+1) / (tf + k1·(1 - b + b·length/average length))``), as (document numbers
        plus the segment's offset, weights).

        Kept per admitted set (its number changes with the segment, its deletions and the
        filter) and normalisation (the average length over every admitted document), so the
        same word under the same filter is weighed once: common words come back query after
        query, and weighing their postings was most of a search. The least recently used are
        dropped beyond :data:`_WEIGHTED_CACHE_SIZE` postings.
        """
        key = (admission, name, term, norm)
        found = self._weighted.get(key)
        if found is None:
            partial: dict[int, float] = {}
            blocks = self.postings(leaf, name, term)
            counts = self.lengths(leaf, name)[0]
            accumulate(partial, blocks, allowed, leaf.offset, K1 + 1, norm, counts)
            found = self._weighted[key] = (array("q", partial), array("d", partial.values()))
            self._weighted_held += len(partial) + 1
            while self._weighted_held > _WEIGHTED_CACHE_SIZE and len(self._weighted) > 1:
                self._weighted_held -= len(self._weighted.popitem(last=False)[1][0]) + 1
        else:
            self._weighted.move_to_end(key)
        return found

    def postings(self, leaf: Leaf, name: str, term: str) -> list[tuple[Any, Any]]:
        """A word's postings in one segment's field, decoded once and kept (segments never
        change; the least recently used are dropped beyond :data:`_POSTINGS_CACHE_SIZE`): the
        same words come back query after query, and decoding them was half of a search."""
        key = (leaf.key, name, term)
        found = self._postings.get(key)
        if found is None:
            ids: array[int] = array("I")
            frequencies: array[float] = array("f")
            for block_ids, block_frequencies in postings(leaf.reader, name, term):
                ids.extend(block_ids)
                frequencies.extend(block_frequencies)
            found = self._postings[key] = (ids, frequencies)
            self._postings_held += len(ids) + 1
            while self._postings_held > _POSTINGS_CACHE_SIZE and len(self._postings) > 1:
                self._postings_held -= len(self._postings.popitem(last=False)[1][0]) + 1
        else:
            self._postings.move_to_end(key)
        return [found] if found[0] else []

    def _normalisation(
        self, name: str, admitted: list[set[int]], index_filter: port.IndexFilter
    ) -> tuple[float, float]:
        """BM25's length normalisation ``k1·(1 - b) + k1·b/average · length`` as its two terms,
        with the average field length over the admitted documents (cached per filter until the
        segments change)."""
        key = (name, index_filter)
        found = self._norms.get(key)
        if found is None:
            total = 0
            documents = 0
            for leaf, allowed in zip(self._leaves, admitted, strict=True):
                if allowed:
                    counts = self.lengths(leaf, name)[0]
                    total += sum(counts[doc] for doc in allowed)
                    documents += len(allowed)
            average = total / documents if total else 1.0
            found = self._norms[key] = (K1 * (1 - B), K1 * B / average)
            _trim(self._norms, _FILTER_CACHE_SIZE * 4)
        return found

    def admitted(self, index_filter: port.IndexFilter) -> list[set[int]]:
        """Per segment, the live documents the filter admits (call inside :meth:`searching`).

        Cached per segment and deletion count, so after a commit only new or changed segments
        are filtered again.
        """
        return [docs for docs, _ in self._admitted_sets(index_filter)]

    def _admitted_sets(self, index_filter: port.IndexFilter) -> list[tuple[set[int], int]]:
        """:meth:`admitted`, each set with the number naming it while it stays cached (a set
        computed again gets a new number)."""
        docs = []
        for leaf in self._leaves:
            key = (leaf.key, leaf.deleted, index_filter)
            found = self._admitted.get(key)
            if found is None:
                local = docs_admitted(index_filter, functools.partial(self._docs, leaf))
                if leaf.deleted:
                    local -= leaf.reader.deleted_docs_set
                found = self._admitted[key] = (local, next(self._admissions))
            self._admitted.move_to_end(key)
            docs.append(found)
        _trim(self._admitted, _FILTER_CACHE_SIZE * max(4, len(self._leaves)))
        return docs

    def _docs(self, leaf: Leaf, criterion: Criterion) -> frozenset[int]:
        """A segment's documents matching one criterion, cached (segments never change).

        Deleted documents stay in the cached sets; :meth:`admitted` removes them.
        """
        kind, name, *value = criterion
        if kind == "term" and name in _ALLOWLISTED:  # thousands of values: one map per field
            key: tuple[str, Hashable] = (leaf.key, name)
            by_value = self._by_value.get(key)
            if by_value is None:
                by_value = self._by_value[key] = docs_by_value(leaf.reader, name)
            return by_value.get(value[0], _NO_DOCS)
        key = (leaf.key, criterion)
        local = self._segment_docs.get(key)
        if local is None:
            local = frozenset(leaf.searcher.docs_for_query(query(criterion)))
            self._segment_docs[key] = local
            _trim(self._segment_docs, _SEGMENT_CACHE_SIZE)
        return local

    def lengths(self, leaf: Leaf, name: str) -> tuple[array[int], int]:
        """The segment's word count of field ``name`` for each document, and their sum."""
        key = (leaf.key, name)
        found = self._lengths.get(key)
        if found is None:
            counts = column_lengths(leaf.reader, name + LENGTH)
            found = self._lengths[key] = (counts, sum(counts))
        return found

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self._searcher is not None:
                self._searcher.close()
                self._searcher = None
            self.ix.close()


class Leaf:
    """One segment of the current searcher: its searcher, reader and document number offset."""

    def __init__(self, searcher: Searcher, offset: int) -> None:
        reader: Any = searcher.reader()  # a SegmentReader (an EmptyReader when empty)
        segment = reader.segment()
        self.searcher = searcher
        self.reader = reader
        self.offset = offset
        self.key: str = segment.segment_id() if segment is not None else f"unsaved-{id(self)}"
        self.deleted: int = len(reader.deleted_docs_set) if reader.has_deletions() else 0


class Replaced(Exception):
    """A rebuild swapped the index while a search was about to use the old one."""


def _trim(cache: OrderedDict[Any, Any], size: int) -> None:
    while len(cache) > size:
        cache.popitem(last=False)


def _up_to_date(searcher: Searcher) -> bool:
    """Whether no other writer committed since ``searcher`` opened (an unreadable directory
    counts as changed; ``_reopen`` then keeps the open files answering)."""
    try:
        return bool(searcher.up_to_date())
    except (EmptyIndexError, OSError):
        return False
