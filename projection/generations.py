"""Sharing an index directory's generations between processes (both keyword index engines):
a write lock, reader locks, clean-up.

- ``write.lock`` (an exclusive ``flock``) serialises every change to the directory — writes,
  watermark updates, rebuilds and the removal of old generations — across processes; a thread
  lock (:class:`WriteLock`) does the same within one. ``queue.lock`` makes callers that would
  not wait give way to one waiting (a rebuild is not starved by catch-ups after commits).
- ``generation-<n>/readers.lock``: every process holding generation ``n`` open holds a shared
  ``flock`` on it (:func:`hold`) until it closes that generation. A rebuild publishes a new
  generation by replacing ``state.json``; each process follows on its next use and releases the
  old one. :func:`collect` removes a generation only when it gets the exclusive lock without
  waiting, i.e. when no process holds it any more; one still held is left for a later
  collection (every rebuild, every process's switch to a newer generation, every opening).

Locks are released by the kernel when a process dies, so a crashed reader never pins a
generation. POSIX only (``fcntl``), like Whoosh's own file locks.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

STATE = "state.json"
READERS = "readers.lock"
WRITE_LOCK = "write.lock"
QUEUE_LOCK = "queue.lock"
_GENERATION = re.compile(r"generation-(\d+)")
log = logging.getLogger("ameide.index")

StateKey = tuple[int, int, int]
"""Which ``state.json`` file was read (inode, mtime, size): every save is a new file."""


def _key(stat: os.stat_result) -> StateKey:
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)


def read_state(directory: Path) -> tuple[dict[str, Any], StateKey] | None:
    """``state.json`` with the key of the file read (``None`` when missing or unreadable)."""
    path = directory / STATE
    try:
        stat = os.stat(path)
        state = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or not isinstance(state.get("generation"), int):
        return None
    return state, _key(stat)


def state_replaced(directory: Path, known: StateKey | None) -> bool:
    """Whether ``state.json`` is another file than ``known`` (one ``stat``; a missing one
    counts as unchanged, keeping what was known)."""
    try:
        return _key(os.stat(directory / STATE)) != known
    except OSError:
        return False


def write_state(directory: Path, state: dict[str, Any]) -> StateKey:
    """Durably replace ``state.json`` (write, fsync, rename; call holding the write lock)."""
    path = directory / STATE
    temporary = path.with_suffix(".tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        json.dump(state, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return _key(os.stat(path))


def generation_path(directory: Path, generation: int) -> Path:
    """The directory of generation ``generation``."""
    return directory / f"generation-{generation}"


def generation_intact(directory: Path, follow: Callable[[], int]) -> bool:
    """Whether ``state.json`` names the generation an index object holds once it followed the
    newest (``follow()`` follows and returns it) and that generation's directory is on disk.

    A missing directory counts only when ``state.json`` still names it when read again: rebuilds
    in quick succession publish a generation and remove the one before, so a directory can go
    between reading the state and looking for it without anything being lost."""
    on_disk: int | None = None
    for _ in range(5):
        held = follow()
        found = read_state(directory)
        if found is None:
            return False
        on_disk = int(found[0]["generation"])
        if generation_path(directory, on_disk).is_dir():
            if on_disk == held:
                return True
            continue  # a rebuild published another meanwhile: follow that one
        again = read_state(directory)
        if again is None or again[0]["generation"] == on_disk:
            return False  # deleted underneath, not replaced
    return on_disk is not None and generation_path(directory, on_disk).is_dir()


def generations(directory: Path) -> list[int]:
    """The numbers of the generation directories present, ascending."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(int(m.group(1)) for name in names if (m := _GENERATION.fullmatch(name)))


class Held:
    """A shared lock on one generation's ``readers.lock``: the generation stays on disk while
    held. :meth:`release` is idempotent."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock


def hold(path: Path) -> Held | None:
    """A shared lock keeping generation directory ``path`` on disk, or ``None`` when it is gone
    (removed by another process's :func:`collect`: re-read ``state.json`` and retry)."""
    lock_path = path / READERS
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits only for a collect() removing it right now
        # a collect() may have removed the directory between the open and the lock
        if os.stat(lock_path).st_ino != os.fstat(fd).st_ino:
            os.close(fd)
            return None
    except OSError:
        os.close(fd)
        return None
    return Held(fd)


def collect(directory: Path, keep: int) -> list[int]:
    """Remove every generation but ``keep`` that no process holds (call holding the write
    lock, so no rebuild is filling one); returns the numbers removed."""
    removed = []
    for number in generations(directory):
        if number == keep:
            continue
        path = generation_path(directory, number)
        try:
            fd = os.open(path / READERS, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.debug("generation %d is still in use: removed later", number)
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append(number)
        finally:
            os.close(fd)
    return removed


class WriteLock:
    """The directory's write lock: a re-entrant thread lock plus an exclusive ``flock`` on
    ``write.lock`` held while any thread of this process is inside."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._threads = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def locked(self, *, blocking: bool = True) -> Iterator[bool]:
        """Hold the lock; without ``blocking`` yields ``False`` (holding nothing) when another
        thread or process has it."""
        if not self._threads.acquire(blocking=blocking):
            yield False
            return
        try:
            if self._depth == 0:
                fd = self._acquire(blocking)
                if fd is None:
                    yield False
                    return
                self._fd = fd
            self._depth += 1
            try:
                yield True
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fd, self._fd = self._fd, None
                    os.close(fd)
        finally:
            self._threads.release()

    def _acquire(self, blocking: bool) -> int | None:
        """Lock ``write.lock``, the descriptor holding it (``None``: busy, without ``blocking``).

        A waiting caller holds ``queue.lock`` meanwhile, and a caller that does not wait backs
        off while anyone waits: otherwise a stream of short catch-ups after commits, each taking
        the free lock at once, could keep a rebuild waiting indefinitely.
        """
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        queue = os.open(self._directory / QUEUE_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fd = os.open(self._directory / WRITE_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            if blocking:
                fcntl.flock(queue, fcntl.LOCK_EX)  # in line behind other waiters only
                fcntl.flock(fd, fcntl.LOCK_EX)
            else:
                # nobody waiting (held only for this instant: shared holds overlapping one
                # another would keep a waiter out of the queue as surely as out of the lock)
                fcntl.flock(queue, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        finally:
            os.close(queue)
        return fd
