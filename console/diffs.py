"""Diffs as rows a template lays out: side by side, and unified (presentation only).

The texts come from the service (version bodies it let the caller read); this module only lines
them up for display — including the conflict blocks a three-way merge left in a body, which it
reads with the markers ``domain.model`` defines (the service's ``has_conflict_markers``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from domain.model import CONFLICT_MARKERS

START, MIDDLE, END = CONFLICT_MARKERS
BASE = "|||||||"  # diff3's optional base section (``git merge-file --diff3``); not shown


@dataclass(frozen=True)
class SideRow:
    """One row of a side-by-side diff: a line on the left, on the right, or both."""

    kind: str  # equal | replace | delete | insert
    left_no: int | None
    left: str
    right_no: int | None
    right: str


@dataclass(frozen=True)
class UnifiedLine:
    """One line of a unified diff, with its kind for styling."""

    kind: str  # file | hunk | add | del | ctx
    text: str


def side_by_side(old: str, new: str) -> list[SideRow]:
    """``old`` and ``new`` line by line; changed blocks pair their lines up."""
    a, b = old.splitlines(), new.splitlines()
    rows: list[SideRow] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            left = a[i] if i < i2 else None
            right = b[j] if j < j2 else None
            kind = tag if left is not None and right is not None else _one_sided(left)
            rows.append(
                SideRow(
                    kind,
                    i + 1 if left is not None else None,
                    left or "",
                    j + 1 if right is not None else None,
                    right or "",
                )
            )
    return rows


def _one_sided(left: str | None) -> str:
    return "delete" if left is not None else "insert"


def unified(old: str, new: str, old_label: str, new_label: str) -> list[UnifiedLine]:
    """A unified diff (three lines of context), each line tagged."""
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), old_label, new_label, lineterm=""
    )
    return [UnifiedLine(_kind(line), line) for line in lines]


def tagged(diff_text: str) -> list[UnifiedLine]:
    """A unified diff the service wrote (e.g. a baseline diff's entries), each line tagged."""
    return [UnifiedLine(_kind(line), line) for line in diff_text.splitlines()]


def _kind(line: str) -> str:
    if line.startswith(("---", "+++")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "ctx")


def changed(old: str, new: str) -> bool:
    """Whether two bodies differ at all."""
    return old != new


@dataclass(frozen=True)
class ConflictHunk:
    """One conflict block of a body, its two sides side by side (line numbers: the body's)."""

    first: int  # the line of its ``<<<<<<<`` marker
    last: int  # the line of its ``>>>>>>>`` marker
    left_label: str  # what the markers name the sides (``current head``, ``proposal``)
    right_label: str
    rows: list[SideRow]


@dataclass
class _Block:
    first: int
    left_label: str
    part: str = "left"  # left | base | right
    left: list[tuple[int, str]] = field(default_factory=list)
    right: list[tuple[int, str]] = field(default_factory=list)

    def close(self, last: int, end_line: str) -> ConflictHunk:
        rows = []
        for k in range(max(len(self.left), len(self.right))):
            left = self.left[k] if k < len(self.left) else None
            right = self.right[k] if k < len(self.right) else None
            kind = "replace" if left and right else ("delete" if left else "insert")
            rows.append(
                SideRow(
                    kind,
                    left[0] if left else None,
                    left[1] if left else "",
                    right[0] if right else None,
                    right[1] if right else "",
                )
            )
        right_label = _label(end_line, END) or "proposal"
        return ConflictHunk(self.first, last, self.left_label or "current head", right_label, rows)


def _is(line: str, marker: str) -> bool:
    return line == marker or line.startswith(marker + " ")


def _label(line: str, marker: str) -> str:
    return line[len(marker) :].strip()


def conflict_hunks(body: str) -> list[ConflictHunk]:
    """The complete conflict blocks (``<<<<<<<`` … ``=======`` … ``>>>>>>>``) of ``body``, in
    order; a ``<<<<<<<`` inside an open block starts it again, an unfinished block is left out."""
    hunks: list[ConflictHunk] = []
    block: _Block | None = None
    for no, line in enumerate(body.split("\n"), 1):
        if _is(line, START):
            block = _Block(no, _label(line, START))
        elif block is None:
            continue
        elif _is(line, END) and block.part == "right":
            hunks.append(block.close(no, line))
            block = None
        elif _is(line, MIDDLE) and block.part != "right":
            block.part = "right"
        elif _is(line, BASE) and block.part == "left":
            block.part = "base"
        elif block.part != "base":
            (block.left if block.part == "left" else block.right).append((no, line))
    return hunks
