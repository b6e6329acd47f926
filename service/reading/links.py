"""Anchor fields for reads: built from a read's selection, kept while that selection is kept.

The links of a selection are the ``links_to`` relationships live at the read's ``as_of`` whose
source *and* target elements the selection holds; each contributes the anchor texts its link
has in the source's **selected** version (``ingest.links.anchor_text``). The selection is the
permission-trimmed, ``as_of``-resolved version set every other recall filters on, so an anchor
from a page the caller cannot read, or from a version not selected at its instant, is never
counted — nor is it part of the field's statistics (``projection.link_graph``). Re-ingest
keeps anchors in step by construction: a changed linking page is a new selected version with
its own text, a retired one is no longer selected, a removed link's relationship is retired.

Analysing anchor text is the costly part, so each linking version's analysed anchors are kept
per version id (a version's body never changes; an erased version contributes nothing); the
field itself is kept per selection object, which ``service.reading.selection_cache`` hands out again
while nothing a selection comes from has changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from ingest.links.types import LINK_TYPE, SUPERSEDED_BY_TYPE, SUPERSEDES_TYPE
from projection.keyword_index import KeywordIndex
from projection.link_graph import Anchor, LinkGraph
from projection.ranking import PathStep
from projection.selection import Selection, is_superseded
from service.core import UnitOfWork
from service.reading.views import Memo

KEPT_GRAPHS = 16
"""Link graphs kept (one per selected version set and instant; least recently used first out)."""
KEPT_VERSIONS = 50_000
"""Linking versions whose analysed anchor texts are kept."""

TYPES = (LINK_TYPE, SUPERSEDES_TYPE, SUPERSEDED_BY_TYPE)
"""The relationships a link graph is made of: links, and supersession either way stated."""
_Analysed = tuple[bool, Mapping[str, tuple[tuple[str, ...], ...]]]
"""(the linking version is current, link as written → analysed anchor texts)"""


class LinkGraphs:
    """The link graph of each selected version set and instant (thread-safe)."""

    def __init__(self) -> None:
        self._graphs = Memo(KEPT_GRAPHS)
        self._analysed = Memo(KEPT_VERSIONS)

    def graph(
        self,
        uow: UnitOfWork,
        index: KeywordIndex,
        selection: Selection,
        repositories: Iterable[str],
        at: datetime | None,
    ) -> LinkGraph:
        """The link graph of ``selection`` (links live at ``at`` in ``repositories``)."""
        key = (selection.version_ids(), None if at is None else at.timestamp())
        return self._graphs.get(key, lambda: self._build(uow, index, selection, repositories, at))

    def _build(
        self,
        uow: UnitOfWork,
        index: KeywordIndex,
        selection: Selection,
        repositories: Iterable[str],
        at: datetime | None,
    ) -> LinkGraph:
        links: list[tuple[str, str, str]] = []
        replaced_by: dict[str, tuple[str, PathStep]] = {}
        rows = uow.store.links_between(sorted(repositories), at, TYPES)
        for relationship_id, type_key, source, target, raw in rows:
            linking, linked = selection.version_of(source), selection.version_of(target)
            if linking is None or linked is None or linking is linked:
                continue
            if type_key == LINK_TYPE:
                links.append((linking.version_id, linked.version_id, raw))
                continue
            if type_key == SUPERSEDES_TYPE:  # the source replaces the target
                step = PathStep(relationship_id, type_key, target, source)
                replaced_by[linked.version_id] = (linking.version_id, step)
            else:  # SUPERSEDED_BY_TYPE: the source says the target replaces it
                step = PathStep(relationship_id, type_key, source, target)
                replaced_by[linking.version_id] = (linked.version_id, step)
        sources = sorted({source for source, _, _ in links})
        erased = uow.store.erased_among(sources)
        analysed = self._analyse(uow, index, [v for v in sources if v not in erased])
        graph = LinkGraph.build(
            Anchor(source, target, words, analysed[source][0])
            for source, target, raw in links
            if source in analysed
            for words in analysed[source][1].get(raw) or ((),)
        )
        graph.replaced_by = replaced_by
        return graph

    def _analyse(
        self, uow: UnitOfWork, index: KeywordIndex, version_ids: list[str]
    ) -> dict[str, _Analysed]:
        """Each linking version's analysed anchors (kept; bodies read only for new ones)."""
        from ingest.links.anchor_text import anchor_texts  # the Markdown reader: only when linked

        out: dict[str, _Analysed] = {}
        missing = []
        for version_id in version_ids:
            found = self._analysed.peek(version_id)
            if found is None:
                missing.append(version_id)
            else:
                out[version_id] = found
        for version_id, row in uow.store.version_rows(missing).items():
            texts = anchor_texts(str(row["body"]))
            made: _Analysed = (
                not is_superseded(row["metadata"] or {}),
                {
                    raw: tuple(tuple(index.words(text)) for text in found)
                    for raw, found in texts.items()
                },
            )
            out[version_id] = made
            self._analysed.put(version_id, made)
        return out
