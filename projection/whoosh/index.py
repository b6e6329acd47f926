"""``WhooshKeywordIndex``: the port's methods over the directory's state and two indexes.

A directory holds ``state.json`` (current generation, watermark with its open gaps and
:data:`FORMAT`) and ``generation-<n>/`` with two Whoosh indexes — ``chunks`` (one document per
chunk) and ``versions`` (one per version: title, every heading, the whole body), so each keeps
its own BM25 statistics.

- User text is analysed like the indexed text (English stemming) into words: it never reaches a
  query parser, so ``title:x``, ``AND`` or ``*`` are words. Every word counts (an OR).
- Writes are serialised by a lock; one process should own a directory (Whoosh's file lock
  refuses a second concurrent writer).
- An index of another :data:`FORMAT` is set aside: the new one starts empty and
  :meth:`~WhooshKeywordIndex.needs_rebuild` tells the owner to rebuild it. An index whose files
  were deleted underneath the process says so through :meth:`~WhooshKeywordIndex.is_intact`.
"""

# Whoosh's own annotations are partial; strict mypy would flag every call into it.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from whoosh.searching import Searcher

from projection import keyword_index as port
from projection.whoosh.schema import FORMAT, schema_is_current, stemmer
from projection.whoosh.scoring import CHUNK_FIELD_WEIGHTS, VERSION_FIELD_WEIGHTS, top
from projection.whoosh.segments import Replaced, Side
from projection.whoosh.writing import add_version, fill, purge_deleted, writing

MAX_QUERY_TERMS = 32
QUESTION_WORDS = (
    "what", "why", "which", "who", "whom", "whose", "where",
    "does", "do", "did", "should", "would", "could",
)  # fmt: skip
"""Interrogatives and auxiliaries: how a question is asked, not what it asks about. Queries
leave them out (the index keeps every word). Measured on the real-corpus dev set: nDCG@10
0.670 → 0.685, what-is questions 0.737 → 0.804; "how" stays, as how-to pages are titled so."""
_STATE = "state.json"
_T = TypeVar("_T")


