"""Lifecycle derived at ingest from the documents themselves, on a real git repository, and a
status question ranking the replacement first (issue #9, item 2)."""

from __future__ import annotations

from pathlib import Path

from ingest.plan import element_id_for
from runtime import App
from service.authz import Caller
from tests.conftest import World, make_world
from tests.integration.ingest.conftest import GitRepo
from tests.read_world import request

DOCS = {
    "435-remote-dev.md": (
        "# 435 Remote development\n\n**Status:** Deprecated (historical; superseded by 650)\n"
        "**Supersedes:** 432 (DevContainer modes), parts of 367 (bootstrap)\n\n"
        "Remote development workspaces run on the shared cluster; developers connect with "
        "telepresence to the remote development workspace.\n"
    ),
    "432-devcontainer-modes.md": (
        "# 432 DevContainer modes\n\nDevelopment workspaces run locally in a devcontainer "
        "with offline and online modes.\n"
    ),
    "650-agentic-coding.md": (
        "# 650 Agentic coding overview\n\n**Status:** Active\n\n"
        "Development workspaces are Coder workspaces on the internal cluster.\n"
    ),
    "adr-0003-storage.md": (
        "# ADR 3: storage\n\n## Status\n\nSuperseded by [ADR-0005](adr-0005-storage.md)\n\n"
        "We store blobs on local disks.\n"
    ),
    "adr-0005-storage.md": "# ADR 5: storage\n\n## Status\n\nAccepted\n\nWe store blobs in S3.\n",
    "old-runbook.md": "---\nstatus: archived\n---\n# Runbook\n\nRestart the pods by hand.\n",
    "banner.md": "# Tests\n\n> **DEPRECATED**: superseded by the unified test plan.\n\nRun make.\n",
    "334-logging.md": "# Logging blueprint (superseded)\n\nShip logs to Loki.\n",
    "334-logging-v2.md": "# Logging blueprint v2\n\nShip logs to Loki per tenant.\n",
    "334-logging-v3.md": (
        "# Logging contract v3\n\nThis document is **authoritative** and supersedes:\n"
        "- [v2](334-logging-v2.md)\n\nShip logs and traces through the collector.\n"
    ),
}


def _ingested(app: App, tmp_path: Path) -> tuple[World, Caller, GitRepo, dict]:
    """DOCS committed to a real git repository and ingested by an ingestor; the run report."""
    w = make_world(app)
    ingestor = Caller(f"service:lc-{w.repo.split('/')[0]}")
    w.svc.admin.grant(w.admin, ingestor.principal_id, "ingestor", w.repo)
    git = GitRepo(tmp_path / "backlog")
    for path, text in DOCS.items():
        git.write(path, text)
    git.commit("backlog")
    return w, ingestor, git, w.svc.ingest.ingest_backlog(ingestor, str(git.root), w.repo)


def test_lifecycle_comes_from_body_conventions_and_front_matter(
    sqlite_app: App, tmp_path: Path
) -> None:
    w, _, git, _ = _ingested(sqlite_app, tmp_path)

    def state(path: str) -> dict:
        el = element_id_for(w.repo, str(git.root.resolve()), path)
        return w.svc.elements.get_element(w.reader, el)["version"]["metadata"].get("lifecycle", {})

    assert state("435-remote-dev.md")["state"] == "superseded"
    assert "Deprecated" in state("435-remote-dev.md")["evidence"]
    assert state("432-devcontainer-modes.md")["state"] == "superseded"  # "Supersedes: 432"
    assert "435-remote-dev.md" in state("432-devcontainer-modes.md")["evidence"]
    assert state("650-agentic-coding.md")["state"] == "current"
    assert state("adr-0003-storage.md")["state"] == "superseded"
    assert state("adr-0005-storage.md")["state"] == "current"
    assert state("old-runbook.md")["state"] == "superseded"
    assert state("banner.md")["state"] == "superseded"
    assert state("334-logging.md")["evidence"] == "# Logging blueprint (superseded)"  # its title
    assert state("334-logging-v2.md")["state"] == "superseded"  # "This document … supersedes:"
    assert "334-logging-v3.md" in state("334-logging-v2.md")["evidence"]

    # a status question shows the current page first, the replaced ones below it
    out = w.svc.reading.read_context(
        w.reader, request(w.repo, "what is the current development workspace setup?", explain=True)
    )
    paths = [i["provenance"]["path"] for i in out["items"]]
    assert paths[0] == "650-agentic-coding.md", paths
    demoted = next(i for i in out["items"] if i["provenance"]["path"] == "435-remote-dev.md")
    assert demoted["score_breakdown"]["superseded"]["weight"] == -0.85
    # every read item says its lifecycle, with the evidence and when the source changed
    assert demoted["lifecycle"]["state"] == "superseded"
    assert "Deprecated" in demoted["lifecycle"]["evidence"]
    assert demoted["lifecycle"]["source_time"]
    assert out["items"][0]["lifecycle"]["state"] == "current"
    # any other question demotes gently
    why = w.svc.reading.read_context(
        w.reader, request(w.repo, "why remote development workspaces on a cluster", explain=True)
    )
    gentle = next(i for i in why["items"] if i["provenance"]["path"] == "435-remote-dev.md")
    assert gentle["score_breakdown"]["superseded"]["weight"] == -0.5


def test_supersedes_statements_become_relationships_from_either_side(
    sqlite_app: App, tmp_path: Path
) -> None:
    """A "Supersedes: 432" line in 435 and "Superseded by [ADR-0005]" in ADR 3 each become a
    ``SUPERSEDES`` relationship between the two elements; a statement removed in a later
    commit retires its relationship on the incremental run, and the others stay."""
    w, ingestor, git, report = _ingested(sqlite_app, tmp_path)
    assert report["supersedes"] == {"added": 3, "retired": 0}  # 435→432, ADR 3→5, 334 v3→v2

    def el(path: str) -> str:
        return element_id_for(w.repo, str(git.root.resolve()), path)

    def supersedes(path: str) -> set[tuple[str, str, str]]:
        return {
            (r["type_key"], r["source_element_id"], r["target_element_id"])
            for r in w.svc.elements.list_relationships(w.reader, el(path))
            if r["relationship_kind"] == "SUPERSEDES"
        }

    assert supersedes("432-devcontainer-modes.md") == {
        ("ameide:lifecycle.supersedes", el("435-remote-dev.md"), el("432-devcontainer-modes.md"))
    }  # "parts of 367" is not a replacement, and 367 is not in the source anyway
    assert supersedes("adr-0005-storage.md") == {
        ("ameide:lifecycle.superseded_by", el("adr-0003-storage.md"), el("adr-0005-storage.md"))
    }
    assert not supersedes("650-agentic-coding.md")  # "superseded by 650 suite": no statement line

    git.write("435-remote-dev.md", DOCS["435-remote-dev.md"].replace("**Supersedes:** 432", "x"))
    git.commit("435 no longer replaces 432")
    again = w.svc.ingest.ingest_backlog(ingestor, str(git.root), w.repo)
    assert again["supersedes"] == {"added": 0, "retired": 1}
    assert not supersedes("432-devcontainer-modes.md")
    assert supersedes("adr-0005-storage.md")
