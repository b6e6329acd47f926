"""Which versions a read may draw from: the selection, as plain data (no storage, no index).

A read first resolves its selector (``published`` / ``baseline_ref`` / ``head`` /
``version_ref``) to canonical versions and, with ``include_evidence``, adds the latest
non-retired version of every evidence element — all as of the read's instant and already
trimmed to what the caller may read. That version set (a :class:`Selection`) is then the
allowlist of the keyword search and the only place direct fetches and relationship expansion
may take versions from, so every recall path sees the same universe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

CANONICAL = "CANONICAL"
EVIDENCE = "INGESTED_EVIDENCE"
SELECTOR_KINDS = ("published", "baseline_ref", "head", "version_ref")


@dataclass(frozen=True, slots=True)
class SelectedVersion:
    """One version a read may use, with the element attributes selection and ranking need."""

    version_id: str
    element_id: str
    repository_key: str
    source_kind: str
    classification: str
    retired: bool = False
    """Whether the element was retired at the read's instant."""


@dataclass
class Selection:
    """The versions a read may draw from (one per element, except explicitly listed ones)."""

    versions: dict[str, SelectedVersion] = field(default_factory=dict)
    by_element: dict[str, str] = field(default_factory=dict)
    """Element id → its (first) selected version."""
    baselines: dict[str, str | None] = field(default_factory=dict)
    """Repository key → the baseline its canonical versions came from (selector-dependent)."""
    _ids: frozenset[str] | None = field(default=None, repr=False, compare=False)

    def version_ids(self) -> frozenset[str]:
        """The selected version ids as one set, made once (``add`` and ``keep`` make it
        anew): at a million chunks a selection holds tens of thousands of ids, and the keyword
        filter of every read of a kept selection then hashes and compares the same object."""
        if self._ids is None:
            self._ids = frozenset(self.versions)
        return self._ids

    def add(self, versions: Iterable[SelectedVersion], *, several: bool = False) -> None:
        """Add versions; an element keeps the first version it was given, unless ``several``
        (explicitly listed versions) lets more versions of one element in."""
        self._ids = None
        for v in versions:
            if v.element_id in self.by_element and not several:
                continue
            self.versions[v.version_id] = v
            self.by_element.setdefault(v.element_id, v.version_id)

    def keep(self, version_ids: Iterable[str]) -> None:
        """Narrow the selection to ``version_ids``."""
        wanted = set(version_ids)
        self._ids = None
        self.versions = {k: v for k, v in self.versions.items() if k in wanted}
        self.by_element = {}
        for v in self.versions.values():
            self.by_element.setdefault(v.element_id, v.version_id)

    def version_of(self, element_id: str) -> SelectedVersion | None:
        """The selected version of an element, if any."""
        version_id = self.by_element.get(element_id)
        return self.versions[version_id] if version_id else None

    def counts(self) -> dict[str, int]:
        """How many versions per source kind (of readable content only)."""
        out: dict[str, int] = {}
        for v in self.versions.values():
            out[v.source_kind] = out.get(v.source_kind, 0) + 1
        return out


def epoch_of(value: Any) -> float | None:
    """Epoch seconds of a datetime, a date or an ISO text (None when absent or unparsable).

    The same reading of ``effective_from`` / ``effective_to`` as the index maintainer's, so a
    validity window means one thing on every recall path.
    """
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp()
    if isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return epoch_of(parsed)
    return None


def valid_at(metadata: Mapping[str, Any], instant: float) -> bool:
    """Whether ``instant`` lies in the version's ``[effective_from, effective_to)`` window.

    A missing or unparsable bound is unbounded on that side.
    """
    start = epoch_of(metadata.get("effective_from"))
    end = epoch_of(metadata.get("effective_to"))
    return (start is None or start <= instant) and (end is None or instant < end)


def is_superseded(metadata: Mapping[str, Any]) -> bool:
    """Marked as replaced: ``superseded``, a lifecycle state ``superseded`` (derived at ingest
    from the document's status line, banner or front matter: ``ingest.lifecycle``),
    ``status: superseded`` or a ``superseded_by``."""
    status = str(metadata.get("status", "")).strip().lower()
    stated = metadata.get("lifecycle")
    return (
        bool(metadata.get("superseded"))
        or status == "superseded"
        or bool(metadata.get("superseded_by"))
        or (isinstance(stated, Mapping) and stated.get("state") == "superseded")
    )
