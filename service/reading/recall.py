"""Recall: from a query, from ids, and along relationships — always inside the selection.

The keyword search gets the permission filter (readable repositories × clearance) and the
selection as a version allowlist, so the index itself only ever matches readable, selected
versions and its ``limit`` fills from them. Id recall and expansion look versions up in the
same selection, and expansion only follows relationships whose far end is readable (the SQL
trims the rest), so nothing unreadable is ever reached, counted or named in a trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from projection.keyword_index import IndexFilter, KeywordIndex, combine_signals
from projection.link_graph import LinkGraph
from projection.packaging import Piece
from projection.ranking import (
    WHY_DIRECT,
    WHY_KEYWORD,
    WHY_RELATIONSHIP,
    WHY_SEMANTIC,
    PathStep,
)
from projection.selection import Selection
from service.authz import Permission
from service.core import UnitOfWork
from service.indexing.semantic import SemanticRecall
from service.reading.request import Expand, ReadRequest

PER_VERSION = 2
"""Best chunks fetched per version: the best ranks it, both may be shown."""
MAX_TRACE_ENTRIES = 100


@dataclass
class Recalled:
    """A version recall found, and how."""

    version_id: str
    why: str
    chunk_score: float = 0.0
    version_score: float = 0.0
    hits: tuple[Piece, ...] = ()
    hops: int = 0
    path: tuple[PathStep, ...] = ()
    seed: str | None = None
    semantic_score: float | None = None  # best-chunk cosine; None: no vectors for this version
    anchor_score: float = 0.0  # BM25 over the version's anchor field (projection.link_graph)


@dataclass
class Trace:
    """What happened during one read (returned with ``explain``)."""

    query_rewrite: dict[str, Any] | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    expansions: list[dict[str, Any]] = field(default_factory=list)
    drops: list[dict[str, Any]] = field(default_factory=list)
    semantic: dict[str, Any] | None = None

    def drop(self, reason: str, **what: Any) -> None:
        """Record a candidate left out (bounded, so a trace never balloons)."""
        if len(self.drops) < MAX_TRACE_ENTRIES:
            self.drops.append({**what, "reason": reason})

    def as_dict(self) -> dict[str, Any]:
        """The trace as JSON."""
        return {
            "query_rewrite": self.query_rewrite,
            "filters": self.filters,
            "candidates": self.candidates[:MAX_TRACE_ENTRIES],
            "expansions": self.expansions[:MAX_TRACE_ENTRIES],
            "drops": self.drops,
            "semantic": self.semantic,
        }


def index_filter(
    perms: Mapping[str, Permission], selection: Selection, as_of: datetime | None
) -> IndexFilter:
    """The filter the keyword search applies while matching."""
    return IndexFilter(
        max_rank_by_repository={repo: perm.read_rank for repo, perm in perms.items()},
        version_ids=selection.version_ids(),
        as_of=as_of.timestamp() if as_of is not None else None,
    )


def recall_by_query(
    index: KeywordIndex, query: str, flt: IndexFilter, selection: Selection, want: int
) -> tuple[list[Recalled], bool]:
    """The versions among the best ``want`` chunks (at most ``PER_VERSION`` each) and the best
    ``want`` whole versions, by both BM25 signals; and whether the index has no more."""
    chunk_hits, version_hits = index.search_both(query, flt, want, PER_VERSION)
    exhausted = len(chunk_hits) < want and len(version_hits) < want
    found = []
    for signal in combine_signals(chunk_hits, version_hits)[:want]:
        if signal.version_id not in selection.versions:  # only a lagging index could do this
            continue
        pieces = tuple(Piece(h.chunk_key, h.heading_path, h.start, h.end) for h in signal.chunks)
        found.append(
            Recalled(
                signal.version_id,
                WHY_KEYWORD,
                chunk_score=signal.chunk_score,
                version_score=signal.version_score,
                hits=pieces,
            )
        )
    return found, exhausted


def recall_by_meaning(
    semantic: SemanticRecall,
    query: str,
    selection: Selection,
    want: int,
    recalled: list[Recalled],
    trace: Trace,
) -> list[Recalled]:
    """Add semantic recall to ``recalled``: the ``want`` versions of the selection nearest in
    meaning join the candidates, and every candidate with vectors gets its similarity (the
    selection is the permission-trimmed set, so nothing unreadable is scored, let alone fused).
    """
    hits, similarity = semantic.search(query, selection.versions.keys(), limit=want)
    trace.semantic = {
        "model": semantic.model,
        "selected_versions": len(selection.versions),
        "embedded_versions": len(similarity),
        "note": "relevance fuses keyword and semantic similarity for versions with vectors; "
        "versions not embedded yet (semantic_score null) are ranked by keywords alone",
    }
    found = {r.version_id for r in recalled}
    out = [replace(r, semantic_score=similarity.get(r.version_id)) for r in recalled]
    for hit in hits:
        if hit.version_id not in found:
            piece = Piece(hit.chunk_key, hit.heading_path, hit.start, hit.end)
            out.append(
                Recalled(hit.version_id, WHY_SEMANTIC, hits=(piece,), semantic_score=hit.score)
            )
    return out


def recall_by_anchors(
    field: LinkGraph, terms: list[str], want: int, recalled: list[Recalled]
) -> list[Recalled]:
    """Add anchor recall to ``recalled``: every candidate gets its anchor-field score, and the
    ``want`` versions whose anchor text matches best join as keyword matches (the anchor text
    is a field of the version; the field holds only anchors from the read's selection)."""
    scores = field.search(terms)
    found = {r.version_id for r in recalled}
    out = [replace(r, anchor_score=scores.get(r.version_id, 0.0)) for r in recalled]
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:want]
    out += [
        Recalled(version_id, WHY_KEYWORD, anchor_score=score)
        for version_id, score in best
        if version_id not in found
    ]
    return out


