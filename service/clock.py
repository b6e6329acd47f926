"""System time for recorded_at: UTC and strictly increasing within a process."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta


class Clock:
    """Returns UTC instants that never repeat or go backwards in this process.

    Two writes in the same microsecond would otherwise be indistinguishable to ``as_of``.
    """

    def __init__(self) -> None:
        self._last = datetime.min.replace(tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        """The next instant."""
        with self._lock:
            now = datetime.now(UTC)
            if now <= self._last:
                now = self._last + timedelta(microseconds=1)
            self._last = now
            return now
