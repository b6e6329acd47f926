"""The read_context pipeline: select → recall → expand → rank → collapse → pack.

1. *Select*: resolve the caller's readable repositories and the selection (selector, evidence,
   ``as_of``, ``valid_at``) — ``service.reading.selection``.
2. *Recall* inside the selection by query (the keyword index, filtered while matching), by
   element ids or by version ids — ``service.reading.recall``.
3. *Expand* from the best recalled elements along relationships, if asked.
4. *Rank* with the transparent weighted score (``projection.ranking``), *collapse* mirrors
   into their representative (``projection.dedup``: the original, or the more trusted copy,
   ranked by the group's best relevance) and demote look-alike copies.
5. *Pack* into the budget with exact citations and the context block
   (``projection.packaging``).

When collapsing leaves fewer than ``max_items`` and the index has more matches, recall is
repeated with a larger window, so the budget fills from permitted content.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import Any

from domain.erasure import erased_note
from domain.errors import InvalidArgument
from projection.abbreviations import Definition, additions, definitions
from projection.dedup import Shingles, collapse, shingles
from projection.keyword_index import KeywordIndex
from projection.link_graph import LinkGraph
from projection.packaging import (
    ItemSource,
    Piece,
    choose_pieces,
    chunk_words,
    content_chunks,
    pack,
    query_terms,
    shown_text,
)
from projection.ranking import (
    Candidate,
    RankingWeights,
    Scored,
    order,
    recency_anchor,
    represent,
    score,
)
from projection.selection import CANONICAL, Selection, epoch_of, is_superseded
from service.authz import Caller, Permission, access_levels
from service.core import UnitOfWork
from service.indexing.semantic import SemanticRecall
from service.indexing.upkeep import IndexMaintainer
from service.kernel import Kernel
from service.reading.links import LinkGraphs
from service.reading.recall import (
    Recalled,
    Trace,
    expand,
    index_filter,
    recall_by_anchors,
    recall_by_ids,
    recall_by_meaning,
    recall_by_query,
    recall_heads,
)
from service.reading.request import ReadRequest
from service.reading.selection import readable_repositories, resolve_selection
from service.reading.selection_cache import SelectionCache
from service.reading.views import (
    Memo,
    Ranked,
    candidate_trace,
    filters_view,
    item_views,
    selector_used,
)
from service.views import iso

Words = dict[tuple[int, int], frozenset[str]]
MAX_WINDOW = 400
"""Largest number of versions one query recall ranks (the window grows up to it)."""
ABBREVIATION_SOURCES = 10
"""How many of a read's best candidates may define abbreviations that widen its question."""


