"""A small thread-safe least-recently-used store, for what is derived from immutable inputs
(version bodies, an index generation's statistics): the read side's memo and tantivy's kept
statistics and documents are both one."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

_T = TypeVar("_T")


class Lru:
    """Values by key, the least recently used dropped once the kept entries' sizes pass
    ``most`` (each entry counts the ``size`` it was put with, 1 unless told; the newest entry
    is always kept)."""

    def __init__(self, most: int) -> None:
        self._most = most
        self._held = 0
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def peek(self, key: Hashable) -> Any:
        """The value for ``key`` if kept, else ``None``."""
        with self._lock:
            found = self._data.get(key)
            if found is None:
                return None
            self._data.move_to_end(key)
            return found[0]

    def get(self, key: Hashable, make: Callable[[], _T]) -> _T:
        """The value for ``key``, made (outside the lock) and kept when missing."""
        found: _T | None = self.peek(key)
        if found is not None:
            return found
        value = make()
        self.put(key, value)
        return value

    def put(self, key: Hashable, value: Any, size: int = 1) -> None:
        """Keep ``value`` for ``key``."""
        with self._lock:
            old = self._data.pop(key, None)
            self._held += size - (old[1] if old else 0)
            self._data[key] = (value, size)
            while self._held > self._most and len(self._data) > 1:
                self._held -= self._data.popitem(last=False)[1][1]
