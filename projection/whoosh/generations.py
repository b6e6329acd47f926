"""Moved to :mod:`projection.generations` (both engines share it); kept for old imports."""

from projection.generations import (
    QUEUE_LOCK,
    READERS,
    WRITE_LOCK,
    Held,
    WriteLock,
    collect,
    generation_path,
    generations,
    hold,
)

__all__ = [
    "QUEUE_LOCK",
    "READERS",
    "WRITE_LOCK",
    "Held",
    "WriteLock",
    "collect",
    "generation_path",
    "generations",
    "hold",
]
