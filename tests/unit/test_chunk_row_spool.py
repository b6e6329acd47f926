"""A rebuild's chunk row fields wait in a temporary file, not in memory (service.indexing.rows)."""

from __future__ import annotations

import pytest

from service.indexing.rows import RowSpool


def test_the_spool_gives_back_every_row_in_order_across_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(RowSpool, "BATCH", 3)
    rows = [
        (f"v{n // 4}#c{n}", f"v{n // 4}", "el", f"c{n}", "A › B\nnewline “quotes”", n, n + 1)
        for n in range(11)
    ]
    spool = RowSpool()
    try:
        for row in rows:
            spool.append(row)
        assert spool._batch != []  # the last batch is still in memory before reading
        assert list(spool) == rows
        assert spool.count == 11
        assert spool.version_ids == {"v0", "v1", "v2"}
    finally:
        spool.close()
    assert spool._file.closed


def test_an_empty_spool_gives_nothing() -> None:
    spool = RowSpool()
    try:
        assert list(spool) == []
        assert spool.count == 0
    finally:
        spool.close()
