"""Optional lane: the real ameide backlog (a git bundle beside the checkout), ingested at an
early commit and then at ``main``. Skipped, with the reason, when the bundle is absent."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import sqlalchemy as sa

from runtime import App
from service.authz import Caller
from tests.conftest import make_world

BUNDLE = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpora" / "ameide-backlog.bundle"
EARLY = 40  # commits after the first one: an early state with a few hundred files

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not BUNDLE.exists(), reason=f"corpus lane skipped: {BUNDLE.resolve()} is absent"
    ),
]


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=True, text=True)
    return done.stdout.strip()


def markdown_at(root: Path, commit: str) -> set[str]:
    """What ``git ls-tree -r --name-only COMMIT | grep '\\.md$'`` lists."""
    listing = git(root, "ls-tree", "-r", "--name-only", commit).splitlines()
    return {path for path in listing if path.endswith(".md")}


def live_mirror(app: App, repo: str) -> dict[str, tuple[str | None, str | None, str | None]]:
    """path → (source_repo, commit_sha, path) of the head version of each live element."""
    query = sa.text(
        "SELECT f.path, v.source_repo, v.commit_sha, v.path AS version_path "
        "FROM ingest_files f JOIN elements e ON e.element_id = f.element_id "
        "JOIN element_versions v ON v.version_id = e.head_version_id "
        "WHERE f.repo_key = :r AND e.retired_at IS NULL"
    )
    with app.engine.connect() as conn:
        rows = conn.execute(query, {"r": repo}).all()
    return {r.path: (r.source_repo, r.commit_sha, r.version_path) for r in rows}


def test_the_real_backlog_is_mirrored_at_an_early_commit_and_then_at_main(
    sqlite_app: App, tmp_path: Path
):
    clone = tmp_path / "ameide-backlog"
    subprocess.run(
        ["git", "clone", "-q", "-b", "main", str(BUNDLE), str(clone)],
        check=True,
        capture_output=True,
    )
    early = git(clone, "rev-list", "--reverse", "main").splitlines()[EARLY]
    head = git(clone, "rev-parse", "main")
    world = make_world(sqlite_app)
    ingestor = Caller("service:ingest")
    world.svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo)
    source = str(clone.resolve())

    first = world.svc.ingest.ingest_backlog(ingestor, source, world.repo, ref=early)
    assert first["counts"]["skipped"] == 0, first["skipped"]
    assert set(live_mirror(world.app, world.repo)) == markdown_at(clone, early)

    second = world.svc.ingest.ingest_backlog(ingestor, source, world.repo, ref="main")
    assert (second["from_commit"], second["to_commit"]) == (early, head)
    assert second["full_scan"] is False
    assert second["counts"]["skipped"] == 0, second["skipped"]
    mirrored = live_mirror(world.app, world.repo)
    expected = markdown_at(clone, "main")
    assert len(expected) == 761
    assert set(mirrored) == expected
    for path, (source_repo, commit_sha, version_path) in mirrored.items():
        assert source_repo == source, path
        assert commit_sha in (early, head), path
        assert version_path, path

    again = world.svc.ingest.ingest_backlog(ingestor, source, world.repo, ref="main")
    assert again["noop"] is True
