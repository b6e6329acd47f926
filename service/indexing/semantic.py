"""Semantic recall as a collaborator of the read pipeline: the embedding index, kept by its own
outbox upkeep in the background, searched inside the read's selection.

Built in ``runtime`` when the ``semantic`` extra is installed (and ``AMEIDE_SEMANTIC`` is not
``off``) and passed to the service; without it reads are keyword-only and nothing here loads.
Vectors are derived state like the keyword index (``projection.semantic.vectors``): an ingest
never waits for them; versions not embedded yet are ranked by keywords alone and ``explain``
says so.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from typing import Any

from projection.semantic.vectors import SemanticHit, VectorIndex
from service.indexing.background import BackgroundUpkeep
from service.indexing.upkeep import IndexMaintainer

STOP_TIMEOUT = 120.0
"""Seconds ``close`` waits for the embedding batch in progress to finish."""
EMBED_QUIET = 1.0
EMBED_LONGEST = 10.0
"""Embedding starts once writes paused for ``EMBED_QUIET`` seconds, or ``EMBED_LONGEST`` seconds
after the first write it waits for: a version costs ~40 ms of CPU to embed, which, done write by
write, took the cores from a burst of governed writes (pairs/s fell by half); gathered, it runs
in fuller batches after the burst. Versions not embedded yet rank by keywords alone meanwhile."""


class SemanticRecall:
    """The embedding index behind the read pipeline (see the module docstring)."""

    def __init__(
        self,
        maintainer: IndexMaintainer[VectorIndex],
        model: str,
        stopping: threading.Event | None = None,
    ) -> None:
        self.maintainer = maintainer
        self.model = model
        self.upkeep = BackgroundUpkeep(maintainer, quiet=EMBED_QUIET, longest=EMBED_LONGEST)
        # shared with the index the maintainer opens (``runtime`` passes it to both), so a close
        # that comes before the index is open still stops the embedding that opens it
        self.stopping = stopping or threading.Event()

    def poke(self) -> None:
        """After a commit: embed what changed, in the background."""
        self.upkeep.poke()

    def search(
        self, query: str, version_ids: Collection[str], limit: int
    ) -> tuple[list[SemanticHit], dict[str, float]]:
        """The best ``limit`` of ``version_ids`` by meaning, and the similarity of every one of
        them that has vectors."""
        return self.maintainer.index.search(query, version_ids, limit)

    def warm(self) -> None:
        """Load the model's weights and the vectors now, not on the first read: a serving
        worker does this before it reports ready, so its first reads are not slower (and its
        event loop not starved) while the other workers already serve at full speed."""
        index = self.maintainer.index
        _ = index.encoder
        index.search("", (), 0)

    def build(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed everything pending now, in the foreground (``ameide index embed``)."""
        index = self.maintainer.index
        previous = index.progress
        index.progress = progress
        try:
            return self.maintainer.catch_up(wait=True)
        finally:
            index.progress = previous

    def status(self) -> dict[str, Any]:
        """The embedding index's lag and counts, as ``index status`` shows them."""
        return {**self.maintainer.status(), "model": self.model, "building": self.upkeep.busy}

    def close(self) -> None:
        """Stop embedding between two batches (what was embedded stays cached), then close.

        Waits for the batch in progress: a batch of the model on a busy machine takes seconds."""
        self.stopping.set()
        index = self.maintainer.opened
        if index is not None:
            index.stopping.set()
        self.upkeep.close(timeout=STOP_TIMEOUT)
        self.maintainer.close()
