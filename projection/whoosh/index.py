"""``WhooshKeywordIndex``: the port's methods over the directory's state and two indexes.

A directory holds ``state.json`` (current generation, watermark with its open gaps and
:data:`FORMAT`) and ``generation-<n>/`` with two Whoosh indexes — ``chunks`` (one document per
chunk) and ``versions`` (one per version: title, every heading, the whole body), so each keeps
its own BM25 statistics.

- User text is analysed like the indexed text (English stemming) into words: it never reaches a
  query parser, so ``title:x``, ``AND`` or ``*`` are words. Every word counts (an OR).
- The state, generations and watermark — shared by processes, set aside when of another
  :data:`FORMAT` or engine, noticed when deleted — are the engine-independent
  :class:`~projection.generational.GenerationalIndex`; this module opens, builds, writes and
  searches a generation's two Whoosh indexes.
"""

# Whoosh's own annotations are partial; strict mypy would flag every call into it.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any, TypeVar

from whoosh.searching import Searcher

from projection import keyword_index as port
from projection.generational import GenerationalIndex
from projection.keyword_index import MAX_QUERY_TERMS, QUESTION_WORDS
from projection.whoosh.schema import FORMAT, schema_is_current, stemmer
from projection.whoosh.scoring import CHUNK_FIELD_WEIGHTS, VERSION_FIELD_WEIGHTS, top
from projection.whoosh.segments import Replaced, Side
from projection.whoosh.writing import add_version, fill, purge_deleted, writing

_T = TypeVar("_T")
log = logging.getLogger("ameide.index")


class WhooshKeywordIndex(GenerationalIndex[tuple[Side, Side]]):
    """A :class:`~projection.keyword_index.KeywordIndex` kept in ``directory``: two Whoosh
    indexes per generation (its state and generations:
    :class:`~projection.generational.GenerationalIndex`). A rebuild fills a new generation
    committing as it goes, which keeps large rebuilds fast."""

    engine = "whoosh"
    format = FORMAT

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        super().__init__(directory)
        self._analyzer = self._sides[0].ix.schema["text"].analyzer
        self._stems = stemmer(self._analyzer)
        self._question_words = frozenset(
            token.text for token in self._analyzer(" ".join(QUESTION_WORDS), mode="query")
        )

    def _open_sides(self, path: Path) -> tuple[Side, Side]:
        sides = (Side(path, "chunks"), Side(path, "versions"))
        if not all(schema_is_current(side.ix.schema) for side in sides):
            self._close_sides(sides)
            raise ValueError("the Whoosh index has another schema")
        return sides

    def _build(self, path: Path, groups: Iterable[list[port.IndexedChunk]]) -> tuple[Side, Side]:
        sides = (Side(path, "chunks"), Side(path, "versions"))
        try:
            fill(sides, groups, self._stems)
        except BaseException:
            self._close_sides(sides)
            raise
        return sides

    def _close_sides(self, sides: tuple[Side, Side]) -> None:
        for side in sides:
            side.close()  # waits for a search in progress on it

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
        """Erase versions, rewriting the segments that held them so their words are gone."""
        with self.exclusive():
            if version_ids:
                self._write(set(version_ids), (), mergetype=purge_deleted)
            self._save_state(position=position)

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

    def words(self, text: str) -> list[str]:
        """See :meth:`projection.keyword_index.KeywordIndex.words`."""
        return list(self._stems(text))

    def query_words(self, text: str) -> list[str]:
        """See :meth:`projection.keyword_index.KeywordIndex.query_words`."""
        words = (token.text for token in self._analyzer(text, mode="query"))
        analysed = list(dict.fromkeys(words))
        # the words of how a question is asked ("what", "why", "should we") say nothing of its
        # topic, yet match headings such as "Why this matters": left out unless nothing remains
        terms = [w for w in analysed if w not in self._question_words] or analysed
        return terms[:MAX_QUERY_TERMS]

    def search_both(
        self, query_text: str, index_filter: port.IndexFilter, limit: int, per_version: int
    ) -> tuple[list[port.Hit], list[port.VersionHit]]:
        """Both searches, one after the other (pure Python: a second thread would only wait
        for the GIL)."""
        return (
            self.search(query_text, index_filter, limit, per_version=per_version),
            self.search_versions(query_text, index_filter, limit),
        )

    def doc_count(self) -> int:
        """Number of chunks indexed."""
        return self._using(0, lambda side, searcher: int(searcher.doc_count()))

    def version_count(self) -> int:
        """Number of versions indexed."""
        return self._using(1, lambda side, searcher: int(searcher.doc_count()))

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
        terms = self.query_words(query_text)
        if not terms or index_filter.admits_nothing():
            return []

        def ranked(side: Side, searcher: Searcher) -> list[tuple[Any, float]]:
            scored = side.scores(searcher, terms, weights, index_filter)
            return top(functools.partial(side.stored_fields, searcher), scored, limit, per_version)

        return self._using(which, ranked)

    def _using(self, which: int, use: Callable[[Side, Searcher], _T]) -> _T:
        """Run ``use`` with the current side's searcher (of the current generation), again if a
        rebuild replaced it meanwhile."""
        self._follow()
        while True:
            side = self._sides[which]
            try:
                with side.searching() as searcher:
                    return use(side, searcher)
            except Replaced:
                continue

    def _write(
        self, deletions: set[str], groups: Iterable[list[port.IndexedChunk]], mergetype: Any = None
    ) -> None:
        with writing(self._sides, mergetype=mergetype) as writers:
            for version_id in sorted(deletions):
                for writer in writers:
                    writer.delete_by_term("version_id", version_id)
            for group in groups:
                add_version(writers, group, self._stems)
