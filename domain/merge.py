"""Three-way merge and unified diffs of version bodies."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import merge3


@dataclass(frozen=True)
class MergeResult:
    """A merged body and whether it carries conflict markers."""

    body: str
    has_conflicts: bool


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) if text else []


def three_way_merge(base: str, current: str, proposed: str) -> MergeResult:
    """Merge ``proposed`` (written against ``base``) onto ``current`` with diff3 semantics.

    Overlapping edits produce standard conflict markers (``<<<<<<< current head`` …).
    """
    # A trailing newline on every side keeps the last line mergeable as a whole line.
    sides = [s if s.endswith("\n") else s + "\n" for s in (base, current, proposed)]
    m = merge3.Merge3(_lines(sides[0]), _lines(sides[1]), _lines(sides[2]))
    conflicted = any(region[0] == "conflict" for region in m.merge_regions())
    merged = "".join(m.merge_lines(name_a="current head", name_b="proposal", name_base="base"))
    if not proposed.endswith("\n") and merged.endswith("\n"):
        merged = merged[:-1]
    return MergeResult(merged, conflicted)


def unified_diff(old: str, new: str, old_label: str, new_label: str) -> str:
    """A unified diff of two bodies ('' when equal)."""
    return "".join(
        difflib.unified_diff(
            _lines(old if old.endswith("\n") or not old else old + "\n"),
            _lines(new if new.endswith("\n") or not new else new + "\n"),
            fromfile=old_label,
            tofile=new_label,
        )
    )


@dataclass(frozen=True)
class PinChange:
    """How one element differs between two baselines."""

    element_id: str
    old_version_id: str | None
    new_version_id: str | None


@dataclass(frozen=True)
class PinDiff:
    """Versions added, changed and removed between two pin sets."""

    added: list[PinChange]
    changed: list[PinChange]
    removed: list[PinChange]


def diff_pins(old: dict[str, str], new: dict[str, str]) -> PinDiff:
    """Compare two baselines' pins, in element id order."""
    added = [PinChange(e, None, new[e]) for e in sorted(new.keys() - old.keys())]
    removed = [PinChange(e, old[e], None) for e in sorted(old.keys() - new.keys())]
    changed = [
        PinChange(e, old[e], new[e]) for e in sorted(old.keys() & new.keys()) if old[e] != new[e]
    ]
    return PinDiff(added, changed, removed)
