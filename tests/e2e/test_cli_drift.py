"""``ameide drift list|review|propose`` and ``ameide gaps`` through the CLI, on the home and over
``--server`` (REST): the flow of docs/drift.md on a real git backlog."""

from __future__ import annotations

import pytest

from tests.integration.ingest.conftest import GitRepo

INGESTOR = "service:ingest"
LOW = "agent:low-clearance"


@pytest.fixture
def drifted(repo, tmp_path, mode):
    """A published public page citing version 1 of an ingested evidence file, which then
    changed in git and was ingested again. Returns (page, evidence, pinned version)."""
    cli = repo.cli
    cli.ok("grant", INGESTOR, "ingestor", "--repo", repo.key)
    cli.ok("grant", LOW, "agent", "--repo", repo.key, "--clearance", "public")
    git = GitRepo(tmp_path / "backlog")
    git.write("testing.md", "# Testing guide\n\nRun phase 0 with make test.\n")
    git.commit("guide")
    cli.ok("ingest", "backlog", str(git.root), "--repo", repo.key, as_=INGESTOR)
    listed = cli.ok("element", "list", "--repo", repo.key, as_=repo.curator)["elements"]
    (evidence,) = [e["element_id"] for e in listed if e["source_kind"] == "INGESTED_EVIDENCE"]
    pinned = cli.ok("element", "show", evidence, as_=repo.curator)["version"]["version_id"]
    body = tmp_path / "page.md"
    body.write_text("# Testing SOP\n\nFollow the testing guide.\n", encoding="utf-8")
    page = cli.ok(
        "element", "create", "--repo", repo.key, "--title", "Testing SOP", "--body-file",
        str(body), "--classification", "public", as_=repo.curator,
    )["element"]["element_id"]  # fmt: skip
    cli.ok(
        "relationship", "add", "--source", page, "--target", evidence, "--kind", "REFERENCE",
        "--type-key", "ameide:cites", "--target-version", pinned, as_=repo.curator,
    )  # fmt: skip
    baseline = cli.ok("baseline", "create", "--repo", repo.key, as_=repo.publisher)
    cli.ok("promote", baseline["baseline_id"], "--repo", repo.key, as_=repo.publisher)
    assert cli.ok("drift", "list", "--repo", repo.key, as_=repo.curator)["entries"] == []
    git.write("testing.md", "# Testing guide\n\nRun phase 0 and 1 with make test-all.\n")
    git.commit("guide v2")
    cli.ok("ingest", "backlog", str(git.root), "--repo", repo.key, as_=INGESTOR)
    return page, evidence, pinned


def test_drift_lists_the_page_with_the_evidence_diff_and_hides_it_from_who_cannot_read_it(
    repo, drifted
):
    page, evidence, pinned = drifted
    cli = repo.cli
    (entry,) = cli.ok("drift", "list", "--repo", repo.key, as_=repo.curator)["entries"]
    assert (entry["curated_element_id"], entry["evidence_element_id"]) == (page, evidence)
    assert entry["pinned"]["version_id"] == pinned
    assert entry["current"]["version_id"] != pinned
    assert "+Run phase 0 and 1 with make test-all." in entry["diff"]
    assert cli.ok("drift", "list", "--repo", repo.key, as_=LOW)["entries"] == []
    shown = cli("drift", "list", "--repo", repo.key, "--diff", as_=repo.curator)
    assert shown.exit_code == 0, shown.stderr
    assert page in shown.stdout
    assert "-Run phase 0 with make test." in shown.stdout
    hidden = cli("drift", "list", "--repo", repo.key, as_=LOW)
    assert "no drifted pages" in hidden.stdout
    assert evidence not in hidden.stdout


def test_a_drift_is_proposed_from_then_reviewed_away(repo, drifted):
    page, evidence, _ = drifted
    cli = repo.cli
    proposal = cli.ok("drift", "propose", page, evidence, as_=repo.agent)
    (entry,) = cli.ok("drift", "list", "--repo", repo.key, as_=repo.curator)["entries"]
    assert proposal["target_element_id"] == page
    assert entry["current"]["version_id"] in proposal["summary"]
    denied = cli("drift", "review", page, evidence, "--json", as_=repo.agent)
    assert denied.exit_code == 4, denied.stdout
    reviewed = cli.ok(
        "drift", "review", page, evidence, "--up-to", entry["current"]["version_id"],
        "--note", "still right", as_=repo.curator,
    )  # fmt: skip
    assert reviewed["evidence_version_id"] == entry["current"]["version_id"]
    assert cli.ok("drift", "list", "--repo", repo.key, as_=repo.curator)["entries"] == []
    gaps = cli.ok("gaps", "--repo", repo.key, "--topic", "testing", as_=repo.curator)
    assert (gaps["curated"]["live"], gaps["evidence"]["live"], gaps["drifted"]) == (1, 1, 0)
    text = cli("gaps", "--repo", repo.key, as_=LOW)
    assert text.exit_code == 0, text.stderr
    assert "0 live, 0 retired" in text.stdout  # the evidence LOW may not read is not counted
