"""Markdown text handling for ingest: decoding, normalization, hashing, titles, links, counts.

Front matter lives in :mod:`ingest.front_matter`; its two entry points are re-exported here.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import unquote

from ingest.front_matter import (
    FrontMatter,
    FrontMatterError,
    parse_front_matter,
    split_front_matter,
)
from ingest.paths import resolve_relative

__all__ = [
    "ContentError",
    "FrontMatter",
    "FrontMatterError",
    "LinkKind",
    "LinkRef",
    "content_hash",
    "count_headings",
    "count_words",
    "decode_text",
    "extract_links",
    "headings",
    "normalize_body",
    "outline",
    "parse_front_matter",
    "split_front_matter",
    "title_for",
]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_H1 = re.compile(r"^ {0,3}=+[ \t]*$")
_SETEXT_H2 = re.compile(r"^ {0,3}-+[ \t]*$")
# Quantifiers are bounded or anchored so that hostile text cannot make matching quadratic.
_INLINE_LINK = re.compile(
    r"(!?)\[(?:[^\[\]\n]|\[[^\[\]\n]{0,200}\]){0,500}\]"
    r"\([ \t]{0,20}(<[^>\n]{0,2000}>|[^\s()]{1,2000})"
    r"(?:[ \t]{1,20}(?:\"[^\"\n]{0,500}\"|'[^'\n]{0,500}'|\([^)\n]{0,500}\)))?[ \t]{0,20}\)"
)
_REF_DEF = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)", re.MULTILINE)
_URLISH = re.compile(r"(?<![a-zA-Z0-9+.-])(?:[a-zA-Z][a-zA-Z0-9+.-]{0,30}:|//)\S*")
_PATH_REF = re.compile(r"(?<![\w/.~-])((?:[\w.-]+/)*[\w.-]*\w\.md)(?![\w/-])")
_SCHEME = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")


class ContentError(ValueError):
    """File bytes that are not markdown text: ``code`` is ``binary`` or ``undecodable``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def decode_text(data: bytes) -> str:
    """Decode file bytes as UTF-8 text (a BOM is dropped); NUL bytes mean a binary file."""
    if b"\0" in data:
        raise ContentError("binary", "file is binary (contains NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ContentError("undecodable", f"file is not valid UTF-8 (byte {exc.start})") from None


def normalize_body(text: str) -> str:
    """CRLF/CR → LF, trailing whitespace trimmed on every line, trailing blank lines dropped."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def content_hash(text: str) -> str:
    """SHA-256 hex of the normalized text (normalizing first makes the hash line-ending-proof)."""
    return hashlib.sha256(normalize_body(text).encode("utf-8")).hexdigest()


def _outside_fences(text: str) -> list[str]:
    """The lines of ``text`` with fenced code blocks blanked out (line numbers are kept)."""
    lines = text.split("\n")
    if "```" not in text and "~~~" not in text:
        return lines
    out: list[str] = []
    fence: str | None = None
    for line in lines:
        # a fence opens with ` or ~ within the first four characters: test that before the regex
        match = _FENCE.match(line) if fence is None and _may_open_fence(line) else None
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            out.append("")
        elif fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            out.append("")
        else:
            out.append(line)
    return out


def _may_open_fence(line: str) -> bool:
    head = line[:4]
    return "`" in head or "~" in head


def headings(text: str) -> list[tuple[int, str]]:
    """(level, text) of every ATX or setext heading outside fenced code."""
    return _headings_in(_outside_fences(text))


def outline(path: str, body: str) -> tuple[list[LinkRef], list[tuple[int, str]]]:
    """``(extract_links(path, body), headings(body))``, finding the fenced code once."""
    lines = _outside_fences(body)
    return _links_in(path, lines), _headings_in(lines)


def _headings_in(lines: list[str]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    # An ATX heading has its "#", a setext underline its "=" or "-", within the first four
    # characters: cheap tests that spare most lines the regexes.
    for index, line in enumerate(lines):
        if "#" in line[:4]:
            atx = _ATX.match(line)
            if atx:
                found.append((len(atx.group(1)), (atx.group(2) or "").strip()))
                continue
        below = lines[index + 1] if index + 1 < len(lines) else ""
        head = below[:4]
        if not ("=" in head or "-" in head) or not line.strip():
            continue
        if _SETEXT_H1.match(below) or (_SETEXT_H2.match(below) and below):
            found.append((1 if _SETEXT_H1.match(below) else 2, line.strip()))
    return found


def count_headings(body: str) -> int:
    """Number of headings (ATX or setext) outside fenced code."""
    return len(headings(body))


def count_words(body: str) -> int:
    """Number of whitespace-separated words."""
    return len(body.split())


def title_for(
    front_matter: FrontMatter,
    body: str,
    path: str,
    found: list[tuple[int, str]] | None = None,
) -> str:
    """Front matter ``title``, else the first H1, else the file name without its extension.

    ``found`` are the body's :func:`headings` when the caller has them already.
    """
    if front_matter.title and front_matter.title.strip():
        return front_matter.title.strip()
    for level, text in headings(body) if found is None else found:
        if level == 1 and text:
            return text
    name = posixpath.basename(path)
    stem, ext = posixpath.splitext(name)
    return stem if ext and stem else name


class LinkKind(StrEnum):
    """How a reference to another file was written."""

    MARKDOWN_LINK = "markdown_link"  # [text](target) or a [ref]: target definition
    PATH_REFERENCE = "path_reference"  # a bare path like backlog/0042-auth.md in the text
    LIFECYCLE = "lifecycle"  # a "Supersedes: 432" / "Superseded by: …" statement


@dataclass(frozen=True)
class LinkRef:
    """A reference from one file to another, with the repository paths it may point at.

    ``candidates`` is in preference order and empty when the target would leave the repository.
    """

    raw: str
    kind: LinkKind
    candidates: tuple[str, ...]


def extract_links(path: str, body: str) -> list[LinkRef]:
    """Relative markdown links and bare ``*.md`` path mentions in ``body`` (the file at ``path``).

    Links inside fenced code, images, external URLs and pure ``#anchor`` links are ignored;
    ``#fragment`` and ``?query`` are dropped; percent-escapes are decoded. Deduplicated, in order.
    """
    return _links_in(path, _outside_fences(body))


def _links_in(path: str, lines: list[str]) -> list[LinkRef]:
    """:func:`extract_links` over the lines left by :func:`_outside_fences`.

    No pattern matches across a newline (nor looks past one), so each is run line by line, and
    only on the lines holding the literal every match contains: ``](`` for an inline link,
    ``]:`` for a reference definition, ``.md`` for a bare path.
    """
    found: dict[tuple[LinkKind, str], LinkRef] = {}
    for line in lines:
        if "](" in line:
            for match in _INLINE_LINK.finditer(line):
                if not match.group(1):
                    _add_link(found, path, match.group(2))
    for line in lines:
        if "]:" in line:
            for match in _REF_DEF.finditer(line):
                _add_link(found, path, match.group(1))
    for line in lines:
        if ".md" not in line:
            continue
        rest = _URLISH.sub(" ", _REF_DEF.sub(" ", _INLINE_LINK.sub(" ", line)))
        for match in _PATH_REF.finditer(rest):
            raw = match.group(1)
            # "backlog/x.md" is usually written from the repository root, "x.md" from the
            # file's folder
            options = [resolve_relative(path, raw), resolve_relative("", raw)]
            if "/" in raw:
                options.reverse()
            candidates = tuple(dict.fromkeys(c for c in options if c))
            found.setdefault(
                (LinkKind.PATH_REFERENCE, raw), LinkRef(raw, LinkKind.PATH_REFERENCE, candidates)
            )
    return [ref for ref in found.values() if path not in ref.candidates]


def _add_link(found: dict[tuple[LinkKind, str], LinkRef], path: str, target: str) -> None:
    raw = target[1:-1] if target.startswith("<") and target.endswith(">") else target
    if not raw or raw.startswith("#") or _SCHEME.match(raw):
        return
    clean = unquote(raw.split("#", 1)[0].split("?", 1)[0])
    if not clean:
        return
    resolved = resolve_relative(path, clean)
    candidates = (resolved,) if resolved else ()
    found.setdefault(
        (LinkKind.MARKDOWN_LINK, raw), LinkRef(raw, LinkKind.MARKDOWN_LINK, candidates)
    )
