"""Plain records the store hands out beside the aggregates: what an ingest source mirrors, and a
version as the indexes see it. Pure data, so ``storage`` can build them without importing the
layers that consume them (``ingest``, ``service``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class MirroredFile:
    """One mirrored path: the element it maps to, whether that element is live, its head hash."""

    repository: str
    path: str
    element_id: str
    live: bool
    head_sha256: str | None
    classification: str | None = None


@dataclass(frozen=True)
class IndexableVersion:
    """A version with the element attributes the index filters and ranks on."""

    version_id: str
    element_id: str
    repo_key: str
    source_kind: str
    type_key: str
    classification: str
    title: str
    body: str
    metadata: dict[str, Any]
    recorded_at: datetime
    retired_at: datetime | None
    erased: bool
    replaced_at: datetime | None = None
    """When the element's next version was recorded (``None``: the current one): a read's
    BM25 statistics count the versions current at its instant (``projection.tantivy``)."""
