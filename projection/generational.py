"""What every keyword index engine shares: a directory's ``state.json``, its generations, the
watermark with its open gaps, following other processes' rebuilds (issue 29 item 5).

An engine subclasses :class:`GenerationalIndex` and supplies only what is its own — opening a
generation's files (:meth:`~GenerationalIndex._open_sides`), filling a new generation
(:meth:`~GenerationalIndex._build`), letting go of them (:meth:`~GenerationalIndex._close_sides`)
— plus writing and searching. The state, the locks (:mod:`projection.generations`), the
catch-up's watermark and the switch between generations are written once, here.

``state.json`` names the engine and its format: a directory of another engine, or of another
format of this one, is set aside — the index starts empty in a new generation and
:meth:`~GenerationalIndex.needs_rebuild` tells the owner to rebuild it from the database.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

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

S = TypeVar("S")
"""An engine's open files of one generation (its "sides": the chunk and the version index)."""
log = logging.getLogger("ameide.index")


class GenerationalIndex(Generic[S]):
    """The engine-independent part of a keyword index kept in ``directory`` (see the module).

    Subclasses set :attr:`engine` and :attr:`format` and implement :meth:`_open_sides`,
    :meth:`_build` and, if their files need closing, :meth:`_close_sides`."""

    engine = ""
    format = 0

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._directory = Path(directory)
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._lock = WriteLock(self._directory)
        self._swap = threading.Lock()  # replacing the sides (and their generation) holds this
        self._state_key: tuple[int, int, int] | None = None  # state.json's, when last read
        with self._lock.locked():
            state = self._read_state()
            new = state is None
            if state is None:
                state = self._fresh_state(1)
            if "gaps" not in state:  # a watermark without its open gaps is not comparable
                state = {**state, "position": None, "gaps": []}
            self._state: dict[str, Any] = state
            self._generation: int = state["generation"]
            self._outdated: bool = not self._current(state)
            if not self._outdated:
                try:
                    self._sides, self._held = self._open_generation(self._generation)
                except ValueError as exc:  # e.g. files of another schema
                    log.warning(
                        "the %s index could not be opened (%s): rebuilding", self.engine, exc
                    )
                    self._outdated = True
            if self._outdated:  # another format or engine: start empty, to be rebuilt
                self._generation = max([self._generation, *generations(self._directory)]) + 1
                self._state = self._fresh_state(self._generation)
                self._sides, self._held = self._open_generation(self._generation)
            if self._outdated or new:  # a new index has a state file too, for is_intact()
                self._save_state(position=None, always=True)
            collect(self._directory, self._generation)  # old ones no process holds any more

    # -- what an engine supplies ------------------------------------------------------------

    def _open_sides(self, path: Path) -> S:
        """Open (or create) the engine's files in generation directory ``path``; raise
        ``ValueError`` when they are of another schema."""
        raise NotImplementedError

    def _build(self, path: Path, groups: Iterable[list[port.IndexedChunk]]) -> S:
        """Create the engine's files in the new generation directory ``path`` from every
        version's chunks, committed (on failure: close what was opened, then raise)."""
        raise NotImplementedError

    def _close_sides(self, sides: S) -> None:
        """Let go of a generation's files (e.g. close searchers); nothing by default."""

    # -- the watermark and generations --------------------------------------------------------

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

    def rebuild(
        self,
        chunks: Iterable[port.IndexedChunk],
        *,
        position: int | None = None,
        gaps: Sequence[port.Gap] = (),
    ) -> None:
        """Replace the whole index with ``chunks`` (each version's chunks contiguous) in a new
        generation published at once (``state.json``'s atomic rename): readers never see a
        partial index and a crashed rebuild leaves the old one current. The watermark becomes
        ``position`` with ``gaps``. Also restores a directory deleted underneath the process
        (see :meth:`is_intact`)."""
        with self.exclusive():
            self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            collect(self._directory, self._state["generation"])  # e.g. a crashed rebuild's
            on_disk = [self._generation, self._state["generation"], *generations(self._directory)]
            generation = max(on_disk) + 1  # never a number some process may still hold
            path = generation_path(self._directory, generation)
            path.mkdir()
            held = hold(path)
            assert held is not None  # only a collect() removes it, under the write lock
            try:
                sides = self._build(path, port.contiguous_versions(chunks))
            except BaseException:
                held.release()
                shutil.rmtree(path, ignore_errors=True)
                raise
            with self._swap:  # publish, then use it here too
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

    def needs_rebuild(self) -> bool:
        """True when the directory held an index of another format or engine, which was set
        aside: this one starts empty and only a :meth:`rebuild` fills it."""
        return self._outdated

    def is_intact(self) -> bool:
        """True while ``state.json`` names the generation this object holds (after following
        another process's rebuild) and that generation's directory is on disk.

        A process holding the index open keeps answering from deleted files (Linux keeps them
        readable), so only this notices the directory removed underneath it; :meth:`rebuild`
        restores it."""

        def follow() -> int:
            self._follow()
            return self._generation

        return generation_intact(self._directory, follow)

    def last_applied_position(self) -> int | None:
        """The position stored with the last durable write, by any process sharing the
        directory (kept across reopening)."""
        self._refresh()
        position = self._state["position"]
        return None if position is None else int(position)

    def open_gaps(self) -> list[port.Gap]:
        """Positions below the watermark not applied yet (see the port), kept in the state."""
        self._refresh()
        return [(int(lo), int(hi), float(seen)) for lo, hi, seen in self._state.get("gaps", [])]

    def close(self) -> None:
        """Let go of the generation's files and release it; the object cannot be used
        afterwards."""
        with self._swap:
            self._close_sides(self._sides)
            self._held.release()

    def _current(self, state: dict[str, Any]) -> bool:
        """Whether ``state`` is of this engine and format (a state saved before it named its
        engine is of the engine whose directory it is in)."""
        return (
            state.get("format") == self.format and state.get("engine", self.engine) == self.engine
        )

    def _fresh_state(self, generation: int) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "format": self.format,
            "generation": generation,
            "position": None,
            "gaps": [],
        }

    def _open_generation(self, generation: int) -> tuple[S, Held]:
        """Open (or create) a generation, holding it (call holding the write lock)."""
        path = generation_path(self._directory, generation)
        path.mkdir(exist_ok=True)
        held = hold(path)
        assert held is not None  # only a collect() removes it, under the write lock
        try:
            return self._open_sides(path), held
        except BaseException:
            held.release()
            raise

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
                path = generation_path(self._directory, target)
                held = hold(path)  # None: removed meanwhile by a newer rebuild, re-read
                if held is not None:
                    try:
                        sides = self._open_sides(path)
                    except Exception as exc:  # the open generation keeps answering
                        held.release()
                        log.debug("could not open generation %d: %r", target, exc)
                        return
                    self._install(sides, held, target)
                    self._outdated = self._outdated and not self._current(self._state)
                    break
                self._refresh(force=True)
            else:
                return
        with self._lock.locked(blocking=False) as mine:
            if mine:
                collect(self._directory, self._generation)

    def _install(self, sides: S, held: Held, generation: int) -> None:
        """Use ``sides`` of ``generation`` from now on (call holding ``_swap``), then let go of
        the old ones and release their generation."""
        old = (self._sides, self._held) if hasattr(self, "_held") else None
        self._sides, self._held, self._generation = sides, held, generation
        if old is not None:
            self._close_sides(old[0])
            old[1].release()

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
        kept = self._state.get("gaps", []) if gaps is None else [list(gap) for gap in gaps]
        state = self._fresh_state(generation or self._generation)
        state.update(position=position, gaps=kept)
        self._state_key = write_state(self._directory, state)
        self._state = state
