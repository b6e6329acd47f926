"""Semantic recall is what a default build gives (its packages are main dependencies), and
``AMEIDE_SEMANTIC=off`` gives keyword-only reads (issue 32 §2). tests/conftest.py switches it off
for the other tests; these two set it as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest

from projection.semantic import encoder
from runtime import build_app
from service.settings import Settings
from tests.conftest import make_world
from tests.read_world import publish, request

PAGE = (
    "Remote workspaces",
    "Engineers write and run their code in remote development workspaces hosted on the shared "
    "Kubernetes cluster; nothing is installed on laptops.\n",
)
OTHER = ("Kitchen", "The coffee machine in the kitchen is descaled every Friday.\n")
MISMATCH = "where do programmers build software these days"  # none of the page's words


def _read(settings: Settings, explain: bool = True) -> tuple[dict, bool]:
    app = build_app(settings, migrate=True)
    try:
        w = make_world(app)
        for title, body in (PAGE, OTHER):
            w.canonical(title, body)
        publish(w)
        if app.semantic is not None:
            app.semantic.build()
        return w.svc.reading.read_context(w.reader, request(w.repo, MISMATCH, explain=explain)), (
            app.semantic is not None
        )
    finally:
        app.close()


def test_a_default_build_reads_hybrid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMEIDE_SEMANTIC", raising=False)
    assert encoder.available(), "the embedding model is a main dependency: reinstall (make dev)"
    settings = Settings(home=tmp_path / "home")
    assert settings.semantic == "auto"
    response, semantic_on = _read(settings)
    assert semantic_on
    assert (settings.vectors_dir / encoder.VERIFIED_FILE).is_file()  # the weights were verified
    semantic = response["trace"]["semantic"]
    assert (semantic["model"], semantic["embedded_versions"]) == ("all-MiniLM-L6-v2", 2)
    first = response["items"][0]
    assert (first["title"], first["why_included"]) == ("Remote workspaces", "semantic_match")
    assert "semantic" in first["score_breakdown"]["relevance"]


def test_semantic_off_gives_keyword_only_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AMEIDE_SEMANTIC", "off")
    settings = Settings(home=tmp_path / "home")
    response, semantic_on = _read(settings)
    assert not semantic_on
    assert response["trace"]["semantic"] is None
    assert all(c["semantic_score"] is None for c in response["trace"]["candidates"])
    assert "Remote workspaces" not in [item["title"] for item in response["items"]]
    assert not settings.vectors_dir.exists()  # nothing embedded, no model loaded
