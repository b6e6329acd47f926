"""Index upkeep on a background thread, off the request path."""

from __future__ import annotations

import logging
import threading
from typing import Any

from service.index_ops import IndexMaintainer

log = logging.getLogger("ameide.index")


class BackgroundUpkeep:
    """Runs a maintainer's catch-up on a daemon thread, off the request path: :meth:`poke`
    after a commit only wakes it, so a write (an ingest) never waits for slow upkeep such as
    embedding. A failed round is logged and retried at the next poke."""

    def __init__(self, maintainer: IndexMaintainer[Any]) -> None:
        self.maintainer = maintainer
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.busy = False

    def poke(self) -> None:
        """Ask for a catch-up soon (starts the thread on first use)."""
        with self._start_lock:
            if self._stop:
                return
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name=f"upkeep: {self.maintainer.label}", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while not self._stop:
            self._wake.wait()
            self._wake.clear()
            if self._stop:
                return
            self.busy = True
            try:
                self.maintainer.catch_up(wait=True)
            except Exception:
                if self._stop:  # interrupted by close(): what was done is kept
                    return
                log.exception("background upkeep of the %s failed", self.maintainer.label)
            finally:
                self.busy = False

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread (a round in progress finishes its current batch first)."""
        with self._start_lock:
            self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
