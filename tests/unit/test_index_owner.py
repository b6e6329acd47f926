"""``owner.json``: an index directory belongs to one database and one live node (issue 31 §3);
real files in a temporary directory. The two-process case is tests/e2e/test_serve_index_owner.py."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from projection.index_owner import LEASE, DirectoryTaken, Owner, claim, read_owner

NODE_A = Owner(database="postgresql:1/16386", node="node-a")


def test_a_node_claims_a_new_directory_and_renews_its_own_claim(tmp_path: Path) -> None:
    claim(tmp_path / "index", NODE_A, now=1000.0)
    claim(tmp_path / "index", NODE_A, now=1005.0)  # the same node: another process, a renewal
    found = read_owner(tmp_path / "index")
    assert found is not None
    assert (found["node"], found["heartbeat"]) == ("node-a", 1005.0)
    assert found["database"] == NODE_A.database


def test_a_directory_of_another_database_is_refused_however_old_its_claim(tmp_path: Path) -> None:
    claim(tmp_path, NODE_A, now=1000.0)
    other = Owner(database="postgresql:2/16386", node="node-a")
    with pytest.raises(DirectoryTaken, match="index of another database"):
        claim(tmp_path, other, now=1000.0 + 100 * LEASE)
    assert json.loads((tmp_path / "owner.json").read_text())["database"] == NODE_A.database


def test_another_live_node_is_refused_and_a_silent_one_is_taken_over(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    claim(tmp_path, NODE_A, now=1000.0)
    node_b = Owner(database=NODE_A.database, node="node-b")
    with pytest.raises(DirectoryTaken, match="kept by another node, node-a"):
        claim(tmp_path, node_b, now=1000.0 + LEASE - 1)
    with caplog.at_level(logging.WARNING, logger="ameide.index"):
        claim(tmp_path, node_b, now=1000.0 + LEASE + 1)
    assert "node node-b takes it over" in caplog.text
    assert (read_owner(tmp_path) or {})["node"] == "node-b"
