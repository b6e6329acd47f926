"""The anchor field: each version described by the words other pages use to link to it.

A read builds one :class:`AnchorField` from the links among the versions of its selection
(``service.read_anchors``): a linking version is in the selection only when the caller may read
it and it is selected at the read's ``as_of``, so an anchor from a page the caller cannot read,
or from a version that is not the one selected, never counts — and the field's statistics
(document count, document frequencies, average length) are computed from the counted anchors
alone, so no score depends on text the caller cannot read.

Each target version's anchor texts (the link text and its sentence, from every linking version)
form one document, scored with BM25 like the index's own fields (``k1`` 1.2, ``b`` 0.75; idf
``log(N / (df + 1)) + 1``, the Whoosh engine's). :meth:`AnchorField.search` gives the best
target versions for a question's terms, and the ranking mixes the score, divided by the best
among a read's candidates, into keyword relevance (``projection.ranking``: ``anchor``).

The field also counts each version's *in-links from current pages*: distinct linking versions
that are not superseded — a weak authority prior (``projection.ranking``: ``in_links``).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

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
class AnchorField:
    """BM25 over anchor text per target version, and in-link counts (see the module)."""

    postings: dict[str, dict[str, int]] = field(default_factory=dict)
    """Term → target version id → occurrences in its anchor text."""
    lengths: dict[str, int] = field(default_factory=dict)
    """Target version id → terms in its anchor text."""
    in_links: dict[str, int] = field(default_factory=dict)
    """Target version id → distinct current versions linking to it."""
    anchors: int = 0

    @classmethod
    def build(cls, anchors: Iterable[Anchor]) -> AnchorField:
        """The field of ``anchors`` (a link repeated within one linking version counts as
        often as it is written, up to the extraction's cap)."""
        out = cls()
        sources: dict[str, set[str]] = {}
        for anchor in anchors:
            out.anchors += 1
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
