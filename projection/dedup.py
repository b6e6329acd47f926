"""Near-duplicate detection: mirrors of one text are collapsed, look-alikes demoted.

Backlogs copy sections around (a quick reference that repeats a runbook's "Rolling back"
section word for word). Showing both copies wastes the budget, so an item whose shown text is
mostly *contained* in the body of another kept item is collapsed into it. Containment (not
Jaccard) because the copy is usually a part of the original: ``|A ∩ B| / |A|`` over word
shingles of the shown text ``A`` and the other item's whole body ``B``.

A collapsed group is one answer, shown by its *representative*: the item of higher standing
(the caller's notion — canonical over evidence, current over superseded) and, at equal
standing, the *original* — the one whose body holds more of the other's body than the other
holds of its — whichever of the two ranked first. So a quickstart that copies a section of the
testing procedure never hides the procedure itself. Look-alikes below the collapse threshold
are kept and the copy of the two is marked for demotion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

SHINGLE_WORDS = 4
COLLAPSE_AT = 0.8
"""Containment at or above which two items are mirrors: one is collapsed into the other."""
DEMOTE_AT = 0.5
"""Containment at or above which (below ``COLLAPSE_AT``) an item is demoted by its similarity."""

_WORDS = bytes(c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256))
"""Byte table: ASCII digits and lower-case letters kept, every other byte a separator."""
_T = TypeVar("_T")


Shingles = frozenset[int]


def shingles(text: str, size: int = SHINGLE_WORDS) -> Shingles:
    """Hashes of the overlapping ``size``-word sequences of the lower-cased words (one for
    shorter texts). Hashes are only compared within one process."""
    # the runs of [0-9a-z] in the lower-cased text, as bytes: one translate and one split in C,
    # several times faster than a regex's findall (a read shingles about 25 candidates)
    words = text.lower().encode("utf-8", "surrogatepass").translate(_WORDS).split()
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
    """An item kept, with its highest similarity to a kept item it copies (0 for none)."""

    item: _T
    similarity: float
    similar_to: _T | None


def collapse(
    ordered: Sequence[_T],
    shown: Callable[[_T], str],
    body: Callable[[_T], Shingles],
    limit: int | None = None,
    standing: Callable[[_T], float] | None = None,
) -> tuple[list[Kept[_T]], list[Collapsed[_T]]]:
    """Walk ``ordered`` best first; collapse mirrors (``body`` gives the shingles of an item's
    body, so callers can cache them; ``standing`` ranks representatives, equal by default).

    For a new item and a kept one, each direction is measured: the new item's shown text in the
    kept body and the kept item's shown text in the new body. At or above ``COLLAPSE_AT`` the
    two are mirrors and the representative (see the module docstring) stays, at the slot of
    the better-ranked one; between ``DEMOTE_AT`` and ``COLLAPSE_AT`` both stay and the copy
    carries its similarity so the ranking can demote it.

    Returns the kept items (in order, each with its similarity to the item it resembles and
    that item) and the collapsed ones (each with its representative). Once ``limit`` items are
    kept the rest are kept unchecked: a budget of ``limit`` items never reaches them.
    """
    rank = standing or (lambda _item: 0.0)
    kept: list[Kept[_T]] = []
    views: list[Shingles] = []
    bodies: list[Shingles] = []
    collapsed: list[Collapsed[_T]] = []
    for position, item in enumerate(ordered):
        if limit is not None and len(kept) >= limit:
            kept += [Kept(rest, 0.0, None) for rest in ordered[position:]]
            break
        mine, whole = shingles(shown(item)), body(item)
        into: tuple[float, int] | None = None  # (similarity, index) of the kept item it mirrors
        replaces: list[tuple[int, float]] = []  # kept mirrors this item represents instead
        resembles: tuple[float, int] | None = None
        copies: list[tuple[int, float]] = []  # kept look-alikes that copy this item
        for index, (other, other_view, other_body) in enumerate(
            zip(kept, views, bodies, strict=True)
        ):
            ahead = containment(mine, other_body)  # this item is a copy of the kept one
            behind = containment(other_view, whole)  # the kept one is a copy of this item
            mine_wins = behind >= DEMOTE_AT and _represents(
                item, whole, other.item, other_body, rank
            )
            if behind >= COLLAPSE_AT and mine_wins:
                replaces.append((index, behind))
            elif ahead >= COLLAPSE_AT:
                if into is None or ahead > into[0]:
                    into = (ahead, index)
            elif behind >= DEMOTE_AT and mine_wins:
                copies.append((index, behind))
            elif ahead >= DEMOTE_AT and (resembles is None or ahead > resembles[0]):
                resembles = (ahead, index)
        if into is not None:  # a copy of a kept item that represents it: never shown twice
            collapsed.append(Collapsed(item, kept[into[1]].item, round(into[0], 4)))
            continue
        for index, similarity in copies:
            if similarity > kept[index].similarity:
                kept[index] = Kept(kept[index].item, round(similarity, 4), item)
        entry = (
            Kept(item, round(resembles[0], 4), kept[resembles[1]].item)
            if resembles
            else Kept(item, 0.0, None)
        )
        if not replaces:
            kept.append(entry)
            views.append(mine)
            bodies.append(whole)
            continue
        gone = {index for index, _ in replaces}
        for index, similarity in replaces:
            collapsed.append(Collapsed(kept[index].item, item, round(similarity, 4)))
        collapsed = [
            Collapsed(c.item, item, c.similarity)
            if any(c.duplicate_of is kept[index].item for index in gone)
            else c
            for c in collapsed
        ]
        slot = min(gone)
        kept[slot], views[slot], bodies[slot] = entry, mine, whole
        for index in sorted(gone - {slot}, reverse=True):
            del kept[index], views[index], bodies[index]
    return kept, collapsed


def _represents(
    item: _T, body: Shingles, other: _T, other_body: Shingles, rank: Callable[[_T], float]
) -> bool:
    """Whether ``item`` rather than ``other`` represents the pair: higher standing, or equal
    standing and the original (its body holds more of the other's than the other's of it)."""
    if rank(item) != rank(other):
        return rank(item) > rank(other)
    return containment(other_body, body) > containment(body, other_body)


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
