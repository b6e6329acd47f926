"""A document's lifecycle — current, draft or superseded — from its front matter and its top.

Real backlogs and ADRs rarely use YAML front matter for this; they say it near the top, in a
handful of conventions, all recognised here (only in the first :data:`TOP_LINES` lines, outside
code fences, so a later mention of "deprecated" in the text changes nothing):

- a status field: front matter ``status: historical``, or a body line ``Status: Deprecated``
  (or ``Status – superseded (2026-02-17): …``),
  ``**Status:** Deprecated (historical; superseded by 650 suite)``, ``> Status: Accepted``,
  ``## Status`` followed by the value on the next line (ADR style);
- a banner whose first word is a lifecycle word: ``> **DEPRECATED**: …``,
  ``> **⚠️ SUPERSEDED BY [435](435-x.md)**``, ``> Deprecated (historical): …``;
- a lifecycle word marking the title (the first heading): ``# Observability Blueprint
  (superseded)``, ``# Package Pipeline _(Archived)_``, ``# 713 — Scenarios (superseded by
  714)``, ``# [DEPRECATED] Old flow``;
- ``Superseded by: …`` / ``Replaced by …`` (this document is superseded) and
  ``Supersedes: 432, parts of 367`` (this document supersedes others; "parts of" ones are
  not replaced, only partly), also as a sentence about the document itself (``This document
  supersedes backlog/527-x-v3.md``, ``This backlog … consolidates and supersedes backlogs 371
  and 376.``, ``This document is authoritative and supersedes:`` followed by a list), plus
  front matter ``supersedes`` / ``superseded_by``.

The first word of a status value decides, by :data:`VOCABULARY` (configurable: pass another
mapping). The result, with the line or field that said so, is version metadata: ``lifecycle``
(``{"state", "evidence"}``), ``superseded`` (the flag ranking reads), and ``supersedes`` /
``superseded_by`` (references as written, for the ingest run to resolve to files).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from ingest.links.references import names_index, resolve_reference

CURRENT, DRAFT, SUPERSEDED = "current", "draft", "superseded"

VOCABULARY: Mapping[str, str] = {
    **dict.fromkeys(
        (
            "superseded", "deprecated", "historical", "obsolete", "archived", "retired",
            "replaced", "withdrawn", "abandoned", "rejected", "sunset", "legacy-only",
        ),
        SUPERSEDED,
    ),
    **dict.fromkeys(
        ("draft", "proposed", "proposal", "wip", "planning", "planned", "idea", "rfc"), DRAFT
    ),
    **dict.fromkeys(
        (
            "current", "active", "accepted", "adopted", "approved", "implemented", "done",
            "complete", "completed", "stable", "live", "final", "canonical", "tracking",
        ),
        CURRENT,
    ),
}  # fmt: skip
"""First word of a status value → lifecycle state (anything else: no statement)."""

TOP_LINES = 25
"""How far from the top lifecycle statements are looked for."""

_MARKUP = re.compile(
    r"^[\s>*_#`~|\-•·\u2022\u26a0\ufe0f\u2705\u274c\u2757\u203c\U0001F300-\U0001FAFF:]+"
)
_STATUS = re.compile(
    r"^status(?:\s*(?:\*\*|__)?\s*[:：]|\s+[-–—]\s)\s*(?:\*\*|__)?\s*(?P<value>.*)$", re.I
)
_STATUS_HEADING = re.compile(r"^#{1,6}\s*status\s*$", re.I)
_SUPERSEDED_BY = re.compile(
    r"^(?:superseded|replaced)\s+by\s*(?:\*\*|__)?\s*[:：]?\s*(?:\*\*|__)?\s*(?P<refs>.*)$", re.I
)
_SUPERSEDES = re.compile(
    r"^(?:supersedes|replaces)\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*(?P<refs>.*)$", re.I
)
_THIS_SUPERSEDES = re.compile(
    r"^this\s+(?:document|doc|backlog|page|adr|item|spec|file|note)\b.*?\bsupersedes\b"
    r"\s*(?:\*\*|__)?\s*[:：]?\s*(?P<refs>.*)$",
    re.I,
)
_TITLE_MARK = re.compile(
    r"(?:^[\[(](?P<lead>[A-Za-z-]+)[\])]|[\[(][\s_*]*(?P<tail>[A-Za-z-]+)(?:\s+by\b(?P<by>[^\])]*))?"
    r"[\s_*]*[\])][\s_*]*$)"
)
_BANNER = re.compile(r"([A-Za-z-]+)\W*(\(|:|\.|by\b|—|–|$)", re.I)
_LIST_ITEM = re.compile(r"^(?:[-*+•]|\d+[.)])\s+")
_WORD = re.compile(r"[a-z][a-z-]*")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_PATH = re.compile(r"[\w./-]*\d*[\w-]*\.md\b")
_NUMBER = re.compile(r"(?<![\w.])(\d{2,5})(?:v\d+)?(?!\w|\.\w)")


@dataclass(frozen=True)
class Lifecycle:
    """What a document says of its own lifecycle."""

    state: str | None = None
    evidence: str | None = None
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()

    def metadata(self) -> dict[str, object]:
        """Version metadata (only what was found)."""
        out: dict[str, object] = {}
        if self.state is not None:
            out["lifecycle"] = {"state": self.state, "evidence": self.evidence}
            if self.state == SUPERSEDED:
                out["superseded"] = True
        if self.supersedes:
            out["supersedes_refs"] = list(self.supersedes)
        if self.superseded_by:
            out["superseded_by_refs"] = list(self.superseded_by)
        return out


def state_of(value: str, vocabulary: Mapping[str, str] = VOCABULARY) -> str | None:
    """The lifecycle state a status value starts with (``Deprecated (historical…)`` →
    superseded), or ``None``."""
    found = _WORD.search(_MARKUP.sub("", value).lower())
    return vocabulary.get(found.group()) if found else None


def references(text: str) -> tuple[str, ...]:
    """The documents a ``Supersedes:`` / ``Superseded by:`` value names: link targets, ``.md``
    paths and backlog numbers (``432``); "parts of …" items are left out (only partly
    replaced)."""
    out: list[str] = []
    for piece in re.split(r"[,;]|\band\b", text):
        if re.search(r"\bparts?\s+of\b", piece, re.I):
            continue
        links = _LINK.findall(piece)
        if links:
            out += links
            continue
        paths = _PATH.findall(piece)
        if paths:
            out += paths
            continue
        numbers = _NUMBER.findall(piece)
        out += numbers[:1]
    return tuple(dict.fromkeys(r for r in out if r))


def _top_lines(content: str) -> list[str]:
    lines: list[str] = []
    fenced = False
    for line in content.split("\n")[: TOP_LINES * 2]:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced and line.strip():
            lines.append(line.strip())
        if len(lines) >= TOP_LINES:
            break
    return lines


def derive(
    front: Mapping[str, object],
    content: str,
    vocabulary: Mapping[str, str] = VOCABULARY,
) -> Lifecycle:
    """The lifecycle a document states in its front matter (first) or near its top: each top
    line is offered to the :data:`CONVENTIONS` in order until one claims it; the title's mark
    counts only when nothing else said a state."""
    reading = _from_front(front, _top_lines(content), vocabulary)
    for i, raw in enumerate(reading.lines):
        line = _MARKUP.sub("", raw).strip()
        if line:
            _read_line(reading, i, raw, line)
    if reading.state is None and reading.marked is not None:
        reading.state, reading.evidence = reading.marked
    return Lifecycle(
        reading.state,
        reading.evidence,
        tuple(dict.fromkeys(reading.supersedes)),
        tuple(dict.fromkeys(reading.superseded_by)),
    )


@dataclass
class _Reading:
    """What :func:`derive` has read so far (the conventions add to it, line by line)."""

    lines: list[str]
    vocabulary: Mapping[str, str]
    state: str | None = None
    evidence: str | None = None
    supersedes: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)
    titled: bool = False
    marked: tuple[str, str] | None = None  # the title's mark: the weakest statement


def _from_front(
    front: Mapping[str, object], lines: list[str], vocabulary: Mapping[str, str]
) -> _Reading:
    """The reading front matter starts: ``status`` (its first word), else ``superseded_by``
    (superseded), and the ``supersedes`` / ``superseded_by`` references."""
    reading = _Reading(
        lines,
        vocabulary,
        supersedes=[str(x) for x in _as_list(front.get("supersedes"))],
        superseded_by=[str(x) for x in _as_list(front.get("superseded_by"))],
    )
    status = front.get("status")
    if isinstance(status, str) and status.strip():
        reading.state = state_of(status, vocabulary)
        if reading.state:
            reading.evidence = f"front matter status: {status.strip()}"[:200]
    if reading.superseded_by and reading.state is None:
        reading.state, reading.evidence = SUPERSEDED, "front matter superseded_by"
    return reading


def _read_line(reading: _Reading, i: int, raw: str, line: str) -> None:
    """Offers top line ``i`` (``raw``; ``line`` without its markup) to the conventions in order,
    until one claims it."""
    for convention in CONVENTIONS:
        if convention.while_undecided and reading.state is not None:
            continue
        if convention.read(reading, i, raw, line):
            return


def _title(reading: _Reading, i: int, raw: str, line: str) -> bool:
    """The first heading is the title, read only for a lifecycle mark (``(superseded)``,
    ``_(Archived)_``, ``[DEPRECATED] …``, ``(superseded by 714)``)."""
    if not raw.startswith("#") or reading.titled:
        return False
    reading.titled = True
    found, refs = _title_mark(line, reading.vocabulary)
    reading.superseded_by += refs
    if found is not None:
        reading.marked = (found, raw[:200])
    return True


def _supersedes(reading: _Reading, i: int, raw: str, line: str) -> bool:
    """``Supersedes: 432, parts of 367`` or ``This document … supersedes …`` (maybe followed
    by a list): what this document replaces (nothing of its own state)."""
    match = _SUPERSEDES.match(line) or _THIS_SUPERSEDES.match(line)
    if match is None:
        return False
    named = references(match.group("refs"))
    if not named and not match.group("refs").strip():  # "…supersedes:" then a list
        for item in reading.lines[i + 1 : i + 11]:
            listed = _LIST_ITEM.sub("", item)
            if listed == item:
                break
            named += references(listed)
    reading.supersedes += named
    return True


def _superseded_by(reading: _Reading, i: int, raw: str, line: str) -> bool:
    """``Superseded by: …`` / ``Replaced by …``: superseded (unless a state was already said),
    and by what (always)."""
    match = _SUPERSEDED_BY.match(line)
    if match is None:
        return False
    reading.superseded_by += references(match.group("refs"))
    if reading.state is None:
        reading.state, reading.evidence = SUPERSEDED, raw[:200]
    return True


def _status_line(reading: _Reading, i: int, raw: str, line: str) -> bool:
    """``Status: Deprecated``, ``**Status:** …``, ``Status – superseded (…)``: the value's first
    word (a line that is a status line but states nothing known is still claimed)."""
    match = _STATUS.match(line)
    if match is None:
        return False
    found = state_of(match.group("value"), reading.vocabulary)
    if found is not None:
        reading.state, reading.evidence = found, raw[:200]
    return True


def _status_heading(reading: _Reading, i: int, raw: str, line: str) -> bool:
    """``## Status`` then the value on the next line (ADR style)."""
    if not _STATUS_HEADING.match(raw) or i + 1 >= len(reading.lines):
        return False
    value = reading.lines[i + 1]
    found = state_of(value, reading.vocabulary)
    if found is not None:
        reading.state, reading.evidence = found, f"{raw} {value}"[:200]
    return True