def recall_heads(
    graph: LinkGraph, selection: Selection, recalled: list[Recalled]
) -> list[Recalled]:
    """Add to ``recalled`` the head of each recalled version's supersession chain (what
    replaces it now, ``projection.link_graph``), reached over the ``SUPERSEDES``
    relationships in one step however long the chain: a question that matches a replaced page
    asks about what replaced it too. The head inherits the replaced page's relevance like an
    expanded neighbour (``expansion_decay``)."""
    have = {r.version_id for r in recalled}
    out = list(recalled)
    for r in recalled:
        found = graph.head(r.version_id) if not r.hops else None
        if found is None or found[0] in have:
            continue
        head, path = found
        have.add(head)
        seed = selection.versions[r.version_id].element_id
        out.append(Recalled(head, WHY_RELATIONSHIP, hops=1, path=path, seed=seed))
    return out


def recall_by_ids(req: ReadRequest, selection: Selection, trace: Trace) -> list[Recalled]:
    """Direct fetch of the named elements (their selected version) or versions.

    A name outside the selection — missing, unreadable, not selected, recorded later than
    ``as_of`` — is dropped with the one reason ``not_in_selection``, so the answer never tells
    which of those it was.
    """
    found: list[Recalled] = []
    seen: set[str] = set()
    if req.element_ids:
        for element_id in req.element_ids:
            version = selection.version_of(element_id)
            if version is None:
                trace.drop("not_in_selection", element_id=element_id)
            elif version.version_id not in seen:
                seen.add(version.version_id)
                found.append(Recalled(version.version_id, WHY_DIRECT))
        return found
    for version_id in req.wanted_version_ids:
        if version_id not in selection.versions:
            trace.drop("not_in_selection", version_id=version_id)
        elif version_id not in seen:
            seen.add(version_id)
            found.append(Recalled(version_id, WHY_DIRECT))
    return found


def expand(
    uow: UnitOfWork,
    access: Mapping[str, Sequence[str]],
    at: datetime | None,
    selection: Selection,
    seeds: Sequence[str],
    known: Sequence[str],
    settings: Expand,
    trace: Trace,
) -> list[Recalled]:
    """Breadth-first from ``seeds`` (best-ranked first) along relationships live at ``at``, up
    to ``hops`` and ``max_nodes`` new elements (``known`` ones are not added again); a
    neighbour joins with its selected version and the path that reached it. The neighbours of
    a better-ranked element come first, so ``max_nodes`` keeps those (the store orders each
    element's relationships by when they were recorded)."""
    paths: dict[str, tuple[PathStep, ...]] = dict.fromkeys((*known, *seeds), ())
    origin = {seed: seed for seed in seeds}
    frontier, added = list(seeds), list[Recalled]()
    for hop in range(1, settings.hops + 1):
        if not frontier:
            break
        rows = uow.store.neighbours(frontier, access, at, settings.relationship_types)
        rank = {element_id: n for n, element_id in enumerate(frontier)}
        rows.sort(key=lambda row: rank[row["from"]])  # stable: each element's order is kept
        frontier = []
        for row in rows:
            near, far = row["from"], row["to"]
            if far in paths:
                continue
            paths[far] = (*paths[near], _step(row))
            origin[far] = origin[near]
            version = selection.version_of(far)
            if version is None:
                trace.drop("not_in_selection", element_id=far, via=row["relationship_id"])
                continue
            if len(added) >= settings.max_nodes:
                trace.drop("max_nodes", element_id=far, version_id=version.version_id)
                continue
            added.append(
                Recalled(
                    version.version_id,
                    WHY_RELATIONSHIP,
                    hops=hop,
                    path=paths[far],
                    seed=origin[far],
                )
            )
            frontier.append(far)
            trace.expansions.append(
                {
                    "element_id": far,
                    "version_id": version.version_id,
                    "hops": hop,
                    "from_element_id": near,
                    "relationship_id": row["relationship_id"],
                    "type_key": row["type_key"],
                }
            )
    return added


def _step(row: Mapping[str, Any]) -> PathStep:
    return PathStep(row["relationship_id"], row["type_key"], row["from"], row["to"])
