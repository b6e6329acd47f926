"""Diffs as rows a template lays out: side by side, and unified (presentation only).

The texts come from the service (version bodies it let the caller read); this module only lines
them up for display.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


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