class WhooshKeywordIndex:
    """A :class:`~projection.keyword_index.KeywordIndex` kept in ``directory``.

    The Whoosh indexes live in ``generation-<n>/``; ``state.json`` names the current generation
    and the watermark. A rebuild fills a new generation (committing as it goes, which keeps large
    rebuilds fast) and switches both in one atomic rename, so readers never see a partial index
    and a crashed rebuild leaves the old one current.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._directory = Path(directory)
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        try:
            state = json.loads((self._directory / _STATE).read_text("utf-8"))
            new = False
        except FileNotFoundError:
            state = {"generation": 1, "position": None, "format": FORMAT, "gaps": []}
            new = True
        if "gaps" not in state:  # saved before watermarks came with open gaps, when applied
            state = {**state, "position": None, "gaps": []}  # work was deleted: not comparable
        self._state = state
        self._outdated: bool = state.get("format", 1) != FORMAT
        if not self._outdated:
            self._sides = self._open_generation(state["generation"])
            self._outdated = not all(schema_is_current(side.ix.schema) for side in self._sides)
            if self._outdated:
                for side in self._sides:
                    side.close()
        if self._outdated:  # files of another format: start empty, to be rebuilt by the owner
            self._state = {"generation": state["generation"] + 1, "position": None, "gaps": []}
            self._sides = self._open_generation(self._state["generation"])
        if self._outdated or new:  # a new index has a state file too, for is_intact()
            self._save_state(position=None, always=True)
        for leftover in self._directory.glob("generation-*"):
            if leftover != self._generation_path(self._state["generation"]):
                shutil.rmtree(leftover, ignore_errors=True)  # from a crashed rebuild
        self._analyzer = self._sides[0].ix.schema["text"].analyzer
        self._stems = stemmer(self._analyzer)
        self._question_words = frozenset(
            token.text for token in self._analyzer(" ".join(QUESTION_WORDS), mode="query")
        )

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
                self._write(set(version_ids), (), mergetype=purge_deleted)
            self._save_state(position=position)

    def rebuild(
        self,
        chunks: Iterable[port.IndexedChunk],
        *,
        position: int | None = None,
        gaps: Sequence[port.Gap] = (),
    ) -> None:
        """Replace the whole index with ``chunks`` (each version's chunks contiguous); the
        watermark becomes ``position`` with the open ``gaps``.

        Also restores a directory deleted underneath the process (see :meth:`is_intact`).
        """
        with self._write_lock:
            self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            generation = self._state["generation"] + 1
            shutil.rmtree(self._generation_path(generation), ignore_errors=True)
            sides = self._open_generation(generation)
            try:
                fill(sides, port.contiguous_versions(chunks), self._stems)
            except BaseException:
                for side in sides:
                    side.close()
                shutil.rmtree(self._generation_path(generation), ignore_errors=True)
                raise
            self._save_state(position=position, generation=generation, always=True, gaps=gaps)
            self._outdated = False
            old, self._sides = self._sides, sides
            for side in old:
                side.close()
            shutil.rmtree(self._generation_path(generation - 1), ignore_errors=True)

    def advance(self, position: int, gaps: Sequence[port.Gap] = ()) -> None:
        """Durably set the watermark to ``position`` and the open gaps to ``gaps``."""
        with self._write_lock:
            self._save_state(position=position, always=True, gaps=gaps)

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

    def is_intact(self) -> bool:
        """True while ``state.json`` names the generation this object holds and that
        generation's directory is on disk.

        A process holding the index open keeps answering from deleted files (Linux keeps them
        readable), so only this notices the directory removed underneath it (or this
        generation replaced by another process's rebuild); :meth:`rebuild` restores it.
        """
        generation = self._state["generation"]
        try:
            on_disk = json.loads((self._directory / _STATE).read_text("utf-8"))["generation"]
        except (OSError, ValueError, KeyError, TypeError):
            return False
        return bool(on_disk == generation and self._generation_path(generation).is_dir())

    def last_applied_position(self) -> int | None:
        """The position stored with the last durable write (kept across reopening)."""
        position = self._state["position"]
        return None if position is None else int(position)

    def open_gaps(self) -> list[port.Gap]:
        """Positions below the watermark not applied yet (see the port), kept in the state."""
        return [(int(lo), int(hi), float(seen)) for lo, hi, seen in self._state.get("gaps", [])]

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
        analysed = list(dict.fromkeys(words))
        # the words of how a question is asked ("what", "why", "should we") say nothing of its
        # topic, yet match headings such as "Why this matters": left out unless nothing remains
        terms = [w for w in analysed if w not in self._question_words] or analysed
        terms = terms[:MAX_QUERY_TERMS]
        if not terms or index_filter.admits_nothing():
            return []

        def ranked(side: Side, searcher: Searcher) -> list[tuple[Any, float]]:
            scored = side.scores(searcher, terms, weights, index_filter)
            return top(searcher, scored, limit, per_version)

        return self._using(which, ranked)

    def _using(self, which: int, use: Callable[[Side, Searcher], _T]) -> _T:
        """Run ``use`` with the current side's searcher, again if a rebuild replaced it."""
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

    def _generation_path(self, generation: int) -> Path:
        return self._directory / f"generation-{generation}"

    def _open_generation(self, generation: int) -> tuple[Side, Side]:
        path = self._generation_path(generation)
        path.mkdir(exist_ok=True)
        return Side(path, "chunks"), Side(path, "versions")

    def _save_state(
        self,
        *,
        position: int | None,
        generation: int | None = None,
        always: bool = False,
        gaps: Sequence[port.Gap] | None = None,
    ) -> None:
        """Durably replace ``state.json`` (write, fsync, rename); no position keeps the old, no
        ``gaps`` keeps the open gaps."""
        if position is None and not always:
            return
        generation = generation or self._state["generation"]
        kept = self._state.get("gaps", []) if gaps is None else [list(gap) for gap in gaps]
        state = {"generation": generation, "position": position, "format": FORMAT, "gaps": kept}
        path = self._directory / _STATE
        temporary = path.with_suffix(".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(state, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        self._state = state
