"""Resolved selections kept between reads while nothing they come from has changed.

Resolving a read's selection (published pointer → baseline pins, element heads, evidence) is a
query returning a row per selectable version — the largest part of a read after the index
search on a real backlog. A current read (no ``as_of``, no ``valid_at``) of the ``published``,
``head`` or ``baseline_ref`` selector may reuse a selection resolved earlier for exactly the same
readable repositories and levels, as long as the *selection stamp* is unchanged: database
triggers advance it, in the writing transaction, on every change to the tables a selection is
read from (repositories, elements, versions, baselines, pins, pointers), so every pointer move,
accept, ingest, retirement, reclassification and erasure invalidates what was kept.

What is kept is the selection, never a trimmed result: the key holds the caller's readable
repositories and levels, computed fresh for every read (a revoked grant changes the key), and
the permission filters of every later query still apply. The stamp is read before the
selection, so an entry can only hold data as new as or newer than its stamp says — never older.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from projection.selection import Selection
from service.authz import Permission
from service.core import UnitOfWork
from service.read_request import ReadRequest
from service.read_selection import access_levels, resolve_selection

CACHED_SELECTORS = frozenset({"published", "head", "baseline_ref"})
SIZE = 64
"""Selections kept (least recently used dropped first)."""


class SelectionCache:
    """Current reads' selections by (stamp, selector, readable levels); thread-safe."""

    def __init__(self, size: int = SIZE) -> None:
        self._size = size
        self._kept: OrderedDict[tuple[Any, ...], Selection] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def resolve(
        self,
        uow: UnitOfWork,
        perms: Mapping[str, Permission],
        req: ReadRequest,
        at: datetime | None,
    ) -> Selection:
        """The read's selection: kept or resolved (``service.read_selection``); a read of the
        past (``at``) or of a validity instant is always resolved."""
        if at is not None or req.valid_at is not None or req.selector.kind not in CACHED_SELECTORS:
            return resolve_selection(uow, perms, req, at)
        stamp = uow.store.selection_stamp()  # before the selection: see the module
        key = _key(stamp, perms, req)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                self.hits += 1
                return _copy(kept)
        selection = resolve_selection(uow, perms, req, at)
        with self._lock:
            self.misses += 1
            self._kept[key] = _copy(selection)
            for old in [k for k in self._kept if k[0] < stamp]:  # superseded by a later stamp
                del self._kept[old]
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return selection


def _key(stamp: int, perms: Mapping[str, Permission], req: ReadRequest) -> tuple[Any, ...]:
    levels = tuple(sorted((repo, tuple(names)) for repo, names in access_levels(perms).items()))
    selector = req.selector
    return (stamp, selector.kind, selector.baseline_id, req.include_evidence, levels)


def _copy(selection: Selection) -> Selection:
    """A selection the caller may not change the kept one through."""
    return Selection(
        versions=dict(selection.versions),
        by_element=dict(selection.by_element),
        baselines=dict(selection.baselines),
    )
