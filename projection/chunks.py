"""Split a markdown/text version body into chunks by heading path.

A chunk is the text from one ATX heading (``#`` … ``######``) up to the next heading, addressed
by its heading path (``H1 > H2 > …``). Text before the first heading is a chunk with an empty
heading path. Chunks tile the body exactly: ``body[chunk.start:chunk.end] == chunk.text`` and
consecutive chunks share their boundary, so the concatenated texts give the body back.

``chunk_key`` is a readable, deterministic slug of the heading path (``testing-sop/phases``) that
stays the same across versions as long as the section keeps its heading path and its ordinal
among earlier sections with the same path (``testing-sop/phases~2`` for the second one). A
section longer than ``max_chars`` is cut at paragraph boundaries into parts ``@2``, ``@3``, …

Deliberately small subset of CommonMark: ATX headings with up to three spaces of indent, fenced
code blocks (backticks or tildes, which hide ``#`` lines) — setext headings, indented code and
headings inside block quotes or lists are plain text here.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

MAX_CHUNK_CHARS = 4000
MAX_KEY_LENGTH = 200
PREAMBLE_KEY = "_preamble"
HEADING_SEPARATOR = " > "

_MAX_SEGMENT_LENGTH = 64
_MAX_BASE_LENGTH = 180  # leaves room for "~ordinal@part" within MAX_KEY_LENGTH
_LINE = re.compile(r"[^\n]*\n?")
_MARKED_LINE = re.compile(r"^ {0,3}[#`~]", re.MULTILINE)  # may be a heading or a fence
_HEADING = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)(.*)")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_NON_WORD = re.compile(r"[^0-9a-z]+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One section (or part of a long section) of a version body; ``text == body[start:end]``."""

    chunk_key: str
    heading_path: tuple[str, ...]
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class _Line:
    start: int
    end: int
    heading: tuple[int, str] | None  # (level, text) for an ATX heading outside code fences
    paragraph_start: bool  # a non-blank line after a blank one, outside code fences


