"""Compliance erasure beyond the version itself (docs/product.md §8): what a stored read
context keeps.

A stored read context (the response ``read_context`` returned, kept for ``verify_citations`` and
``replay``) is a record of what was shown, so erasing a version must take its text out of every
stored context that showed it. What stays is what the record needs to remain checkable: the
item's ids, version id, title, score and its citations (version id, chunk key and character
offsets — never text), so ``verify_citations`` still accepts exactly the citations the context
returned. The item's ``content`` and its entry in the ``context_block`` become the same note a
fresh read shows for an erased version, and the item is flagged ``erased``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from domain.model import ERASED_TITLE

ERASED_QUERY = "[erased]"
"""A stored context's query once content it found was erased (the query is often as telling
as what it found); such a context cannot be replayed."""


def erased_note(erased_at: datetime) -> str:
    """What a read shows instead of an erased version's content."""
    at = erased_at.isoformat().replace("+00:00", "Z")
    return f"[erased: this version's content was erased at {at}]"


def redact_stored_context(
    response: Mapping[str, Any], notes: Mapping[str, str]
) -> dict[str, Any] | None:
    """``response`` with the content of every item whose version is a key of ``notes`` replaced
    by that note (in the item and in the ``context_block``); None when nothing changes."""
    items = response.get("items") or []
    if not any(_needs_redaction(item, notes) for item in items):
        return None
    out = copy.deepcopy(dict(response))
    block = str(out.get("context_block") or "")
    cursor = 0
    for item in out["items"]:
        version_id, old = str(item["version_id"]), str(item.get("content") or "")
        new = notes.get(version_id, old) if _needs_redaction(item, notes) else old
        if version_id in notes and item.get("title") not in (None, ERASED_TITLE):
            # the entry line comes before the content: rewrite it first, so ``cursor`` (the end
            # of what is already done) stays right for this item's content and the next ones
            block = _erase_title(block, version_id, cursor)
            item["title"] = ERASED_TITLE
        start = _content_start(block, version_id, cursor)
        if start is not None and block.startswith(old, start):
            block = block[:start] + new + block[start + len(old) :]
            cursor = start + len(new)
        elif old and new != old:
            # The block is not laid out as expected: never keep the text, whatever the layout.
            block = block.replace(old, new)
        if new != old:
            item.update(content=new, erased=True)
    out["context_block"] = block
    return out


def _erase_title(block: str, version_id: str, cursor: int) -> str:
    """The block with the title in the item's entry line (``[n] title (kind, version_id)``,
    found by its version id) replaced by the erased marker."""
    tail = f", {version_id})\n"
    end = block.find(tail, cursor)
    if end < 0:
        return block
    start = block.rfind("\n", 0, end) + 1
    line = block[start:end]
    marker = line.find("] ")
    opening = line.rfind(" (")
    if marker < 0 or opening < marker + 1:
        return block  # not laid out as an entry line: the title is not in it
    return block[: start + marker + 2] + ERASED_TITLE + block[start + opening :]


def _needs_redaction(item: Mapping[str, Any], notes: Mapping[str, str]) -> bool:
    note = notes.get(str(item.get("version_id")))
    # An item that was erased when it was read shows a note already, never text.
    return note is not None and not item.get("erased") and item.get("content") != note


def _content_start(block: str, version_id: str, cursor: int) -> int | None:
    """Where an item's content starts in the block: after its entry line, which ends with
    ``(source_kind, version_id)`` (see ``projection.packaging.header``)."""
    tail = f", {version_id})\n"
    at = block.find(tail, cursor)
    return None if at < 0 else at + len(tail)
