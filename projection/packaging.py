"""Packaging: what of each version is shown, cited, and fitted into the budget.

Every piece of content shown is an exact slice ``body[start:end)`` of one chunk of the version
body and is cited as such, so a citation can always be checked against the version. The
``context_block`` is the prompt-ready text: one entry per item, ``[n] title (source, version)``
followed by the item's content; ``[n]`` is the citation marker of item ``n``. The budget is
honoured exactly: at most ``max_items`` items and ``len(context_block) <= max_chars`` (the
items' contents, being part of the block, fit as well).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from projection.chunks import heading_path_text, split_into_chunks

DETAIL_LEVELS = ("titles", "excerpt", "full")
JOINER = "\n…\n"
ENTRY_SEPARATOR = "\n\n"
MAX_HIT_PIECES = 2
MIN_CUT_CHARS = 40
"""A piece cut to fit the budget keeps at least this many characters, or is left out."""
MAX_SENTENCE_CHARS = 240
"""A first sentence longer than this is cut at a word boundary (``titles`` detail)."""

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_HEADING_LINE = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t][^\n]*)?(?:\n|\Z)")
_SENTENCE_END = re.compile(r"[.!?](?=\s|\Z)|\n\s*\n")
_WORD = re.compile(r"[0-9a-z]+")
STOP_WORDS = frozenset(
    _WORD.findall(
        "a an and are as at be but by can do does for from have how i if in is it its me my no "
        "not of on or so that the their then there these they this to us was we what when where "
        "which who why will with you your"
    )
)


@dataclass(frozen=True, slots=True)
class Piece:
    """A cited slice ``[start, end)`` of a version body, inside the chunk ``chunk_key``."""

    chunk_key: str
    heading_path: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ItemSource:
    """One ranked item before budgeting: the version and the pieces chosen to show."""

    repository_key: str
    element_id: str
    version_id: str
    title: str
    source_kind: str
    body: str
    pieces: tuple[Piece, ...]
    note: str | None = None
    """Shown instead of content (an erased version says so); nothing is cited then."""


@dataclass(frozen=True, slots=True)
class PackedItem:
    """An item as returned: its marker number, content and the pieces actually shown."""

    marker: int
    source: ItemSource
    content: str
    pieces: tuple[Piece, ...]


@dataclass(frozen=True, slots=True)
class Packed:
    """The budgeted result."""

    items: tuple[PackedItem, ...]
    context_block: str
    truncated: bool


def content_chunks(body: str) -> list[Piece]:
    """The non-blank chunks of a body as pieces (the same chunks the index holds)."""
    return [
        Piece(c.chunk_key, heading_path_text(c.heading_path), c.start, c.end)
        for c in split_into_chunks(body)
        if c.text.strip()
    ]


def _trimmed(body: str, pieces: Sequence[Piece]) -> list[Piece]:
    """Pieces without trailing whitespace (a citation then ends at the last real character)."""
    out = []
    for p in pieces:
        end = p.start + len(body[p.start : p.end].rstrip())
        if end > p.start:
            out.append(replace(p, end=end))
    return out


def chunk_words(body: str, chunks: Sequence[Piece]) -> dict[tuple[int, int], frozenset[str]]:
    """The words of each chunk, by its span (what :func:`choose_pieces` compares with the
    query; a caller may keep them per version, as the body never changes)."""
    return {
        (p.start, p.end): frozenset(_WORD.findall(body[p.start : p.end].lower())) for p in chunks
    }


def choose_pieces(
    body: str,
    detail: str,
    hits: Sequence[Piece] = (),
    terms: Sequence[str] = (),
    chunks: Sequence[Piece] | None = None,
    words: Callable[[], Mapping[tuple[int, int], frozenset[str]]] | None = None,
) -> list[Piece]:
    """What to show of a body at ``detail``: ``full`` every chunk; ``titles`` the first
    sentence; ``excerpt`` the best matching chunks (``hits``, best first), else the chunks
    sharing most words with the query, else the first chunk of real content. ``chunks`` are
    the body's :func:`content_chunks` and ``words`` gives their :func:`chunk_words`, when the
    caller has them already."""
    if detail == "excerpt" and any(0 <= h.start < h.end <= len(body) for h in hits):
        return _trimmed(body, _choose(body, detail, hits, terms, [], words))
    known = list(chunks) if chunks is not None else content_chunks(body)
    return _trimmed(body, _choose(body, detail, hits, terms, known, words))


def _choose(
    body: str,
    detail: str,
    hits: Sequence[Piece],
    terms: Sequence[str],
    chunks: list[Piece],
    words: Callable[[], Mapping[tuple[int, int], frozenset[str]]] | None = None,
) -> list[Piece]:
    if detail == "full":
        return chunks
    if detail == "titles":
        sentence = first_sentence(body, chunks)
        return [sentence] if sentence else []
    valid = [h for h in hits if 0 <= h.start < h.end <= len(body)]
    if valid:
        return sorted(valid[:MAX_HIT_PIECES], key=lambda p: p.start)
    content = [p for p in chunks if not _is_front_matter_only(body, p)] or chunks
    wanted = {w for t in terms for w in _WORD.findall(t.lower())}
    if wanted:
        known = words() if words is not None else chunk_words(body, content)
        overlap = [(len(wanted & known[p.start, p.end]), p) for p in content]
        best = max((n for n, _ in overlap), default=0)
        if best:
            return [next(p for n, p in overlap if n == best)]
    return content[:1]


def query_terms(query: str) -> list[str]:
    """The words of a query as matched (lower-cased, stop words out, each once): user text
    is only ever words — field syntax, operators and wildcards mean nothing."""
    words = _WORD.findall(query.lower())
    return list(dict.fromkeys(w for w in words if w not in STOP_WORDS))


def first_sentence(body: str, chunks: Sequence[Piece] | None = None) -> Piece | None:
    """The first sentence of real text: after front matter and heading lines."""
    position = 0
    front = _FRONT_MATTER.match(body)
    if front:
        position = front.end()
    while position < len(body):
        heading = _HEADING_LINE.match(body, position)
        blank = body[position] in " \t\n"
        if heading and heading.end() > position:
            position = heading.end()
        elif blank:
            position += 1
        else:
            break
    if position >= len(body):
        return None
    chunk = _chunk_at(body, position, content_chunks(body) if chunks is None else chunks)
    limit = min(chunk.end, position + MAX_SENTENCE_CHARS)  # a sentence never leaves its chunk
    end_match = _SENTENCE_END.search(body, position, limit)
    if end_match is None:
        space = body.rfind(" ", position + MIN_CUT_CHARS, limit)
        end = space if limit < chunk.end and space > 0 else limit
    else:
        end = end_match.end() if end_match.group() in ".!?" else end_match.start()
    end = position + len(body[position:end].rstrip())
    return Piece(chunk.chunk_key, chunk.heading_path, position, max(end, position + 1))


def shown_text(body: str, pieces: Sequence[Piece]) -> str:
    """The pieces' text as shown (joined)."""
    return JOINER.join(body[p.start : p.end] for p in pieces)