def split_into_chunks(body: str, *, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """Split ``body`` into chunks that tile it exactly, keyed by heading path and ordinal."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    breaks: tuple[list[int], list[int]] | None = None  # only a section too long needs them
    chunks: list[Chunk] = []
    ordinals: dict[str, int] = {}
    for path, start, end in _sections(_headings(body), len(body)):
        base = _base_key(path)
        ordinal = ordinals.get(base, 0) + 1
        ordinals[base] = ordinal
        pieces = [(start, end)]
        if end - start > max_chars:
            if breaks is None:
                lines = _scan_lines(body)
                breaks = (
                    [line.start for line in lines if line.paragraph_start],
                    [line.start for line in lines],
                )
            pieces = _split_long(body, breaks, (start, end), max_chars)
        for part, (piece_start, piece_end) in enumerate(pieces, start=1):
            key = _with_suffixes(base, ordinal, part)
            chunks.append(Chunk(key, path, piece_start, piece_end, body[piece_start:piece_end]))
    return chunks


def heading_path_text(heading_path: Sequence[str]) -> str:
    """Render a heading path the way the product shows it: ``Testing SOP > Phases``."""
    return HEADING_SEPARATOR.join(heading_path)


def slugify(text: str) -> str:
    """Lower-case ASCII-folded slug of one heading (``"Phase 0/1 tests"`` → ``phase-0-1-tests``).

    A heading with nothing to fold to ASCII (``部署``) gets a short digest of its text instead,
    so it keeps its own key; an empty heading is ``section``.
    """
    slug = _full_slug(text)[:_MAX_SEGMENT_LENGTH].rstrip("-")
    if slug or not text:
        return slug or "section"
    return "h-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


@functools.lru_cache(maxsize=8192)  # headings repeat: every section path repeats its H1
def _full_slug(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.casefold())
    ascii_text = folded.encode("ascii", "ignore").decode("ascii")
    return _NON_WORD.sub("-", ascii_text).strip("-")


def _scan_lines(body: str) -> list[_Line]:
    """Classify each line: heading or not, paragraph start or not (code fences hide both)."""
    lines: list[_Line] = []
    fence: tuple[str, int] | None = None
    previous_blank = True
    for match in _LINE.finditer(body):
        start, end = match.span()
        if start == end:  # the empty match after the last line
            break
        content = match.group().rstrip("\r\n")
        heading: tuple[int, str] | None = None
        paragraph_start = False
        if fence is not None:
            if _closes_fence(content, fence):
                fence = None
        elif (opened := _opens_fence(content)) is not None:
            fence = opened
        else:
            heading = _parse_heading(content)
            paragraph_start = previous_blank and not _is_blank(content)
        lines.append(_Line(start, end, heading, paragraph_start))
        previous_blank = _is_blank(content)
    return lines


def _headings(body: str) -> list[tuple[int, tuple[int, str]]]:
    """The start and ``(level, text)`` of every heading line, like :func:`_scan_lines` finds
    them but reading only the lines that begin like a heading or a fence (no other line opens,
    closes or is one)."""
    found: list[tuple[int, tuple[int, str]]] = []
    fence: tuple[str, int] | None = None
    for match in _MARKED_LINE.finditer(body):
        start = match.start()
        end = body.find("\n", start)
        content = body[start : len(body) if end < 0 else end].rstrip("\r\n")
        if fence is not None:
            if _closes_fence(content, fence):
                fence = None
        elif (opened := _opens_fence(content)) is not None:
            fence = opened
        elif (heading := _parse_heading(content)) is not None:
            found.append((start, heading))
    return found


def _is_blank(content: str) -> bool:
    return not content.strip(" \t\r\f\v")


def _opens_fence(content: str) -> tuple[str, int] | None:
    match = _FENCE_OPEN.fullmatch(content)
    if match is None:
        return None
    marker, info = match.group(1), match.group(2)
    if marker[0] == "`" and "`" in info:  # a backtick fence's info string has no backticks
        return None
    return marker[0], len(marker)


def _closes_fence(content: str, fence: tuple[str, int]) -> bool:
    match = _FENCE_CLOSE.fullmatch(content)
    if match is None:
        return False
    marker = match.group(1)
    return marker[0] == fence[0] and len(marker) >= fence[1]


def _parse_heading(content: str) -> tuple[int, str] | None:
    match = _HEADING.fullmatch(content)
    if match is None:
        return None
    text = _CLOSING_HASHES.sub("", match.group(2).strip(" \t"))
    return len(match.group(1)), " ".join(text.split())


def _sections(
    headings: list[tuple[int, tuple[int, str]]], length: int
) -> list[tuple[tuple[str, ...], int, int]]:
    """Return ``(heading_path, start, end)`` for the preamble and every heading's section."""
    sections: list[tuple[tuple[str, ...], int, int]] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    start = 0
    for line_start, heading in headings:
        if line_start > start:
            sections.append((path, start, line_start))
        level = heading[0]
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append(heading)
        path = tuple(text for _, text in stack)
        start = line_start
    if length > start:
        sections.append((path, start, length))
    return sections


def _split_long(
    body: str, breaks: tuple[list[int], list[int]], span: tuple[int, int], max_chars: int
) -> list[tuple[int, int]]:
    """Cut ``span`` into pieces of at most ``max_chars``: at paragraphs, else lines, else spaces.

    ``breaks`` holds the sorted starts of paragraphs and of lines of the whole body.
    """
    start, end = span
    if end - start <= max_chars:
        return [(start, end)]
    paragraph_starts, line_starts = (
        starts[bisect.bisect_right(starts, start) : bisect.bisect_left(starts, end)]
        for starts in breaks
    )
    pieces: list[tuple[int, int]] = []
    position = start
    while end - position > max_chars:
        pieces.append((position, _cut(body, paragraph_starts, line_starts, position, max_chars)))
        position = pieces[-1][1]
    pieces.append((position, end))
    return pieces


def _cut(
    body: str, paragraph_starts: list[int], line_starts: list[int], position: int, max_chars: int
) -> int:
    """Where the piece starting at ``position`` ends: the last paragraph break, else line break,
    else space within reach — first looking only in the second half, so pieces are not tiny."""
    limit = position + max_chars
    for low in (position + max_chars // 2, position):
        space = body.rfind(" ", low, limit)
        cut = _last_between(paragraph_starts, low, limit) or _last_between(line_starts, low, limit)
        cut = cut or (space + 1 if space >= 0 else 0)
        if cut > position:
            return cut
    return limit


def _last_between(sorted_positions: list[int], low: int, high: int) -> int | None:
    """The largest position ``p`` with ``low < p <= high``, if any."""
    index = bisect.bisect_right(sorted_positions, high)
    if index and sorted_positions[index - 1] > low:
        return sorted_positions[index - 1]
    return None


def _base_key(path: tuple[str, ...]) -> str:
    if not path:
        return PREAMBLE_KEY
    base = "/".join(slugify(heading) for heading in path)
    shortened = any(len(_full_slug(heading)) > _MAX_SEGMENT_LENGTH for heading in path)
    if shortened or len(base) > _MAX_BASE_LENGTH:
        # Keep distinct paths distinct: a digest of the full path replaces the cut-off tail.
        digest = hashlib.sha256("\n".join(path).encode("utf-8")).hexdigest()[:10]
        base = f"{base[: _MAX_BASE_LENGTH - 11].rstrip('-/')}-{digest}"
    return base


def _with_suffixes(base: str, ordinal: int, part: int) -> str:
    key = base if ordinal == 1 else f"{base}~{ordinal}"
    key = key if part == 1 else f"{key}@{part}"
    return key[:MAX_KEY_LENGTH]
