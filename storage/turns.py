"""SQLite's single writer, taken in turns by the threads of one process and by the processes
of one database file.

SQLite lets one transaction write at a time; another ``BEGIN IMMEDIATE`` waits in SQLite's busy
handler, which polls with growing sleeps (up to 100 ms). A thread that writes back to back — a
writer committing governed writes in a loop — takes the free lock again before a sleeping
waiter wakes, so the keyword index's background upkeep (whose batch writes the chunk rows) or a
read storing its context could wait for seconds. Within one process, write transactions on a
SQLite engine therefore first queue here, first come first served. Re-entrant per thread; a
turn not given within the timeout is given up (the transaction then waits in SQLite's busy
handler as before), so a bug here can slow a write, never deadlock it.

Between processes (``ameide serve --workers N``, a CLI beside a server) the owner of a turn
also holds :class:`FileTurn`, an exclusive ``flock`` beside the database file, for as long as
its transaction writes. The kernel wakes a waiting process the moment the lock is free, where
SQLite's busy handler would sleep on: measured with two serving workers whose every read
stores its context, a worker with one client spent half its time asleep in ``BEGIN IMMEDIATE``
while the other worker's threads took the lock back to back. A waiter holds a second lock
(``….queue``) while it waits, and a process takes its next turn only through that queue, so
two busy processes alternate instead of one of them taking the free lock again and again.
Programs that do not take these locks (the ``sqlite3`` shell) are still ordered by SQLite's
busy handler.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections import deque
from pathlib import Path

TURN_WAIT = 60.0
"""Seconds a write waits for its turn (SQLite's own busy timeout is as long)."""


class FileTurn:
    """An exclusive ``flock`` on ``path`` (created 0600), taken in line: a waiter holds
    ``path.queue`` while it waits, so the next taker is whoever waited first, not whoever
    released. Held by one thread at a time (the owner of a :class:`WriteTurns` turn)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue = path.with_name(path.name + ".queue")
        self._fd: int | None = None

    def acquire(self) -> None:
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
        queue = os.open(self._queue, flags, 0o600)
        try:
            fd = os.open(self.path, flags, 0o600)
            try:
                fcntl.flock(queue, fcntl.LOCK_EX)  # in line behind the process already waiting
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
        finally:
            os.close(queue)  # the next waiter may queue now
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock


class WriteTurns:
    """A first-come, first-served, re-entrant lock for the write transactions of one engine;
    with ``lock_file``, a turn also holds that file's :class:`FileTurn` (other processes)."""

    def __init__(self, lock_file: Path | None = None) -> None:
        self._mutex = threading.Lock()
        self._queue: deque[tuple[int, threading.Lock]] = deque()
        self._owner: int | None = None
        self._depth = 0
        self._file = FileTurn(lock_file) if lock_file is not None else None

    def acquire(self, timeout: float = TURN_WAIT) -> bool:
        """Wait for this thread's turn; False when it did not come within ``timeout`` (the
        caller then goes ahead without one and must not :meth:`release`)."""
        me = threading.get_ident()
        with self._mutex:
            if self._owner == me:
                self._depth += 1
                return True
            free = self._owner is None and not self._queue
            if free:
                self._owner, self._depth = me, 1
            else:
                gate = threading.Lock()
                gate.acquire()
                self._queue.append((me, gate))
        if free:
            return self._take_file()  # outside the mutex: others may queue meanwhile
        if gate.acquire(timeout=timeout):
            return self._take_file()  # handed over by release(), which made this the owner
        with self._mutex:
            if (me, gate) in self._queue:
                self._queue.remove((me, gate))
                return False
        return self._take_file()  # handed over between the timeout and the check

    def _take_file(self) -> bool:
        """The other processes' turn, once this thread owns the process's turn."""
        if self._file is not None:
            try:
                self._file.acquire()
            except BaseException:
                self.release()
                raise
        return True

    def release(self) -> None:
        """End this thread's turn (the last of its nested ones): the next in line gets it."""
        with self._mutex:
            self._depth -= 1
            if self._depth:
                return
            if self._file is not None:
                self._file.release()
            if self._queue:
                self._owner, gate = self._queue.popleft()
                self._depth = 1
                gate.release()
            else:
                self._owner = None
