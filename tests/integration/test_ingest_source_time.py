"""Evidence carries when its source last changed (issue #9, item 3): the commit time of the last
commit touching the file, from one history walk per run, incremental runs included; front
matter ``updated`` wins; recency ranks by it while ``as_of`` stays system time."""

from __future__ import annotations

import os
from pathlib import Path

from ingest.plan import element_id_for
from runtime import App
from service.authz import Caller
from tests.conftest import make_world
from tests.integration.ingest.conftest import GitRepo
from tests.read_world import request


def commit_at(git: GitRepo, when: str, message: str) -> None:
    os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = when
    try:
        git.commit(message)
    finally:
        del os.environ["GIT_AUTHOR_DATE"], os.environ["GIT_COMMITTER_DATE"]


def test_source_time_is_the_last_commit_touching_each_file(sqlite_app: App, tmp_path: Path):
    w = make_world(sqlite_app)
    ingestor = Caller(f"service:st-{w.repo.split('/')[0]}")
    w.svc.admin.grant(w.admin, ingestor.principal_id, "ingestor", w.repo)
    git = GitRepo(tmp_path / "backlog")
    git.write("old.md", "# Deploy guide\n\nDeploy with the release script.\n")
    git.write("new.md", "# Deploy guide v2\n\nDeploy with the release script, then verify.\n")
    git.write("dated.md", "---\nupdated: 2025-06-30\n---\n# Notes\n\nDeploy notes.\n")
    commit_at(git, "2021-03-01T10:00:00+00:00", "first")
    git.write("new.md", "# Deploy guide v2\n\nDeploy with the release script, then verify it.\n")
    commit_at(git, "2025-09-15T08:30:00+00:00", "touch new")
    w.svc.ingest.ingest_backlog(ingestor, str(git.root), w.repo)

    def meta(path: str) -> dict:
        el = element_id_for(w.repo, str(git.root.resolve()), path)
        return w.svc.elements.get_element(w.reader, el)["version"]["metadata"]

    assert meta("old.md")["source_time"] == "2021-03-01T10:00:00Z"
    assert meta("new.md")["source_time"] == "2025-09-15T08:30:00Z"
    assert meta("dated.md")["source_time"] == "2025-06-30T00:00:00Z"  # front matter wins

    # an incremental run: only the changed file gets a new version, with its new time
    git.write("old.md", "# Deploy guide\n\nDeploy with the release script. Updated.\n")
    commit_at(git, "2026-01-02T12:00:00+00:00", "edit old")
    report = w.svc.ingest.ingest_backlog(ingestor, str(git.root), w.repo)
    assert report["full_scan"] is False
    assert meta("old.md")["source_time"] == "2026-01-02T12:00:00Z"
    assert meta("new.md")["source_time"] == "2025-09-15T08:30:00Z"

    # recency counts from source time: the file changed in 2021... now 2026, ranks by its age
    out = w.svc.reading.read_context(
        w.reader, request(w.repo, "deploy release script", explain=True)
    )
    recency = {
        i["provenance"]["path"]: i["score_breakdown"]["recency"]["value"] for i in out["items"]
    }
    assert recency["old.md"] > recency["dated.md"]  # 2026-01 is newer than 2025-06
    assert recency["new.md"] > recency["dated.md"]