class ReadPipeline:
    """The read_context pipeline (``read_context`` itself, storing and logging, is
    ``service.reading.context``'s)."""

    def __init__(
        self,
        k: Kernel,
        indexer: IndexMaintainer[KeywordIndex] | None,
        semantic: SemanticRecall | None,
        weights: RankingWeights | Mapping[str, object] | None = None,
        selections: SelectionCache | None = None,
    ) -> None:
        self.k = k
        self.indexer = indexer
        self.semantic = semantic  # semantic recall, when the extra is installed and enabled
        self.selections = selections  # selections kept between current reads (None: resolve each)
        self.memo = Memo()  # chunks and shingles per version, shared by this service's reads
        self.links = LinkGraphs()  # link graphs per selected version set and instant
        self.ranking_weights = RankingWeights()
        self.configure_ranking(weights)

    @property
    def index(self) -> KeywordIndex:
        """The keyword index (a derived projection kept by ``indexer``)."""
        if self.indexer is None:
            raise RuntimeError("this service was built without a keyword index")
        return self.indexer.index

    def _chunks(self, version_id: str, body: str) -> list[Piece]:
        key = ("chunks", version_id, len(body))  # an erased body is another key
        return self.memo.get(key, lambda: content_chunks(body))

    def _words(self, version_id: str, body: str, chunks: list[Piece]) -> Words:
        key = ("words", version_id, len(body))
        return self.memo.get(key, lambda: chunk_words(body, chunks))

    def _shingles(self, version_id: str, body: str) -> Shingles:
        key = ("shingles", version_id, len(body))
        return self.memo.get(key, lambda: shingles(body))

    def configure_ranking(self, weights: RankingWeights | Mapping[str, object] | None) -> None:
        """Set the score weights (e.g. the config file's ``ranking`` object)."""
        try:
            self.ranking_weights = (
                weights
                if isinstance(weights, RankingWeights)
                else RankingWeights.from_mapping(weights)
            )
        except ValueError as exc:
            raise InvalidArgument(f"ranking weights: {exc}", field="ranking") from None

    def catch_up_index(self) -> None:
        """Before a read: make the keyword index cover every write committed before the read
        began (read your writes). Cheap when the background upkeep already applied them; else
        joins the batch in progress or applies the rest itself (bounded: see
        ``IndexMaintainer.ensure_applied``)."""
        if self.indexer is not None:
            self.indexer.ensure_applied()

    def run_read(
        self, caller: Caller, req: ReadRequest, *, semantic: bool = True
    ) -> dict[str, Any]:
        """Everything of one read except storing it: the response without ``context_id``
        (``semantic=False``: keyword recall only, even with semantic recall installed — the
        eval harness compares both)."""
        now = self.k.clock.now()
        if req.as_of is not None and req.as_of > now:
            raise InvalidArgument(
                f"as_of {iso(req.as_of)} is in the future (now is {iso(now)})", field="as_of"
            )
        trace = Trace()
        with self.k.uow(readonly=True) as uow:
            perms = readable_repositories(self.k.gate, uow, caller, req.scope)
            if self.selections is not None:
                selection = self.selections.resolve(uow, perms, req, req.as_of)
            else:
                selection = resolve_selection(uow, perms, req, req.as_of)
            if req.explain:  # counting the selection's versions is O(selection) per read
                trace.filters = filters_view(req, perms, selection)
            if req.recall == "query":
                trace.query_rewrite = {
                    "original": req.query,
                    "terms": query_terms(str(req.query)),
                    "note": "user text is matched as plain words (English stemming); field "
                    "syntax, operators and wildcards are not interpreted",
                }
            ranked = self._rank_rounds(
                uow, req, perms, selection, trace, req.as_of or now, semantic
            )
        packed = pack(  # lazily: what the budget never reaches is never chunked or excerpted
            (ranked.sources[s.candidate.version_id] for s in ranked.scored),
            req.budget.max_items,
            req.budget.max_chars,
        )
        for s in ranked.scored[len(packed.items) :]:
            trace.drop(
                "budget", element_id=s.candidate.element_id, version_id=s.candidate.version_id
            )
        return {
            "scope": req.scope.model_dump(),
            "selector_used": selector_used(req, selection, now),
            "items": item_views(packed, ranked, req.explain),
            "context_block": packed.context_block,
            "truncated": packed.truncated,
            "trace": trace.as_dict() if req.explain else None,
        }

    def _rank_rounds(
        self,
        uow: UnitOfWork,
        req: ReadRequest,
        perms: Mapping[str, Permission],
        selection: Selection,
        trace: Trace,
        instant: datetime,
        semantic: bool = True,
    ) -> Ranked:
        """Recall, expand and rank, widening the query window until the budget can fill."""
        want = 2 * req.budget.max_items + 4
        flt = index_filter(perms, selection, req.as_of)
        words, widened = str(req.query), req.recall != "query"
        graph = (
            self.links.graph(uow, self.index, selection, perms, req.as_of)
            if req.recall == "query" and self.ranking_weights.uses_links()
            else LinkGraph()
        )
        while True:
            if req.recall == "query":
                recalled, exhausted = recall_by_query(self.index, words, flt, selection, want)
                if graph.lengths and self.ranking_weights.anchor > 0:
                    terms = self.index.query_words(words)
                    recalled = recall_by_anchors(graph, terms, want, recalled)
                if graph.replaced_by and self.ranking_weights.replacement > 0:
                    recalled = recall_heads(graph, selection, recalled)
                if self.semantic is not None and semantic:
                    recalled = recall_by_meaning(
                        self.semantic, str(req.query), selection, want, recalled, trace
                    )
            else:
                recalled, exhausted = recall_by_ids(req, selection, trace), True
            ranked = self._rank(uow, req, recalled, selection, instant, graph)
            if not widened:  # once: abbreviations the best candidates define (the module)
                widened, extra = True, self._abbreviations(words, ranked, trace)
                if extra:
                    words = f"{words} {extra}"
                    continue
            if req.expand.hops:
                seeds = [s.candidate.element_id for s in ranked.scored[: req.budget.max_items]]
                known = [s.candidate.element_id for s in ranked.scored]
                access = access_levels(perms)
                more = expand(uow, access, req.as_of, selection, seeds, known, req.expand, trace)
                ranked = self._rank(uow, req, recalled + more, selection, instant, graph)
            if len(ranked.scored) >= req.budget.max_items or exhausted or want >= MAX_WINDOW:
                break
            want = min(MAX_WINDOW, want * 3)
        trace.candidates = [candidate_trace(r) for r in recalled]
        for duplicate in ranked.duplicates:
            trace.drop("duplicate", **duplicate)
        return ranked

    def _abbreviations(self, query: str, ranked: Ranked, trace: Trace) -> str:
        """The words to add to the question for the abbreviations its best candidates define
        (``projection.abbreviations``), shown in the trace; ``""`` for none."""
        known: dict[str, tuple[Definition, str]] = {}
        for s in ranked.scored[:ABBREVIATION_SOURCES]:
            version_id = s.candidate.version_id
            body = _readable_body(ranked.rows[version_id])
            key = ("abbreviations", version_id, len(body))
            found: list[Definition] = self.memo.get(key, partial(definitions, body))
            for d in found:
                known.setdefault(d.short, (d, version_id))
        added = additions(query, (d for d, _ in known.values()))
        if added and trace.query_rewrite is not None:
            trace.query_rewrite["abbreviations"] = [
                {"short": d.short, "long": d.long, "added": words, "defined_in": known[d.short][1]}
                for d, words in added
            ]
        return " ".join(words for _, words in added)

    def _rank(
        self,
        uow: UnitOfWork,
        req: ReadRequest,
        recalled: list[Recalled],
        selection: Selection,
        instant: datetime,
        graph: LinkGraph,
    ) -> Ranked:
        """Score the recalled versions, choose what to show, collapse mirrors into their
        representative (ranked by its group's best relevance), demote look-alike copies;
        collapsed ones go to the trace."""
        rows = uow.store.version_rows([r.version_id for r in recalled])
        found = [r for r in recalled if r.version_id in rows]
        candidates = [_candidate(r, rows[r.version_id], selection, graph) for r in found]
        weights = self.ranking_weights.for_query(req.query)
        now = recency_anchor(candidates, instant.timestamp())
        scored = score(candidates, weights, now)
        terms = query_terms(req.query or "")
        by_id = {r.version_id: r for r in found}
        sources = _Sources(lambda v: self._source(by_id[v], rows[v], req, terms))
        kept, collapsed = collapse(
            scored,
            lambda s: shown_text(
                sources[s.candidate.version_id].body, sources[s.candidate.version_id].pieces
            ),
            lambda s: self._shingles(s.candidate.version_id, sources[s.candidate.version_id].body),
            limit=req.budget.max_items + 4,  # demoted look-alikes may fall behind a few
            standing=_standing,
        )
        duplicates = [
            {
                "element_id": c.item.candidate.element_id,
                "version_id": c.item.candidate.version_id,
                "duplicate_of": c.duplicate_of.candidate.version_id,
                "similarity": c.similarity,
            }
            for c in collapsed
        ]
        groups: dict[str, list[Scored]] = {}
        for c in collapsed:
            groups.setdefault(c.duplicate_of.candidate.version_id, []).append(c.item)
        demoted = []
        for k in kept:
            item = represent(k.item, groups.get(k.item.candidate.version_id, ()), weights, now)
            demoted.append(
                item.with_duplicate(k.similarity, weights.duplicate) if k.similarity else item
            )
        return Ranked(order(demoted), sources, rows, duplicates)

    def _source(
        self, r: Recalled, row: Mapping[str, Any], req: ReadRequest, terms: list[str]
    ) -> ItemSource:
        """What of a version to show; an erased version shows a note instead."""
        erased = row["erased_at"] is not None
        body = _readable_body(row)
        hit_only = req.detail_level == "excerpt" and r.hits
        chunks = None if erased or hit_only else self._chunks(r.version_id, body)
        words = None if chunks is None else lambda: self._words(r.version_id, body, chunks)
        pieces = (
            () if erased else choose_pieces(body, req.detail_level, r.hits, terms, chunks, words)
        )
        note = erased_note(row["erased_at"]) if erased else None
        return ItemSource(
            repository_key=row["repo_key"],
            element_id=row["element_id"],
            version_id=r.version_id,
            title=row["title"],
            source_kind=row["source_kind"],
            body=body,
            pieces=tuple(pieces),
            note=note,
        )


