"""The transparent ranking of read_context: a weighted sum anyone can recompute.

``score = relevance + trust + recency - graph distance - superseded - retired - duplicate``,
each term a value in [0, 1] (hops for graph distance) times a configurable weight.

- *relevance* combines the two BM25 signals of the keyword index per version — the best chunk
  (sections: sharper) and the whole version (recall for multi-part answers) — each divided by
  its best value among the candidates, mixed by ``chunk_share``. A version named in the request
  is fully relevant; one reached over a relationship inherits ``expansion_decay ** hops`` of its
  seed's relevance unless it matched better on its own.
- With semantic recall (the ``semantic`` extra), *relevance* fuses that keyword relevance with
  the version's best-chunk cosine similarity to the question: ``(1 - semantic) * keyword +
  semantic * similarity``, the similarity rescaled to [0, 1] between ``semantic_floor`` and the
  best among the candidates. A version without vectors yet keeps its keyword relevance alone;
  the breakdown's relevance term shows both parts.
- *trust* is the relevance again for canonical content and 0 for ingested evidence: canonical
  content scores ``relevance * (1 + trust weight)``, so with the default weight it outranks any
  evidence it matches at least half as well as, while a canonical page that merely shares a
  common word with the query does not jump over evidence that answers it.
- *recency* halves every ``recency_half_life_days`` of age, counted back from the freshest
  candidate (:func:`recency_anchor`), not from the read's instant: it says which of the
  candidates changed more recently, and a backlog nobody touched for a year does not see every
  page's recency fall to nothing alike. A question about the current state weighs it more
  (``recency_current``, halving every ``recency_current_half_life_days``): of two pages that
  answer it, the one changed lately is likelier to say what holds now.
- *superseded* is the relevance again for superseded content: it scores
  ``relevance * (1 - superseded weight)`` — with the default, half — so it falls below its
  replacement whenever that matches at least half as well, yet stays above content that hardly
  matches (demoted, not buried). The demotion depends on what the question asks
  (:meth:`RankingWeights.for_query`): a question about the *current* state ("what is the
  current…", "should we still use…", "latest", "today") uses the stronger
  ``superseded_current`` weight, because a replaced page is then the wrong answer; any other
  question keeps the gentle one, because a superseded page often still holds the fullest
  rationale or definition.
- *retired*, *graph distance* and *duplicate* (similarity to the item it copies, below the
  collapse threshold) demote by a fixed amount.
- A collapsed group of mirrors is one answer: its representative is ranked with the best
  relevance among its members (:func:`represent`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace

from projection.selection import CANONICAL

WHY_KEYWORD = "keyword_match"
WHY_RELATIONSHIP = "relationship_path"
WHY_DIRECT = "direct_fetch"
WHY_SEMANTIC = "semantic_match"
_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class RankingWeights:
    """Weights of the score (from the config file's ``ranking`` object; these are defaults)."""

    relevance: float = 1.0
    chunk_share: float = 0.7
    # Canonical content scores relevance * (1 + trust): with 1.1 it outranks evidence it matches
    # at least ~half as well (docs/product.md §4 trust ranking).
    trust: float = 1.1
    recency: float = 0.05
    recency_half_life_days: float = 365.0
    # questions about the current state (see for_query): recency counts more, and fades faster
    recency_current: float = 0.3
    recency_current_half_life_days: float = 90.0
    graph_distance: float = 0.15
    # Superseded content counts (1 - superseded) of its relevance: half by default, and
    # (1 - superseded_current) when the question asks for the current state (see for_query).
    superseded: float = 0.5
    superseded_current: float = 0.85
    retired: float = 0.4
    duplicate: float = 0.5
    expansion_decay: float = 0.5
    # Share of relevance from semantic similarity, for versions that have vectors; cosine at or
    # below semantic_floor counts 0 (loosely related text still scores ~0.2-0.3 with MiniLM).
    semantic: float = 0.6
    semantic_floor: float = 0.3
    # The link graph (projection.link_graph), measured on the real-corpus dev set and off by
    # default: every setting stayed within noise of the pipeline without it (docs/eval.md,
    # "Anchor text and the link graph").
    # anchor: how much the anchor field (what readable, selected pages' links say about a
    # version) adds to keyword relevance: kw + anchor * (anchor score / best) * (1 - kw).
    anchor: float = 0.0
    # in_links: in-links from current pages, log-scaled against the best-linked candidate, a
    # weak authority prior added to the score.
    in_links: float = 0.0
    # replacement: 1 = a read that recalls a replaced page also considers the head of its
    # supersession chain, which inherits expansion_decay of its relevance; 0 = it does not.
    replacement: float = 0.0

    @classmethod
    def from_mapping(cls, values: Mapping[str, object] | None) -> RankingWeights:
        """Weights from a config mapping; unknown names and bad values raise ``ValueError``."""
        if not values:
            return cls()
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown ranking weight(s) {unknown}; known: {sorted(known)}")
        parsed: dict[str, float] = {}
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"ranking weight {name} must be a number")
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"ranking weight {name} must be a finite number >= 0")
            parsed[name] = float(value)
        weights = replace(cls(), **parsed)
        bounded = (
            weights.chunk_share,
            weights.expansion_decay,
            weights.superseded,
            weights.superseded_current,
            weights.semantic,
            weights.semantic_floor,
            weights.anchor,
        )
        if max(bounded) > 1:
            raise ValueError(
                "chunk_share, expansion_decay, superseded, superseded_current, semantic, "
                "semantic_floor and anchor must be within [0, 1]"
            )
        if weights.recency_half_life_days <= 0 or weights.recency_current_half_life_days <= 0:
            raise ValueError(
                "recency_half_life_days and recency_current_half_life_days must be positive"
            )
        return weights

    def for_query(self, query: str | None) -> RankingWeights:
        """The weights for one question: when it asks for the current state
        (:func:`asks_for_current`), ``superseded_current`` replaces ``superseded`` and
        ``recency_current`` (with its half-life) replaces ``recency``."""
        if query and asks_for_current(query):
            return replace(
                self,
                superseded=self.superseded_current,
                recency=self.recency_current,
                recency_half_life_days=self.recency_current_half_life_days,
            )
        return self

    def uses_links(self) -> bool:
        """Whether a read needs its selection's link graph (``projection.link_graph``)."""
        return self.anchor > 0 or self.in_links > 0 or self.replacement > 0

    def as_dict(self) -> dict[str, float]:
        """The weights by name."""
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}


