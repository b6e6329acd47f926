"""Index upkeep on a background thread, off the request path."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from service.indexing.upkeep import IndexMaintainer

log = logging.getLogger("ameide.index")


class BackgroundUpkeep:
    """Runs a maintainer's catch-up on a daemon thread, off the request path: :meth:`poke`
    after a commit only wakes it, so a write never waits for index upkeep (the keyword index's
    segments, embedding). A failed round is logged and retried at the next poke; the outbox
    keeps the work either way.

    ``settle``: seconds the thread waits after being woken before it catches up, so the writes
    committed meanwhile share one index commit (a batch) instead of one commit each.

    ``quiet``: instead, wait until no write came for ``quiet`` seconds (but ``longest`` seconds
    at most) — for costly upkeep such as embedding, which would otherwise take the cores from a
    burst of writes version by version, and which batches better the more it gets at once."""

    def __init__(
        self,
        maintainer: IndexMaintainer[Any],
        *,
        settle: float = 0.0,
        quiet: float = 0.0,
        longest: float = 10.0,
    ) -> None:
        self.maintainer = maintainer
        self.settle = settle
        self.quiet = quiet
        self.longest = longest
        self._pokes = 0
        self._wake = threading.Event()
        self._stopped = threading.Event()
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
            self._pokes += 1
        self._wake.set()

    def _run(self) -> None:
        while not self._stop:
            self._wake.wait()
            if self.settle and not self._stop:
                self._stopped.wait(self.settle)  # let more commits join this batch
            if self.quiet and not self._stop:
                self._wait_for_quiet()
            self.busy = True  # before clearing the wake-up: idle() never sees a gap between
            self._wake.clear()
            if self._stop:
                self.busy = False
                return
            try:
                self.maintainer.catch_up(wait=True)
            except Exception:
                if self._stop:  # interrupted by close(): what was done is kept
                    return
                log.exception("background upkeep of the %s failed", self.maintainer.label)
            finally:
                self.busy = False

    def _wait_for_quiet(self) -> None:
        """Return once no poke came for ``quiet`` seconds, ``longest`` seconds at most."""
        deadline = time.monotonic() + self.longest
        while not self._stop:
            seen = self._pokes
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._stopped.wait(min(self.quiet, remaining))
            if self._pokes == seen:
                return

    def idle(self) -> bool:
        """True when no round runs and none was asked for (tests, benchmarks: the writes so far
        are applied, unless a round failed or another process holds the index)."""
        return not self.busy and not self._wake.is_set()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait up to ``timeout`` seconds for :meth:`idle`; True when it is."""
        deadline = time.monotonic() + timeout
        while not self.idle():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def close(self, timeout: float = 5.0) -> bool:
        """Stop the thread (a round in progress finishes first, up to ``timeout`` seconds);
        True when it has stopped (False: it is abandoned mid-round, a daemon thread that dies
        with the process — the outbox keeps what it had not applied)."""
        with self._start_lock:
            self._stop = True
        self._stopped.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True
