"""``WhooshKeywordIndex``: the port's methods over the directory's state and two indexes.

A directory holds ``state.json`` (current generation, watermark with its open gaps and
:data:`FORMAT`) and ``generation-<n>/`` with two Whoosh indexes — ``chunks`` (one document per
chunk) and ``versions`` (one per version: title, every heading, the whole body), so each keeps
its own BM25 statistics.

- User text is analysed like the indexed text (English stemming) into words: it never reaches a
  query parser, so ``title:x``, ``AND`` or ``*`` are words. Every word counts (an OR).
- Processes share a directory (a server beside CLI commands): every change — writes, the
  watermark, rebuilds — holds the directory's write lock (:mod:`.generations`) and first
  re-reads ``state.json``, so each applies to the current generation and keeps the others'
  watermark. Readers follow a rebuild on their next use and keep the generation they hold on
  disk (a shared lock) until they switch; old generations are removed once nobody holds them.
- An index of another :data:`FORMAT` is set aside: the new one starts empty and
  :meth:`~WhooshKeywordIndex.needs_rebuild` tells the owner to rebuild it. An index whose files
  were deleted underneath the process says so through :meth:`~WhooshKeywordIndex.is_intact`.
"""

# Whoosh's own annotations are partial; strict mypy would flag every call into it.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import functools
import logging
import os
import shutil
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from whoosh.searching import Searcher

from projection import keyword_index as port
from projection.generations import (
    Held,
    WriteLock,
    collect,
    generation_intact,
    generation_path,
    generations,
    hold,
    read_state,
    state_replaced,
    write_state,
)
from projection.keyword_index import MAX_QUERY_TERMS, QUESTION_WORDS
from projection.whoosh.schema import FORMAT, schema_is_current, stemmer
from projection.whoosh.scoring import CHUNK_FIELD_WEIGHTS, VERSION_FIELD_WEIGHTS, top
from projection.whoosh.segments import Replaced, Side
from projection.whoosh.writing import add_version, fill, purge_deleted, writing

_T = TypeVar("_T")
log = logging.getLogger("ameide.index")