def _banner(reading: _Reading, i: int, raw: str, line: str) -> bool:
    """A quote or bold banner whose first word is a superseded word, followed by ``:``, ``(``,
    ``by``, ``.``, a dash or nothing (``> **DEPRECATED**: …``, ``> **⚠️ SUPERSEDED BY [435]…**``);
    ``by …`` names the replacement."""
    if not raw.startswith((">", "**", "__", "\u26a0")):
        return False
    banner = _BANNER.match(line)
    if not banner or reading.vocabulary.get(banner.group(1).lower()) != SUPERSEDED:
        return False
    reading.state, reading.evidence = SUPERSEDED, raw[:200]
    if match := re.search(r"\bby\b(.*)$", line, re.I):
        reading.superseded_by += references(match.group(1))
    return True


@dataclass(frozen=True)
class Convention:
    """One way documents state their lifecycle near the top."""

    name: str
    read: Callable[[_Reading, int, str, str], bool]
    """Reads top line ``i`` (raw, and without markup) into the reading; ``True``: the line was
    this convention's, no later one is offered it."""
    while_undecided: bool = False
    """Offered lines only while no state has been said (the first statement of a state wins)."""


CONVENTIONS: tuple[Convention, ...] = (
    Convention("title", _title),
    Convention("supersedes", _supersedes),
    Convention("superseded by", _superseded_by),
    Convention("status line", _status_line, while_undecided=True),
    Convention("status heading", _status_heading, while_undecided=True),
    Convention("banner", _banner, while_undecided=True),
)
"""The conventions, in the order each top line is offered to them. The order matters where two
could claim one line: the first heading is the title (a ``# Status: Deprecated`` heading states
nothing), and a ``Superseded by`` line names its replacement even after a state was said."""