def header(marker: int, item: ItemSource) -> str:
    """The entry line of an item in the context block: its citation marker and identity."""
    title = " ".join(item.title.split())
    return f"[{marker}] {title} ({item.source_kind}, {item.version_id})"


def pack(items: Iterable[ItemSource], max_items: int, max_chars: int) -> Packed:
    """Fit ranked items into the budget, cutting the last one at a word boundary if needed.

    Items are taken in order; the first that does not fit (even cut) ends the packing, so
    a better item is never dropped for a worse one.
    """
    packed: list[PackedItem] = []
    used = 0
    for item in items:
        if len(packed) >= max_items:
            return Packed(tuple(packed), _block(packed), True)
        marker = len(packed) + 1
        overhead = (len(ENTRY_SEPARATOR) if packed else 0) + len(header(marker, item)) + 1
        fitted = _fit(item, max_chars - used - overhead)
        if fitted is None:
            return Packed(tuple(packed), _block(packed), True)
        content, pieces = fitted
        packed.append(PackedItem(marker, item, content, pieces))
        used += overhead + len(content)
        if pieces != item.pieces and item.note is None:
            return Packed(tuple(packed), _block(packed), True)
    return Packed(tuple(packed), _block(packed), False)


def _block(packed: Sequence[PackedItem]) -> str:
    return ENTRY_SEPARATOR.join(f"{header(p.marker, p.source)}\n{p.content}" for p in packed)


def _fit(item: ItemSource, room: int) -> tuple[str, tuple[Piece, ...]] | None:
    """The item's content within ``room`` characters, or None when nothing useful fits."""
    if item.note is not None:
        return (item.note, ()) if len(item.note) <= room else None
    content, pieces = "", list[Piece]()
    for piece in item.pieces:
        joiner = JOINER if pieces else ""
        text = item.body[piece.start : piece.end]
        if len(content) + len(joiner) + len(text) <= room:
            content += joiner + text
            pieces.append(piece)
            continue
        cut = _cut(text, room - len(content) - len(joiner))
        if cut:
            content += joiner + text[:cut]
            pieces.append(replace(piece, end=piece.start + cut))
        break
    if not pieces:
        return None
    return content, tuple(pieces)


def _cut(text: str, room: int) -> int:
    """Where to cut ``text`` to at most ``room`` characters: after the last whitespace."""
    if room < MIN_CUT_CHARS:
        return 0
    space = max(text.rfind(" ", 0, room), text.rfind("\n", 0, room))
    cut = space if space >= MIN_CUT_CHARS else room
    return len(text[:cut].rstrip()) or 0


def _chunk_at(body: str, position: int, chunks: Sequence[Piece]) -> Piece:
    for piece in chunks:
        if piece.start <= position < piece.end:
            return piece
    return Piece("_preamble", "", 0, len(body))


def _is_front_matter_only(body: str, piece: Piece) -> bool:
    text = body[piece.start : piece.end]
    front = _FRONT_MATTER.match(text)
    return piece.start == 0 and front is not None and not text[front.end() :].strip()
