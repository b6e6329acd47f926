"""Checking against a stored read context: citation verdicts and replay differences (pure).

A stored context is the JSON response of read_context. ``verify`` tells, per citation an agent
made, whether it points into what that context returned: the same version (another version of
the same element is *not* good enough) and, when it names an excerpt, a span inside one of the
returned excerpts of that version. ``differences`` compares two responses item by item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

IN_CONTEXT = "in_context"
WITHIN_EXCERPT = "within_returned_excerpt"
OTHER_VERSION = "other_version_of_element"
NOT_IN_CONTEXT = "not_in_context"
EXCERPT_NOT_IN_CONTEXT = "excerpt_not_in_context"
MISMATCHED = "mismatched_ids"
MALFORMED = "malformed"


def verify(items: Sequence[Mapping[str, Any]], citations: Sequence[Any]) -> list[dict[str, Any]]:
    """One verdict ``{citation, valid, reason}`` per citation, in order."""
    by_version: dict[str, Mapping[str, Any]] = {}
    elements: set[str] = set()
    for item in items:
        by_version[str(item["version_id"])] = item
        elements.add(str(item["element_id"]))
    return [_verdict(c, by_version, elements) for c in citations]


def _verdict(
    citation: Any, by_version: Mapping[str, Mapping[str, Any]], elements: set[str]
) -> dict[str, Any]:
    reason = _reason(citation, by_version, elements)
    valid = reason in (IN_CONTEXT, WITHIN_EXCERPT)
    return {"citation": citation, "valid": valid, "reason": reason}


def _reason(citation: Any, by_version: Mapping[str, Mapping[str, Any]], elements: set[str]) -> str:
    if not isinstance(citation, Mapping) or not isinstance(citation.get("version_id"), str):
        return MALFORMED
    item = by_version.get(citation["version_id"])
    if item is None:
        return OTHER_VERSION if citation.get("element_id") in elements else NOT_IN_CONTEXT
    for key in ("element_id", "repository_id"):
        if key in citation and citation[key] != item[key]:
            return MISMATCHED
    excerpt = citation.get("excerpt")
    if excerpt is None:
        return IN_CONTEXT
    if not _is_span(excerpt):
        return MALFORMED
    returned = [c["excerpt"] for c in item.get("citations", ())]
    if any(_same(excerpt, r) for r in returned):
        return IN_CONTEXT
    if any(_inside(excerpt, r) for r in returned):
        return WITHIN_EXCERPT
    return EXCERPT_NOT_IN_CONTEXT


def _is_span(excerpt: Any) -> bool:
    if not isinstance(excerpt, Mapping):
        return False
    start, end = excerpt.get("start"), excerpt.get("end")
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
        return False
    return 0 <= start < end and isinstance(excerpt.get("chunk_key", ""), str)


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("chunk_key", "start", "end"))


def _inside(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    key_ok = "chunk_key" not in a or a["chunk_key"] == b["chunk_key"]
    return bool(key_ok and b["start"] <= a["start"] and a["end"] <= b["end"])


def differences(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """What changed between two item lists, per element: ``added``, ``removed``,
    ``version_changed``, ``content_changed`` (same version, other excerpt) or ``moved``."""
    old = {str(i["element_id"]): (rank, i) for rank, i in enumerate(before, start=1)}
    new = {str(i["element_id"]): (rank, i) for rank, i in enumerate(after, start=1)}
    changes = []
    for element_id in [*old, *(e for e in new if e not in old)]:
        change = _change(element_id, old.get(element_id), new.get(element_id))
        if change is not None:
            changes.append(change)
    return changes


def _change(
    element_id: str,
    old: tuple[int, Mapping[str, Any]] | None,
    new: tuple[int, Mapping[str, Any]] | None,
) -> dict[str, Any] | None:
    out: dict[str, Any] = {"element_id": element_id}
    if old is not None:
        out.update(before_version_id=old[1]["version_id"], before_rank=old[0])
    if new is not None:
        out.update(after_version_id=new[1]["version_id"], after_rank=new[0])
    if new is None:
        return {**out, "change": "removed"}
    if old is None:
        return {**out, "change": "added"}
    if old[1]["version_id"] != new[1]["version_id"]:
        return {**out, "change": "version_changed"}
    if old[1]["content"] != new[1]["content"] or old[1]["citations"] != new[1]["citations"]:
        return {**out, "change": "content_changed"}
    if old[0] != new[0]:
        return {**out, "change": "moved"}
    return None