class WhooshKeywordIndex:
    """A :class:`~projection.keyword_index.KeywordIndex` kept in ``directory``.

    The Whoosh indexes live in ``generation-<n>/``; ``state.json`` names the current generation
    and the watermark. A rebuild fills a new generation (committing as it goes, which keeps large
    rebuilds fast) and switches both in one atomic rename, so readers never see a partial index
    and a crashed rebuild leaves the old one current. Every process sharing the directory
    follows the new generation on its next use; the old one stays on disk until the last
    process holding it has switched (see :mod:`projection.generations`).
    """

    engine = "whoosh"

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._directory = Path(directory)
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._lock = WriteLock(self._directory)
        self._swap = threading.Lock()  # replacing the sides (and their generation) this holds
        self._state_key: tuple[int, int, int] | None = None  # state.json's, when last read
        with self._lock.locked():
            state = self._read_state()
            new = state is None
            if state is None:
                state = {"generation": 1, "position": None, "format": FORMAT, "gaps": []}
            if "gaps" not in state:  # saved before watermarks came with open gaps, when applied
                state = {**state, "position": None, "gaps": []}  # work was deleted: not comparable
            self._state: dict[str, Any] = state
            self._generation: int = state["generation"]
            self._outdated: bool = state.get("format", 1) != FORMAT
            if not self._outdated:
                self._sides, self._held = self._open_generation(self._generation)
                self._outdated = not all(schema_is_current(side.ix.schema) for side in self._sides)
                if self._outdated:
                    self._release(self._sides, self._held)
            if self._outdated:  # files of another format: start empty, to be rebuilt by the owner
                self._generation = max([self._generation, *generations(self._directory)]) + 1
                self._state = {"generation": self._generation, "position": None, "gaps": []}
                self._sides, self._held = self._open_generation(self._generation)
            if self._outdated or new:  # a new index has a state file too, for is_intact()
                self._save_state(position=None, always=True)
            collect(self._directory, self._generation)  # old ones no process holds any more
        self._analyzer = self._sides[0].ix.schema["text"].analyzer
        self._stems = stemmer(self._analyzer)
        self._question_words = frozenset(
            token.text for token in self._analyzer(" ".join(QUESTION_WORDS), mode="query")
        )

    @contextmanager
    def exclusive(self, *, blocking: bool = True) -> Iterator[bool]:
        """Hold the directory's write lock (across threads and processes), following the
        current generation first: what runs inside sees every other process's committed
        changes and no other change. Without ``blocking`` yields ``False`` at once (holding
        nothing) when another thread or process has it. Re-entrant."""
        with self._lock.locked(blocking=blocking) as mine:
            if mine:
                self._follow()
            yield mine

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
        with self.exclusive():
            self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            collect(self._directory, self._state["generation"])  # e.g. a crashed rebuild's
            on_disk = [self._generation, self._state["generation"], *generations(self._directory)]
            generation = max(on_disk) + 1  # never a number some process may still hold
            path = self._generation_path(generation)
            path.mkdir()
            held = hold(path)
            assert held is not None  # only a collect() removes it, under the write lock
            sides = (Side(path, "chunks"), Side(path, "versions"))
            try:
                fill(sides, port.contiguous_versions(chunks), self._stems)
            except BaseException:
                self._release(sides, held)
                shutil.rmtree(path, ignore_errors=True)
                raise
            with self._swap:  # publish (state.json's atomic rename), then use it here too
                self._save_state(position=position, generation=generation, always=True, gaps=gaps)
                self._install(sides, held, generation)
            self._outdated = False
            collect(self._directory, generation)  # those other processes hold: on a later one

    def advance(self, position: int, gaps: Sequence[port.Gap] = ()) -> None:
        """Durably set the watermark to ``position`` and the open gaps to ``gaps``."""
        with self.exclusive():
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

    def needs_rebuild(self) -> bool:
        """True when the directory held an index of another :data:`FORMAT`, which was set aside:
        this one starts empty and only a :meth:`rebuild` fills it."""
        return self._outdated

    def is_intact(self) -> bool:
        """True while ``state.json`` names the generation this object holds (after following
        another process's rebuild) and that generation's directory is on disk.

        A process holding the index open keeps answering from deleted files (Linux keeps them
        readable), so only this notices the directory removed underneath it; :meth:`rebuild`
        restores it.
        """

        def follow() -> int:
            self._follow()
            return self._generation

        return generation_intact(self._directory, follow)

    def last_applied_position(self) -> int | None:
        """The position stored with the last durable write (kept across reopening), by any
        process sharing the directory."""
        self._refresh()
        position = self._state["position"]
        return None if position is None else int(position)

    def open_gaps(self) -> list[port.Gap]:
        """Positions below the watermark not applied yet (see the port), kept in the state."""
        self._refresh()
        return [(int(lo), int(hi), float(seen)) for lo, hi, seen in self._state.get("gaps", [])]

    def doc_count(self) -> int:
        """Number of chunks indexed."""
        return self._using(0, lambda side, searcher: int(searcher.doc_count()))

    def version_count(self) -> int:
        """Number of versions indexed."""
        return self._using(1, lambda side, searcher: int(searcher.doc_count()))

    def close(self) -> None:
        """Close searchers and indexes and release the generation; the object cannot be used
        afterwards."""
        with self._swap:
            self._release(self._sides, self._held)

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

    def _generation_path(self, generation: int) -> Path:
        return generation_path(self._directory, generation)

    def _open_generation(self, generation: int) -> tuple[tuple[Side, Side], Held]:
        """Open (or create) a generation, holding it (call holding the write lock)."""
        path = self._generation_path(generation)
        path.mkdir(exist_ok=True)
        held = hold(path)
        assert held is not None  # only a collect() removes it, under the write lock
        return (Side(path, "chunks"), Side(path, "versions")), held

    def _follow(self) -> None:
        """Switch to the generation ``state.json`` names if another process's rebuild published
        one (one ``stat`` when it did not), releasing the old one; then remove the generations
        nobody holds any more if the write lock is free. A generation that cannot be opened
        leaves the current one answering."""
        self._refresh()
        if self._state["generation"] == self._generation:
            return
        with self._swap:
            for _ in range(10):
                target = self._state["generation"]
                if target == self._generation:
                    return
                path = self._generation_path(target)
                held = hold(path)  # None: removed meanwhile by a newer rebuild, re-read
                if held is not None:
                    try:
                        sides = (Side(path, "chunks"), Side(path, "versions"))
                    except Exception as exc:  # the open generation keeps answering
                        held.release()
                        log.debug("could not open generation %d: %r", target, exc)
                        return
                    self._install(sides, held, target)
                    self._outdated = self._outdated and self._state.get("format") != FORMAT
                    break
                self._refresh(force=True)
            else:
                return
        with self._lock.locked(blocking=False) as mine:
            if mine:
                collect(self._directory, self._generation)

    def _install(self, sides: tuple[Side, Side], held: Held, generation: int) -> None:
        """Use ``sides`` of ``generation`` from now on (call holding ``_swap``): searches of the
        old sides finish first, then their generation is released."""
        old, old_held = self._sides, self._held
        self._sides, self._held, self._generation = sides, held, generation
        self._release(old, old_held)

    @staticmethod
    def _release(sides: tuple[Side, Side], held: Held) -> None:
        for side in sides:
            side.close()  # waits for a search in progress on it
        held.release()

    def _read_state(self) -> dict[str, Any] | None:
        """``state.json`` (``None`` when missing or unreadable), noting which file was read."""
        found = read_state(self._directory)
        if found is None:
            return None
        state, self._state_key = found
        return state

    def _refresh(self, *, force: bool = False) -> None:
        """Re-read ``state.json`` if another process (or thread) replaced it (each save is a
        new file: one ``stat`` tells); a missing one keeps what was known."""
        if not force and not state_replaced(self._directory, self._state_key):
            return
        state = self._read_state()
        if state is not None and "gaps" in state:
            self._state = state

    def _save_state(
        self,
        *,
        position: int | None,
        generation: int | None = None,
        always: bool = False,
        gaps: Sequence[port.Gap] | None = None,
    ) -> None:
        """Durably replace ``state.json`` (call holding the write lock); no position keeps the
        old, no ``gaps`` keeps the open gaps."""
        if position is None and not always:
            return
        generation = generation or self._generation
        kept = self._state.get("gaps", []) if gaps is None else [list(gap) for gap in gaps]
        state = {"generation": generation, "position": position, "format": FORMAT, "gaps": kept}
        self._state_key = write_state(self._directory, state)
        self._state = state
