"""Near-duplicate detection: mirrors of one text are collapsed, look-alikes demoted.

Backlogs copy sections around (a quick reference that repeats a runbook's "Rolling back"
section word for word). Showing both copies wastes the budget, so an item whose shown text is
mostly *contained* in the body of a better-ranked item is collapsed into it. Containment (not
Jaccard) because the copy is usually a part of the original: ``|A ∩ B| / |A|`` over word
shingles of the shown text ``A`` and the better item's whole body ``B``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

SHINGLE_WORDS = 4
COLLAPSE_AT = 0.8
"""Containment at or above which an item is collapsed into the better one."""
DEMOTE_AT = 0.5
"""Containment at or above which (below ``COLLAPSE_AT``) an item is demoted by its similarity."""

_WORD = re.compile(r"[0-9a-z]+")
_T = TypeVar("_T")


Shingles = frozenset[int]


def shingles(text: str, size: int = SHINGLE_WORDS) -> Shingles:
    """Hashes of the overlapping ``size``-word sequences of the lower-cased words (one for
    shorter texts). Hashes are only compared within one process."""
    words = _WORD.findall(text.lower())
    if len(words) <= size:
        return frozenset([hash(tuple(words))]) if words else frozenset()
    return frozenset(map(hash, zip(*(words[i:] for i in range(size)), strict=False)))


def containment(part: Shingles, whole: Shingles) -> float:
    """Share of ``part``'s shingles found in ``whole`` (0 when ``part`` is empty)."""
    if not part:
        return 0.0
    return len(part & whole) / len(part)


@dataclass(frozen=True, slots=True)
class Collapsed(Generic[_T]):
    """An item left out because a better one already holds its text."""

    item: _T
    duplicate_of: _T
    similarity: float


@dataclass(frozen=True, slots=True)
class Kept(Generic[_T]):
    """An item kept, with its highest similarity to a better kept item."""

    item: _T
    similarity: float
    similar_to: _T | None


def collapse(
    ordered: Sequence[_T],
    shown: Callable[[_T], str],
    body: Callable[[_T], Shingles],
    limit: int | None = None,
) -> tuple[list[Kept[_T]], list[Collapsed[_T]]]:
    """Walk ``ordered`` best first; collapse items whose shown text a kept item's body holds
    (``body`` gives the shingles of an item's body, so callers can cache them).

    Returns the kept items (in order, each with its similarity to the most similar better kept
    item, so the ranking can demote look-alikes) and the collapsed ones. Once ``limit`` items
    are kept the rest are kept unchecked: a budget of ``limit`` items never reaches them.
    """
    kept: list[Kept[_T]] = []
    bodies: list[Shingles] = []
    collapsed: list[Collapsed[_T]] = []
    for position, item in enumerate(ordered):
        if limit is not None and len(kept) >= limit:
            kept += [Kept(rest, 0.0, None) for rest in ordered[position:]]
            break
        mine = shingles(shown(item))
        best, best_of = 0.0, None
        for other, other_body in zip(kept, bodies, strict=True):
            similarity = containment(mine, other_body)
            if similarity > best:
                best, best_of = similarity, other.item
        if best_of is not None and best >= COLLAPSE_AT:
            collapsed.append(Collapsed(item, best_of, round(best, 4)))
            continue
        kept.append(Kept(item, round(best, 4) if best >= DEMOTE_AT else 0.0, best_of))
        bodies.append(body(item))
    return kept, collapsed


def duplicate_rate(texts: Sequence[str], bodies: Sequence[str]) -> float:
    """Share of items whose shown text an earlier item's body mostly holds (for evaluation)."""
    if not texts:
        return 0.0
    seen: list[Shingles] = []
    duplicates = 0
    for text, whole in zip(texts, bodies, strict=True):
        mine = shingles(text)
        if any(containment(mine, other) >= COLLAPSE_AT for other in seen):
            duplicates += 1
        seen.append(shingles(whole))
    return duplicates / len(texts)
