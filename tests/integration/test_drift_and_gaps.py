"""Drift and knowledge gaps (docs/drift.md) on a real git repository synced by ingest: a published
page citing an evidence version drifts when the file changes in git and is ingested again; the
entry carries the evidence diff and since when; a reader who may read the page but not the
evidence sees no entry (and no count); a review settles it until the evidence moves again; a
proposal opens from it; the gaps report counts what the caller may read."""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.errors import Conflict, NotFound, PermissionDenied
from runtime import App
from tests.drift_world import V2, V3, Scene
from tests.read_world import request


@pytest.fixture
def scene(any_app: App, tmp_path: Path) -> Scene:
    return Scene(any_app, tmp_path)


def test_a_page_citing_evidence_that_changed_in_git_is_listed_with_the_diff(scene: Scene):
    w = scene.w
    assert scene.drift() == []  # the pinned version is the head: nothing moved
    scene.sync(V2)
    current = w.svc.elements.get_element(w.curator, scene.evidence)["version"]
    [entry] = scene.drift()
    assert (entry.curated_element_id, entry.evidence_element_id) == (scene.page, scene.evidence)
    assert entry.curated_version_id == entry.published_version_id == scene.page_version
    assert entry.relationship_id == scene.relationship["relationship_id"]
    assert entry.pinned.version_id == scene.pinned["version_id"]
    assert entry.current.version_id == current["version_id"]
    assert entry.pinned.commit_sha != entry.current.commit_sha
    assert entry.current.path == "testing.md"
    assert entry.versions_behind == 1
    assert entry.drifted_since == current["recorded_at"]
    assert "-Run phase 0 with make test." in entry.diff
    assert "+Run phase 0 and phase 1 with make test-all." in entry.diff
    assert entry.evidence_retired_at is None
    # the reader sees the same list; REST/MCP/CLI render this very model
    assert [e.evidence_element_id for e in scene.drift(w.reader)] == [scene.evidence]


def test_a_reader_who_cannot_read_the_evidence_sees_no_drift_and_no_count(scene: Scene):
    w = scene.w
    scene.sync(V2)
    assert w.svc.elements.get_element(scene.low, scene.page)["element"]["element_id"] == scene.page
    with pytest.raises(NotFound):
        w.svc.elements.get_element(scene.low, scene.evidence)
    assert scene.drift(scene.low) == []
    report = w.svc.gaps.gaps(scene.low, w.repo)
    assert (report.drifted, report.evidence.total, report.curated.total) == (0, 0, 1)
    with pytest.raises(NotFound) as hidden:
        w.svc.drift.drift_propose(scene.low, scene.page, scene.evidence)
    with pytest.raises(NotFound) as missing:
        w.svc.drift.drift_propose(scene.low, scene.page, "el_" + "0" * 24)
    assert str(hidden.value).replace(scene.evidence, "X") == str(missing.value).replace(
        "el_" + "0" * 24, "X"
    )
    # a stranger cannot tell the repository exists
    with pytest.raises(NotFound):
        w.svc.drift.drift_list(w.stranger, w.repo)


def test_a_review_settles_the_drift_until_the_evidence_moves_again(scene: Scene):
    w = scene.w
    scene.sync(V2)
    [entry] = scene.drift()
    with pytest.raises(PermissionDenied):
        w.svc.drift.drift_review(w.reader, scene.page, scene.evidence)
    with pytest.raises(Conflict):
        w.svc.drift.drift_review(
            w.curator, scene.page, scene.evidence, evidence_version_id=scene.pinned["version_id"]
        )
    review = w.svc.drift.drift_review(
        w.curator, scene.page, scene.evidence,
        evidence_version_id=entry.current.version_id, note="wording still holds",
    )  # fmt: skip
    assert review.evidence_version_id == entry.current.version_id
    assert review.reviewed_by == w.curator.principal_id
    assert scene.drift() == []
    with pytest.raises(NotFound):  # nothing left to review
        w.svc.drift.drift_review(w.curator, scene.page, scene.evidence)
    events = w.svc.history.history(w.auditor, w.repo, element_id=scene.page)
    [reviewed] = [e for e in events if e["event_type"] == "drift.reviewed"]
    assert reviewed["actor"] == w.curator.principal_id
    assert reviewed["payload"]["evidence_version_id"] == entry.current.version_id
    # who reads the page but not the evidence does not learn, from history, that it drifted
    seen = w.svc.history.history(scene.low, w.repo, element_id=scene.page)
    assert seen
    assert "drift.reviewed" not in {e["event_type"] for e in seen}

    scene.sync(V3)
    [again] = scene.drift()
    assert again.pinned.version_id == scene.pinned["version_id"]
    assert again.versions_behind == 2
    assert again.drifted_since == entry.drifted_since  # since the first move after the pin
    assert "+Run every phase with make ci." in again.diff


