"""Audit history as a file for an auditor (the console's export and ``ameide audit export``):
CSV with the payload as JSON, or JSON; oldest first, like the chain. CSV cells are made safe
for spreadsheets (OWASP CSV injection)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from typing import Any

CSV_COLUMNS = (
    "chain_seq", "occurred_at", "event_type", "actor", "on_behalf_of", "purpose", "element_id",
    "version_id", "proposal_id", "baseline_id", "payload", "hash",
)  # fmt: skip
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP, CSV injection)."""
EXPORT_FORMATS = ("csv", "json")


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell no spreadsheet runs: text starting with ``= + - @``, a tab or a
    carriage return gets a single quote before it (a purpose is any text the caller sent, e.g.
    ``X-Ameide-Purpose: =cmd|' /C calc'!A0``). Numbers and empty cells stay as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def events_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """Audit events as CSV: a header of :data:`CSV_COLUMNS`, one row each, payload as JSON."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        writer.writerow(
            [
                csv_cell(json.dumps(r[c], sort_keys=True) if c == "payload" else r.get(c))
                for c in CSV_COLUMNS
            ]
        )
    return out.getvalue()


def events_json(rows: Iterable[Mapping[str, Any]]) -> str:
    """Audit events as one JSON array (keys sorted: the same file from any surface)."""
    return json.dumps(list(rows), indent=2, ensure_ascii=False, default=str, sort_keys=True) + "\n"
