"""Shapes of the read side: ranked items, the response's items, filters and selector, and a
small memo of what is derived from immutable version bodies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from projection.lru import Lru
from projection.packaging import ItemSource, Packed
from projection.ranking import Scored
from projection.selection import Selection
from service.authz import Permission
from service.reading.recall import Recalled
from service.reading.request import ReadRequest
from service.views import iso

MEMO_SIZE = 2_000
"""Versions whose chunks and shingles are kept between reads (they never change)."""


class Memo(Lru):
    """What is derived from immutable version bodies (chunks, shingles), kept between reads."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        super().__init__(size)


@dataclass
class Ranked:
    """The outcome of ranking: kept items best first, with what to show of each."""

    scored: list[Scored]
    sources: dict[str, ItemSource]
    rows: dict[str, dict[str, Any]]
    duplicates: list[dict[str, Any]]
    """Items collapsed into a better one (for the trace)."""


def item_views(packed: Packed, ranked: Ranked, explain: bool) -> list[dict[str, Any]]:
    by_version = {s.candidate.version_id: s for s in ranked.scored}
    items = []
    for p in packed.items:
        s = by_version[p.source.version_id]
        row, c = ranked.rows[p.source.version_id], s.candidate
        item: dict[str, Any] = {
            "repository_id": c.repository_key,
            "element_id": c.element_id,
            "version_id": c.version_id,
            "title": row["title"],
            "content": p.content,
            "source_kind": c.source_kind,
            "provenance": {
                key: row[key] for key in ("actor_id", "source_repo", "commit_sha", "path")
            },
            "why_included": c.why_included,
            "score": s.score,
            "citations": [
                {
                    "repository_id": c.repository_key,
                    "element_id": c.element_id,
                    "version_id": c.version_id,
                    "excerpt": {"chunk_key": x.chunk_key, "start": x.start, "end": x.end},
                }
                for x in p.pieces
            ],
            "relationship_path": [step.as_dict() for step in c.path],
            "erased": p.source.note is not None,
            "lifecycle": lifecycle_view(row.get("metadata") or {}, c.superseded),
        }
        if explain:
            item["score_breakdown"] = {k: dict(v) for k, v in s.breakdown.items()}
        items.append(item)
    return items


def lifecycle_view(metadata: Mapping[str, Any], superseded: bool) -> dict[str, Any]:
    """What an item says of its lifecycle: ``state`` (current, draft, superseded, or None when
    the document states nothing), the ``evidence`` (the line or field that said so) and
    ``source_time`` (when its source last changed, for ingested evidence)."""
    stated = metadata.get("lifecycle")
    state = stated.get("state") if isinstance(stated, Mapping) else None
    evidence = stated.get("evidence") if isinstance(stated, Mapping) else None
    if state is None and superseded:
        state, evidence = "superseded", "front matter"
    source_time = metadata.get("source_time")
    return {
        "state": state,
        "evidence": evidence,
        "source_time": source_time if isinstance(source_time, str) else None,
    }


def filters_view(
    req: ReadRequest, perms: Mapping[str, Permission], selection: Selection
) -> dict[str, Any]:
    return {
        "repositories": {repo: perm.clearance.value for repo, perm in sorted(perms.items())},
        "selector": req.selector.kind,
        "selected_versions": selection.counts(),
        "as_of": iso(req.as_of),
        "valid_at": iso(req.valid_at),
        "include_evidence": req.include_evidence,
        "inside_search": ["repository x clearance", "selection allowlist"]
        + (["recorded_at <= as_of"] if req.as_of else []),
    }


def selector_used(req: ReadRequest, selection: Selection, now: datetime) -> dict[str, Any]:
    baselines = dict(sorted(selection.baselines.items()))
    out: dict[str, Any] = {
        "kind": req.selector.kind,
        "baseline_id": next(iter(baselines.values())) if len(baselines) == 1 else None,
        "as_of": iso(req.as_of),
        "valid_at": iso(req.valid_at),
        "resolved_at": iso(req.as_of or now),
    }
    if req.scope.repository_id is None and baselines:
        out["baselines"] = baselines
    return out


def candidate_trace(r: Recalled) -> dict[str, Any]:
    return {
        "version_id": r.version_id,
        "why": r.why,
        "chunk_score": round(r.chunk_score, 4),
        "version_score": round(r.version_score, 4),
        "best_chunk_key": r.hits[0].chunk_key if r.hits else None,
        "semantic_score": None if r.semantic_score is None else round(r.semantic_score, 4),
        "anchor_score": round(r.anchor_score, 4),
    }