def test_a_proposal_opens_from_a_drift_citing_the_new_evidence_version(scene: Scene):
    w = scene.w
    scene.sync(V2)
    [entry] = scene.drift()
    body = "# Testing SOP\n\nRun phase 0 and phase 1 with make test-all.\n"
    proposal = w.svc.drift.drift_propose(w.agent, scene.page, scene.evidence, body=body)
    assert proposal["status"] == "OPEN"
    assert proposal["target_element_id"] == scene.page
    assert proposal["target_version_id"] == scene.page_version
    assert entry.current.version_id in proposal["summary"]
    assert proposal["metadata"]["drift"]["current_version_id"] == entry.current.version_id
    assert w.svc.curation.proposal_show(w.curator, proposal["proposal_id"])["body"] == body


def test_retired_evidence_drifts_since_its_retirement(scene: Scene):
    w = scene.w
    scene.git.remove("testing.md")
    scene.git.commit("drop testing.md")
    w.svc.ingest.ingest_backlog(scene.ingestor, str(scene.git.root), w.repo)
    [entry] = scene.drift()
    assert entry.evidence_retired_at is not None
    assert entry.versions_behind == 0
    assert entry.diff == ""
    assert entry.drifted_since == entry.evidence_retired_at


def test_gaps_counts_curated_and_evidence_and_questions_without_a_curated_answer(scene: Scene):
    w = scene.w
    scene.sync(V2)
    asked = w.svc.reading.read_context(
        w.agent, request(w.repo, "which phase", include_evidence=True)
    )
    assert asked["items"]
    assert all(i["source_kind"] != "CANONICAL" for i in asked["items"])
    report = w.svc.gaps.gaps(w.agent, w.repo, topic="phase")
    assert report.topic == "phase"
    assert (report.curated.total, report.evidence.total, report.evidence.live) == (0, 1, 1)
    assert report.evidence.superseded == 0
    assert report.evidence.superseded_share == 0.0
    assert report.evidence.newest_source_time is not None
    assert [q.context_id for q in report.unanswered] == [asked["context_id"]]
    whole = w.svc.gaps.gaps(w.agent, w.repo)
    assert (whole.curated.total, whole.evidence.total, whole.drifted) == (1, 1, 1)
    # the reader's own questions only: the agent's are not the reader's to see
    assert w.svc.gaps.gaps(w.reader, w.repo).unanswered == []
    assert [q.query for q in w.svc.gaps.gaps(w.auditor, w.repo).unanswered] == ["which phase"]
    assert w.svc.gaps.gaps(w.agent, w.repo, topic="nothing-mentions-this").evidence.total == 0


def test_explain_flags_a_curated_item_whose_evidence_moved_for_who_may_read_it(scene: Scene):
    w = scene.w
    scene.sync(V2)
    asked = request(w.repo, element_ids=[scene.page], explain=True)
    [item] = w.svc.reading.read_context(w.agent, asked)["items"]
    [flag] = item["evidence_drift"]
    assert flag["evidence_element_id"] == scene.evidence
    assert flag["pinned_version_id"] == scene.pinned["version_id"]
    assert flag["evidence_retired"] is False
    [plain] = w.svc.reading.read_context(w.agent, {**asked, "explain": False})["items"]
    assert "evidence_drift" not in plain
    [hedged_not] = w.svc.reading.read_context(scene.low, asked)["items"]  # reads the page only
    assert hedged_not["element_id"] == scene.page
    assert "evidence_drift" not in hedged_not