_CURRENT_WORDS = frozenset(
    {
        "now", "today", "current", "currently", "latest", "newest", "still", "nowadays",
        "recommended", "authoritative", "canonical", "supported", "active", "replaced",
        "replacement", "instead", "deprecated", "superseded", "obsolete", "valid",
    }
)  # fmt: skip
_CURRENT_PHRASES = (
    "up to date", "up-to-date", "these days", "in use", "in force", "should i use",
    "should we use", "should i follow", "should we follow", "which version", "what replaced",
)  # fmt: skip


def asks_for_current(query: str) -> bool:
    """Whether a question asks for the current state of something (a general rule on its
    words, never on a particular topic): time words (now, today, currently, latest, still),
    validity words (current, active, supported, authoritative, deprecated, replaced) or
    phrases such as "should we use", "up to date", "in use"."""
    text = " ".join(query.lower().replace("?", " ").split())
    words = set(text.replace(",", " ").replace(".", " ").split())
    return bool(words & _CURRENT_WORDS) or any(p in text for p in _CURRENT_PHRASES)


@dataclass(frozen=True, slots=True)
class PathStep:
    """One relationship crossed by expansion."""

    relationship_id: str
    type_key: str
    from_element_id: str
    to_element_id: str

    def as_dict(self) -> dict[str, str]:
        """The JSON shape of a step of ``relationship_path``."""
        return {
            "relationship_id": self.relationship_id,
            "type_key": self.type_key,
            "from_element_id": self.from_element_id,
            "to_element_id": self.to_element_id,
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A version that may become an item, with everything its score depends on."""

    version_id: str
    element_id: str
    repository_key: str
    source_kind: str
    recorded_at: float
    why_included: str
    chunk_score: float = 0.0
    version_score: float = 0.0
    superseded: bool = False
    retired: bool = False
    hops: int = 0
    path: tuple[PathStep, ...] = ()
    seed_element_id: str | None = None
    """For an expanded candidate: the recalled element its path starts from."""
    semantic_score: float | None = None
    """Best-chunk cosine similarity to the question; ``None``: no vectors (or no extra)."""
    anchor_score: float = 0.0
    """BM25 of the question over the version's anchor field (``projection.link_graph``)."""
    in_links: int = 0
    """Distinct current versions of the selection linking to this one."""


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate with its score and the breakdown that sums to it."""

    candidate: Candidate
    score: float
    breakdown: Mapping[str, Mapping[str, float]]

    def with_duplicate(self, similarity: float, weight: float) -> Scored:
        """The same item demoted for resembling a better one."""
        term = _term(similarity, -weight)
        breakdown = {**self.breakdown, "duplicate": term}
        return Scored(self.candidate, _total(breakdown), breakdown)


def relevance(candidates: Sequence[Candidate], weights: RankingWeights) -> dict[str, float]:
    """Relevance in [0, 1] per version id (see the module docstring)."""
    return {v: parts[0] for v, parts in relevance_parts(candidates, weights).items()}


def relevance_parts(
    candidates: Sequence[Candidate], weights: RankingWeights
) -> dict[str, tuple[float, float, float | None]]:
    """Per version id: (relevance, its keyword part, its semantic part or ``None``)."""
    best_chunk = max((c.chunk_score for c in candidates), default=0.0)
    best_version = max((c.version_score for c in candidates), default=0.0)
    best_anchor = max((c.anchor_score for c in candidates), default=0.0)
    mix = weights.anchor if best_anchor > 0 else 0.0
    floor = weights.semantic_floor
    best_semantic = max(
        (c.semantic_score for c in candidates if c.semantic_score is not None), default=floor
    )
    share = weights.chunk_share
    out: dict[str, tuple[float, float, float | None]] = {}
    for c in candidates:
        if c.why_included == WHY_DIRECT:
            out[c.version_id] = (1.0, 1.0, None)
            continue
        chunk = c.chunk_score / best_chunk if best_chunk > 0 else 0.0
        whole = c.version_score / best_version if best_version > 0 else 0.0
        keyword = share * chunk + (1 - share) * whole
        if mix:  # anchors only add: what the page's own text matched is never diluted
            keyword += mix * (c.anchor_score / best_anchor) * (1 - keyword)
        if c.semantic_score is None or weights.semantic <= 0:
            out[c.version_id] = (keyword, keyword, None)
            continue
        span = best_semantic - floor
        similar = max(0.0, c.semantic_score - floor) / span if span > 0 else 0.0
        fused = (1 - weights.semantic) * keyword + weights.semantic * similar
        out[c.version_id] = (fused, keyword, similar)
    seeds = {c.element_id: out[c.version_id][0] for c in candidates if not c.hops}
    for c in candidates:
        if c.hops and c.seed_element_id in seeds:
            inherited = weights.expansion_decay**c.hops * seeds[c.seed_element_id]
            if inherited > out[c.version_id][0]:
                out[c.version_id] = (inherited, *out[c.version_id][1:])
    return out


def recency_anchor(candidates: Sequence[Candidate], now: float) -> float:
    """The instant recency counts back from: the freshest candidate's time (never after
    ``now``, the read's instant), or ``now`` when there are none."""
    return min(now, max((c.recorded_at for c in candidates), default=now))


def score(candidates: Sequence[Candidate], weights: RankingWeights, now: float) -> list[Scored]:
    """Score every candidate; best first, ties broken by element then version id. ``now`` is
    the instant ages count back from (:func:`recency_anchor`)."""
    parts = relevance_parts(candidates, weights)
    linked = math.log1p(max((c.in_links for c in candidates), default=0))
    return order(
        [
            _scored(c, parts[c.version_id][0], weights, now, parts[c.version_id], linked)
            for c in candidates
        ]
    )


def represent(item: Scored, group: Sequence[Scored], weights: RankingWeights, now: float) -> Scored:
    """``item`` as the representative of the mirrors collapsed into it: one answer, ranked by the
    best relevance among its members (its terms are recomputed from that relevance)."""
    best = max((m.breakdown["relevance"]["value"] for m in group), default=0.0)
    if best <= item.breakdown["relevance"]["value"]:
        return item
    linked = item.breakdown["in_links"]
    return _with_in_links(_scored(item.candidate, best, weights, now), linked)


def _scored(
    c: Candidate,
    relevant: float,
    weights: RankingWeights,
    now: float,
    parts: tuple[float, float, float | None] | None = None,
    linked: float = 0.0,
) -> Scored:
    """``c`` scored with relevance ``relevant``; ``linked``: log(1 + in-links) of the
    best-linked candidate (the in-links term's scale)."""
    age_days = max(0.0, now - c.recorded_at) / _DAY
    fused = _term(relevant, weights.relevance)
    if parts is not None and parts[2] is not None:  # show what the relevance was fused from
        fused = {**fused, "keyword": round(parts[1], 6), "semantic": round(parts[2], 6)}
    breakdown = {
        "relevance": fused,
        "trust": _term(relevant if c.source_kind == CANONICAL else 0.0, weights.trust),
        "recency": _term(0.5 ** (age_days / weights.recency_half_life_days), weights.recency),
        "graph_distance": _term(float(c.hops), -weights.graph_distance),
        "superseded": _term(relevant if c.superseded else 0.0, -weights.superseded),
        "retired": _term(1.0 if c.retired else 0.0, -weights.retired),
        "duplicate": _term(0.0, -weights.duplicate),
        "in_links": _term(math.log1p(c.in_links) / linked if linked > 0 else 0.0, weights.in_links),
    }
    return Scored(c, _total(breakdown), breakdown)


def _with_in_links(item: Scored, term: Mapping[str, float]) -> Scored:
    breakdown = {**item.breakdown, "in_links": term}
    return Scored(item.candidate, _total(breakdown), breakdown)


def order(scored: Sequence[Scored]) -> list[Scored]:
    """Best score first; equal scores by element id then version id (deterministic)."""
    return sorted(scored, key=lambda s: (-s.score, s.candidate.element_id, s.candidate.version_id))


def _term(value: float, weight: float) -> dict[str, float]:
    return {"value": round(value, 6), "weight": weight, "contribution": round(value * weight, 6)}


def _total(breakdown: Mapping[str, Mapping[str, float]]) -> float:
    return round(sum(term["contribution"] for term in breakdown.values()), 6)
