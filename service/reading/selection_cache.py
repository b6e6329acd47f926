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

A read of the past (``as_of``) or of a validity instant (``valid_at``) is kept too, keyed by
those exact instants besides the stamp: with the stamp unchanged the database is unchanged, so
the selection of one instant is the same every time it is resolved — an auditor replaying
questions at one instant resolves it once (on a million chunks that resolution is most of an
``as_of`` read). A past instant is never answered from a current entry or another instant's,
and such entries have their own, smaller room (:data:`PAST_SIZE`), so reads of many instants
cannot push the current selections out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from projection.selection import Selection
from service.authz import Permission, access_levels
from service.core import UnitOfWork
from service.reading.request import ReadRequest
from service.reading.selection import resolve_selection

CACHED_SELECTORS = frozenset({"published", "head", "baseline_ref"})
SIZE = 64
"""Current selections kept (least recently used dropped first)."""
PAST_SIZE = 8
"""Selections of past (``as_of``) or validity (``valid_at``) instants kept."""


class SelectionCache:
    """Selections by (stamp, selector, readable levels, instants); thread-safe."""

    def __init__(self, size: int = SIZE, past_size: int = PAST_SIZE) -> None:
        self._rooms = {False: _Room(size), True: _Room(past_size)}
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
        """The read's selection, kept or resolved (``service.reading.selection``); a listed
        versions selector is always resolved."""
        if req.selector.kind not in CACHED_SELECTORS:
            return resolve_selection(uow, perms, req, at)
        stamp = uow.store.selection_stamp()  # before the selection: see the module
        key = _key(stamp, perms, req, at)
        room = self._rooms[at is not None or req.valid_at is not None]
        with self._lock:
            kept = room.get(key)
            if kept is not None:
                self.hits += 1
                return _copy(kept)
        selection = resolve_selection(uow, perms, req, at)
        with self._lock:
            self.misses += 1
            room.put(key, _copy(selection), stamp)
        return selection


class _Room:
    """One least-recently-used store of selections; entries of older stamps are dropped as
    soon as a later stamp's arrives (they can never be hit again)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[tuple[Any, ...], Selection] = OrderedDict()

    def get(self, key: tuple[Any, ...]) -> Selection | None:
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
        return kept

    def put(self, key: tuple[Any, ...], selection: Selection, stamp: int) -> None:
        self._kept[key] = selection
        for old in [k for k in self._kept if k[0] < stamp]:  # superseded by a later stamp
            del self._kept[old]
        while len(self._kept) > self._size:
            self._kept.popitem(last=False)


def _key(
    stamp: int, perms: Mapping[str, Permission], req: ReadRequest, at: datetime | None
) -> tuple[Any, ...]:
    levels = tuple(sorted((repo, tuple(names)) for repo, names in access_levels(perms).items()))
    selector = req.selector
    instants = tuple(None if t is None else t.timestamp() for t in (at, req.valid_at))
    return (stamp, selector.kind, selector.baseline_id, req.include_evidence, levels, instants)


def _copy(selection: Selection) -> Selection:
    """A selection the caller may not change the kept one through (the id set is immutable:
    shared, so its hash is computed once)."""
    return Selection(
        versions=dict(selection.versions),
        by_element=dict(selection.by_element),
        baselines=dict(selection.baselines),
        _ids=selection.version_ids(),
    )
