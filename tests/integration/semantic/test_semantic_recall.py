"""Semantic recall end to end on a real SQLite home with the real model (the semantic extra):
vocabulary mismatch, trimming before fusion, keyword-only for versions not embedded yet,
erasure reaching the vectors, rebuild from the database (issue #9, item 5)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime import App, build_app
from service.authz import Caller
from service.settings import Settings
from tests.conftest import World, make_world
from tests.read_world import publish, request
from tests.semantic_extra import require_semantic

DOCS = {
    "Remote workspaces": (
        "Engineers write and run their code in remote development workspaces hosted on the "
        "shared Kubernetes cluster; nothing is installed on laptops.\n"
    ),
    "Invoice approvals": "Finance approves supplier invoices above ten thousand euros twice.\n",
    "Kitchen": "The coffee machine in the kitchen is descaled every Friday.\n",
}
SECRET = ("Workspace budget", "Remote development workspaces for engineers cost too much.\n")
MISMATCH = "where do programmers build software these days"  # none of the page's words


@pytest.fixture
def semantic_app(tmp_path: Path) -> Iterator[App]:
    require_semantic()
    app = build_app(Settings(home=tmp_path / "home", semantic="on"), migrate=True)
    yield app
    app.close()


def _world(app: App) -> tuple[World, dict[str, str]]:
    w = make_world(app)
    ids = {title: w.canonical(title, body)[0] for title, body in DOCS.items()}
    for role in ("curator", "publisher"):
        principal = getattr(w, role).principal_id
        w.svc.admin.grant(w.admin, principal, role, w.repo, clearance="restricted")
    ids[SECRET[0]] = w.canonical(*SECRET, classification="restricted")[0]
    publish(w)
    return w, ids


def _titles(response: dict) -> list[str]:
    return [item["title"] for item in response["items"]]


def test_meaning_finds_what_keywords_miss_inside_the_callers_clearance(
    semantic_app: App,
) -> None:
    w, _ = _world(semantic_app)
    svc = w.svc
    assert w.app.semantic is not None
    w.app.semantic.build()
    public = Caller("user:public-reader")
    svc.admin.grant(w.admin, public.principal_id, "reader", w.repo, clearance="public")
    cleared = Caller("user:cleared-reader")
    svc.admin.grant(w.admin, cleared.principal_id, "reader", w.repo, clearance="restricted")

    keyword_only = w.app.reads.run_read(w.reader, _req(w, MISMATCH), semantic=False)
    assert "Remote workspaces" not in _titles(keyword_only)

    hybrid = svc.reading.read_context(w.reader, request(w.repo, MISMATCH, explain=True))
    first = hybrid["items"][0]
    assert first["title"] == "Remote workspaces"
    assert first["why_included"] == "semantic_match"
    assert {"keyword", "semantic"} <= set(first["score_breakdown"]["relevance"])
    semantic = hybrid["trace"]["semantic"]
    assert semantic["model"] == "all-MiniLM-L6-v2"
    assert semantic["embedded_versions"] == semantic["selected_versions"] == 3  # not the secret

    # trimming happens before fusion: the restricted page never appears below its clearance
    assert SECRET[0] not in _titles(svc.reading.read_context(public, request(w.repo, MISMATCH)))
    assert SECRET[0] in _titles(svc.reading.read_context(cleared, request(w.repo, MISMATCH)))


def test_versions_not_embedded_yet_are_ranked_by_keywords_and_explain_says_so(
    semantic_app: App,
) -> None:
    svc = semantic_app.service
    assert semantic_app.semantic is not None
    semantic_app.semantic.upkeep.close()  # no background embedding: no vectors until build()
    w, _ = _world(semantic_app)

    before = svc.reading.read_context(w.reader, request(w.repo, "supplier invoices", explain=True))
    assert _titles(before)[0] == "Invoice approvals"
    assert before["trace"]["semantic"]["embedded_versions"] == 0
    assert all(c["semantic_score"] is None for c in before["trace"]["candidates"])
    assert "keyword" not in before["items"][0]["score_breakdown"]["relevance"]

    assert w.app.semantic.status()["pending"] > 0
    w.app.semantic.build()
    status = w.app.semantic.status()
    assert status["pending"] == 0
    assert status["indexed_versions"] == 4
    after = svc.reading.read_context(w.reader, request(w.repo, "supplier invoices", explain=True))
    assert after["trace"]["semantic"]["embedded_versions"] == 3
    assert _titles(after)[0] == "Invoice approvals"


def test_erasure_removes_the_vectors_of_the_erased_text(semantic_app: App) -> None:
    w, ids = _world(semantic_app)
    svc = w.svc
    assert w.app.semantic is not None
    w.app.semantic.build()
    version = svc.elements.get_element(w.reader, ids["Kitchen"])["version"]["version_id"]
    vectors = w.app.semantic.maintainer.index.path

    def cached() -> int:
        with sqlite3.connect(vectors) as db:
            return int(db.execute("SELECT count(*) FROM cache").fetchone()[0])

    before = cached()
    svc.erasure.erase_version(w.admin, version, "test: personal data")
    w.app.semantic.build()
    assert cached() == before - 1  # the erased text's vector is gone, not just unlinked
    response = svc.reading.read_context(w.reader, request(w.repo, "descaling the coffee machine"))
    kitchen = [i for i in response["items"] if i["element_id"] == ids["Kitchen"]]
    assert all(i["erased"] for i in kitchen)


def test_the_embedding_index_rebuilds_from_the_database(semantic_app: App) -> None:
    w, _ = _world(semantic_app)
    svc = w.svc
    assert w.app.semantic is not None
    w.app.semantic.build()
    built = w.app.semantic.status()
    rebuilt = w.app.semantic.maintainer.rebuild()
    assert rebuilt["versions"] == built["indexed_versions"] == 4
    assert w.app.semantic.status()["consistent"]
    hybrid = svc.reading.read_context(w.reader, request(w.repo, MISMATCH))
    assert _titles(hybrid)[0] == "Remote workspaces"


def _req(w: World, query: str):  # type: ignore[no-untyped-def]
    from service.reading.request import ReadRequest

    return ReadRequest.model_validate(request(w.repo, query))


def test_closing_the_app_stops_background_embedding_and_keeps_its_work(tmp_path: Path) -> None:
    require_semantic()
    home = tmp_path / "home"
    app = build_app(Settings(home=home, semantic="on"), migrate=True)
    w = make_world(app)
    for n in range(30):  # each commit pokes the background thread
        w.canonical(f"Page {n}", f"Section {n} of a long manual about subject {n}.\n" * 20)
    semantic = app.semantic
    assert semantic is not None
    app.close()  # while it may still be embedding
    thread = semantic.upkeep._thread
    assert thread is None or not thread.is_alive()

    again = build_app(Settings(home=home, semantic="on"))
    try:
        assert again.semantic is not None
        again.semantic.build()  # goes on from what was kept
        assert again.semantic.status()["indexed_versions"] == 30
    finally:
        again.close()
