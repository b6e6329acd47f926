"""BM25 statistics never depend on documents the caller may not read (issue #16, item 6).

Document frequencies and average lengths used to come from the whole index: a caller's own
document scored 2.2071, then 1.9091 after one restricted document elsewhere held the query word,
so a caller could count forbidden documents containing a word. They now come from the set the
caller may read and asked to search, so adding forbidden documents changes neither the scores
nor the order of anything a caller gets back.
"""

from __future__ import annotations

from typing import Any

from runtime import App
from tests.conftest import World, make_world
from tests.read_world import add_evidence, request

QUERY = "deploy rollback canary"


def _seen(w: World) -> list[tuple[Any, ...]]:
    out = w.svc.reading.read_context(w.reader, request(w.repo, QUERY, explain=True))
    return [
        (item["element_id"], item["version_id"], item["score"], repr(item["score_breakdown"]))
        for item in out["items"]
    ] + [("trace", repr(out["trace"].get("recall")))]


def test_forbidden_documents_change_neither_scores_nor_order(world: World, sqlite_app: App) -> None:
    w = world
    add_evidence(w.app, w.repo, "deploy.md", "# Deploy\n\nDeploy with a canary, then watch.\n")
    add_evidence(
        w.app, w.repo, "rollback.md", "# Rollback\n\nRollback when the canary fails a check.\n"
    )
    add_evidence(w.app, w.repo, "notes.md", "# Notes\n\nA deploy note about rollback timing.\n")
    before = _seen(w)
    assert len(before) > 2

    # above the reader's clearance, in the same repository
    for n in range(3):
        add_evidence(
            w.app, w.repo, f"secret-{n}.md",
            "# Restricted\n\n" + "deploy rollback canary " * (5 + n) + "\n",
            classification="restricted",
        )  # fmt: skip
    # another tenant's repository, which the reader cannot read at all
    other = make_world(sqlite_app)
    for n in range(4):
        add_evidence(
            other.app, other.repo, f"theirs-{n}.md",
            "# Theirs\n\n" + "deploy canary " * (2 + n) + "rollback\n",
        )  # fmt: skip
    assert _seen(w) == before
