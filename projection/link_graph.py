"""The link graph of a read's selection: anchor text, in-links and supersession chains.

**The anchor field** describes each version by the words other pages use to link to it. A read
builds one :class:`LinkGraph` from the links among the versions of its selection
(``service.reading.links``): a linking version is in the selection only when the caller may read
it and it is selected at the read's ``as_of``, so an anchor from a page the caller cannot read,
or from a version that is not the one selected, never counts — and the field's statistics
(document count, document frequencies, average length) are computed from the counted anchors
alone, so no score depends on text the caller cannot read.

Each target version's anchor texts (the link text and its sentence, from every linking version)
form one document, scored with BM25 like the index's own fields (``k1`` 1.2, ``b`` 0.75; idf
``log(N / (df + 1)) + 1``, the Whoosh engine's). :meth:`LinkGraph.search` gives the best
target versions for a question's terms, and the ranking mixes the score, divided by the best
among a read's candidates, into keyword relevance (``projection.ranking``: ``anchor``).

The graph also counts each version's *in-links from current pages*: distinct linking versions
that are not superseded — a weak authority prior (``projection.ranking``: ``in_links``) — and
knows which selected version replaces which (``SUPERSEDES`` relationships, either direction as
stated), so a read that matches a replaced page also considers the head of its chain
(:meth:`LinkGraph.head`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from projection.ranking import PathStep

K1 = 1.2
B = 0.75


@dataclass(frozen=True, slots=True)
class Anchor:
    """One link occurrence, analysed: from ``source`` to ``target`` (version ids)."""

    source: str
    target: str
    words: tuple[str, ...]
    current: bool = True
    """Whether the linking version is current (not superseded): only those count as in-links."""


@dataclass
class LinkGraph:
    """BM25 over anchor text per target version, and in-link counts (see the module)."""

    postings: dict[str, dict[str, int]] = field(default_factory=dict)
    """Term → target version id → occurrences in its anchor text."""
    lengths: dict[str, int] = field(default_factory=dict)
    """Target version id → terms in its anchor text."""
    in_links: dict[str, int] = field(default_factory=dict)
    """Target version id → distinct current versions linking to it."""
    replaced_by: dict[str, tuple[str, PathStep]] = field(default_factory=dict)
    """Version id → (the version replacing it, the relationship that says so)."""

    def head(self, version_id: str) -> tuple[str, tuple[PathStep, ...]] | None:
        """The last version of ``version_id``'s supersession chain and the relationships on
        the way; ``None`` when nothing replaces it (a cycle stops where it closes)."""
        seen, steps, at = {version_id}, list[PathStep](), version_id
        while (step := self.replaced_by.get(at)) is not None and step[0] not in seen:
            at = step[0]
            seen.add(at)
            steps.append(step[1])
        return (at, tuple(steps)) if steps else None

    @classmethod
    def build(cls, anchors: Iterable[Anchor]) -> LinkGraph:
        """The field of ``anchors`` (a link repeated within one linking version counts as
        often as it is written, up to the extraction's cap)."""
        out = cls()
        sources: dict[str, set[str]] = {}
        for anchor in anchors:
            if anchor.current:
                sources.setdefault(anchor.target, set()).add(anchor.source)
            if not anchor.words:
                continue
            out.lengths[anchor.target] = out.lengths.get(anchor.target, 0) + len(anchor.words)
            for word in anchor.words:
                counts = out.postings.setdefault(word, {})
                counts[anchor.target] = counts.get(anchor.target, 0) + 1
        out.in_links = {target: len(found) for target, found in sources.items()}
        return out

    def search(self, terms: Sequence[str], limit: int | None = None) -> dict[str, float]:
        """Target version id → BM25 score for ``terms`` (distinct query terms), the best
        ``limit`` (all with ``None``); versions matching no term are absent."""
        n = len(self.lengths)
        if not n:
            return {}
        average = sum(self.lengths.values()) / n
        scores: dict[str, float] = {}
        for term in dict.fromkeys(terms):
            postings = self.postings.get(term)
            if not postings:
                continue
            idf = math.log(n / (len(postings) + 1)) + 1
            for target, tf in postings.items():
                norm = K1 * (1 - B + B * self.lengths[target] / average)
                scores[target] = scores.get(target, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
        if limit is None or len(scores) <= limit:
            return scores
        return dict(heapq.nlargest(limit, scores.items(), key=lambda item: (item[1], item[0])))
