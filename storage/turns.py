"""SQLite's single writer, taken in turns by the threads of one process.

SQLite lets one transaction write at a time; another ``BEGIN IMMEDIATE`` waits in SQLite's busy
handler, which polls with growing sleeps (up to 100 ms). A thread that writes back to back — a
writer committing governed writes in a loop — takes the free lock again before a sleeping
waiter wakes, so the keyword index's background upkeep (whose batch writes the chunk rows) or a
read storing its context could wait for seconds. Within one process, write transactions on a
SQLite engine therefore first queue here, first come first served; the busy handler still
orders them against other processes. Re-entrant per thread; a turn not given within the timeout
is given up (the transaction then waits in SQLite's busy handler as before), so a bug here can
slow a write, never deadlock it.
"""

from __future__ import annotations

import threading
from collections import deque

TURN_WAIT = 60.0
"""Seconds a write waits for its turn (SQLite's own busy timeout is as long)."""


class WriteTurns:
    """A first-come, first-served, re-entrant lock for the write transactions of one engine."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._queue: deque[tuple[int, threading.Lock]] = deque()
        self._owner: int | None = None
        self._depth = 0

    def acquire(self, timeout: float = TURN_WAIT) -> bool:
        """Wait for this thread's turn; False when it did not come within ``timeout`` (the
        caller then goes ahead without one and must not :meth:`release`)."""
        me = threading.get_ident()
        with self._mutex:
            if self._owner == me:
                self._depth += 1
                return True
            if self._owner is None and not self._queue:
                self._owner, self._depth = me, 1
                return True
            gate = threading.Lock()
            gate.acquire()
            self._queue.append((me, gate))
        if gate.acquire(timeout=timeout):
            return True  # handed over by release(), which made this thread the owner
        with self._mutex:
            if (me, gate) in self._queue:
                self._queue.remove((me, gate))
                return False
        return True  # handed over between the timeout and the check

    def release(self) -> None:
        """End this thread's turn (the last of its nested ones): the next in line gets it."""
        with self._mutex:
            self._depth -= 1
            if self._depth:
                return
            if self._queue:
                self._owner, gate = self._queue.popleft()
                self._depth = 1
                gate.release()
            else:
                self._owner = None