def _title_mark(title: str, vocabulary: Mapping[str, str]) -> tuple[str | None, list[str]]:
    """The state a title's lifecycle mark states (``(superseded)``, ``_(Archived)_``,
    ``[DEPRECATED] …``) and, for ``(superseded by 714)``, what it names."""
    match = _TITLE_MARK.search(title)
    if match is None:
        return None, []
    word = (match.group("lead") or match.group("tail") or "").lower()
    found = vocabulary.get(word)
    if found is None:
        return None, []
    return found, list(references(match.group("by") or ""))


def _as_list(value: object) -> list[object]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


Statements = Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]
"""Path → (``Supersedes`` refs, ``Superseded by`` refs), as each document states them."""


Resolved = Mapping[str, tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]]
"""Path → ((ref, path it supersedes)…, (ref, path it is superseded by)…)."""


def resolve_statements(statements: Statements, paths: Collection[str]) -> Resolved:
    """Path → ((ref, path it supersedes)…, (ref, path it is superseded by)…): each document's
    own statements resolved to files among ``paths`` (unresolvable and self references
    dropped)."""
    names = names_index(paths)
    out: dict[str, tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]] = {}
    for path, (supersedes, superseded_by) in sorted(statements.items()):
        sides = []
        for refs in (supersedes, superseded_by):
            found: dict[str, str] = {}
            for ref in refs:
                target = resolve_reference(ref, path, paths, names)
                if target is not None and target != path:
                    found.setdefault(target, ref)
            sides.append(tuple((ref, target) for target, ref in found.items()))
        if sides[0] or sides[1]:
            out[path] = (sides[0], sides[1])
    return out


def superseded_by_others(resolved: Resolved) -> dict[str, str]:
    """Path → evidence, for every document another one says it supersedes (``Supersedes: B``
    in A; ``Superseded by: A`` in B is already B's own statement). ``resolved``: from
    :func:`resolve_statements`."""
    out: dict[str, str] = {}
    for path, (supersedes, _) in resolved.items():
        for ref, target in supersedes:
            out.setdefault(target, f"superseded by {path} (Supersedes: {ref})")
    return out