class _Sources(dict[str, ItemSource]):
    """What to show of each candidate, made when first asked for: only the items duplicate
    collapse compares and the budget can reach are chunked and excerpted (at a million chunks
    that work for every candidate was a fifth of a read)."""

    def __init__(self, make: Callable[[str], ItemSource]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, version_id: str) -> ItemSource:
        made = self[version_id] = self._make(version_id)
        return made


def _readable_body(row: Mapping[str, Any]) -> str:
    """A version's body, or ``""`` once it is erased."""
    return "" if row["erased_at"] is not None else str(row["body"])


def _standing(s: Scored) -> float:
    """Which of two mirrors represents them: canonical over evidence, current over superseded
    or retired (at equal standing the original, see ``projection.dedup``)."""
    c = s.candidate
    return (2.0 if c.source_kind == CANONICAL else 0.0) - (
        1.0 if c.superseded or c.retired else 0.0
    )


def _candidate(
    r: Recalled, row: Mapping[str, Any], selection: Selection, graph: LinkGraph
) -> Candidate:
    selected = selection.versions[r.version_id]
    return Candidate(
        version_id=r.version_id,
        element_id=row["element_id"],
        repository_key=row["repo_key"],
        source_kind=row["source_kind"],
        # recency counts from when the source last changed (ingest's source_time), else from
        # when memory recorded the version; as_of stays system time either way
        recorded_at=epoch_of((row["metadata"] or {}).get("source_time"))
        or row["recorded_at"].timestamp(),
        why_included=r.why,
        chunk_score=r.chunk_score,
        version_score=r.version_score,
        superseded=is_superseded(row["metadata"] or {}),
        retired=selected.retired,
        hops=r.hops,
        path=r.path,
        seed_element_id=r.seed,
        semantic_score=r.semantic_score,
        anchor_score=r.anchor_score,
        in_links=graph.in_links.get(r.version_id, 0),
    )
