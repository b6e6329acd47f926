"""Use case: where a repository's knowledge is thin or stale (docs/drift.md, "Knowledge gaps").

A plain report of counts and dates — curated vs evidence, retired, superseded, the newest head
and source times, drifted citations, and the stored questions whose answer held no curated
content — for the whole repository or the elements whose head mentions every word of a topic.
Everything is counted from what the caller may read (trimmed in the queries); the stored
questions are the caller's own (every one for an auditor), as ``replay`` would allow.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from domain.errors import InvalidArgument
from domain.permissions import Action
from domain.values import SourceKind, validate_text
from service.audit.trimming import Visibility, readable_items
from service.authz import Caller, access_levels
from service.core import repo_key
from service.freshness.drift import drift_entries
from service.freshness.results import EvidenceCounts, GapsReport, KindCounts, UnansweredQuestion
from service.kernel import Kernel, acting
from service.views import iso

MAX_TOPIC_CHARS = 200
MAX_CONTEXTS = 2000


def _newest(values: Iterable[datetime | None]) -> str | None:
    present = [v for v in values if v is not None]
    return iso(max(present)) if present else None


def _source_time(row: dict[str, Any]) -> datetime | None:
    value = (row["metadata"] or {}).get("source_time")
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _kind_counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    live = [r for r in rows if r["retired_at"] is None]
    return {
        "total": len(rows),
        "live": len(live),
        "retired": len(rows) - len(live),
        "newest_version_at": _newest(r["recorded_at"] for r in rows),
    }


def _evidence_counts(rows: list[dict[str, Any]]) -> EvidenceCounts:
    live = [r for r in rows if r["retired_at"] is None]
    superseded = sum(1 for r in live if (r["metadata"] or {}).get("superseded"))
    return EvidenceCounts(
        **_kind_counts(rows),
        superseded=superseded,
        superseded_share=round(superseded / len(live), 3) if live else None,
        newest_source_time=_newest(_source_time(r) for r in rows),
    )


def _unanswered(
    vis: Visibility, rows: list[dict[str, Any]], words: list[str]
) -> list[UnansweredQuestion]:
    """The questions among ``rows`` (stored contexts) mentioning every word whose returned items
    — those the caller may still read — hold no curated version."""
    out = []
    for r in rows:
        query = (r["request"] or {}).get("query")
        items = readable_items(vis, (r["response"] or {}).get("items") or [])
        if not isinstance(query, str) or not query.strip():
            continue
        if any(i.get("source_kind") == SourceKind.CANONICAL.value for i in items):
            continue
        if all(w in query.lower() for w in words):
            out.append(
                UnansweredQuestion(
                    context_id=r["context_id"],
                    at=iso(r["at"]) or "",
                    principal_id=r["principal_id"],
                    query=query,
                    items=len(items),
                )
            )
    return out


class Gaps:
    """The knowledge-gaps report."""

    def __init__(self, k: Kernel) -> None:
        self.k = k

    @acting
    def gaps(self, caller: Caller, repo: str, topic: str | None = None) -> GapsReport:
        """What the memory holds on a topic (or the whole repository): curated vs evidence
        counts, retired and superseded, newest version and source times, drifted citations, and
        stored questions that got no curated answer — counts and dates only, of what you may
        read."""
        key = repo_key(repo)
        text = validate_text(topic, "topic", MAX_TOPIC_CHARS, required=False)
        words = [w.lower() for w in text.split()]
        if topic is not None and not words:
            raise InvalidArgument("topic is empty", field="topic")
        with self.k.uow(readonly=True) as uow:
            perm = self.k.gate.repository(uow, caller, key, Action.READ)
            rows = uow.store.gap_rows(key, access_levels({key: perm}), words)
            curated = [r for r in rows if r["source_kind"] == SourceKind.CANONICAL.value]
            evidence = [r for r in rows if r["source_kind"] != SourceKind.CANONICAL.value]
            pages = {r["element_id"] for r in curated}
            drifted = [e for e in drift_entries(uow, perm, key) if e.curated_element_id in pages]
            auditor = perm.can(Action.AUDIT)
            asked = uow.store.stored_questions(
                key, None if auditor else [caller.principal_id], MAX_CONTEXTS
            )
            unanswered = _unanswered(Visibility(self.k.gate, uow, caller), asked, words)
            self.k.audit.log_read(uow, caller, "gaps", key, topic=text or None)
            uow.commit()
        return GapsReport(
            repository_id=key,
            topic=text or None,
            curated=KindCounts(**_kind_counts(curated)),
            evidence=_evidence_counts(evidence),
            drifted=len(drifted),
            contexts_scanned=len(asked),
            unanswered=unanswered,
        )
