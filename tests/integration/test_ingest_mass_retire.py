"""A run that would retire a large share of a mirror is refused unless asked for, and
``--dry-run`` reports a run without writing (issue #12, item 6), on a real git repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.errors import FailedPrecondition
from ingest.plan import element_id_for
from runtime import App
from service.authz import Caller
from tests.conftest import World, make_world
from tests.integration.ingest.conftest import GitRepo

PATHS = [f"{n:03d}-page.md" for n in range(10)]


def _mirror(app: App, tmp_path: Path, files: int = 10) -> tuple[World, Caller, GitRepo]:
    w = make_world(app)
    ingestor = Caller(f"service:mr-{w.repo.split('/')[0]}")
    w.svc.admin.grant(w.admin, ingestor.principal_id, "ingestor", w.repo)
    git = GitRepo(tmp_path / "backlog")
    for n in range(files):
        git.write(f"{n:03d}-page.md", f"# Page {n}\n\nText {n}.\n")
    git.commit("backlog")
    assert w.svc.ingest.ingest_backlog(ingestor, str(git.root), w.repo)["counts"]["new"] == files
    return w, ingestor, git


def _live(w: World, git: GitRepo) -> int:
    """How many of the first ten pages' elements are not retired."""
    source = str(git.root.resolve())
    elements = [
        w.svc.elements.get_element(w.reader, element_id_for(w.repo, source, p)) for p in PATHS
    ]
    return sum(1 for e in elements if e["element"]["retired_at"] is None)


def test_a_mistyped_glob_on_a_full_scan_is_refused_and_changes_nothing(
    sqlite_app: App, tmp_path: Path
) -> None:
    w, ingestor, git = _mirror(sqlite_app, tmp_path)
    with pytest.raises(FailedPrecondition) as refused:
        w.svc.ingest.ingest_backlog(
            ingestor, str(git.root), w.repo, glob="**/*.txt", full_scan=True
        )
    assert "retire 10 of the 10 mirrored files" in refused.value.message
    assert "--allow-mass-retire" in refused.value.message
    assert refused.value.details == {"retiring": 10, "mirrored": 10, "option": "allow_mass_retire"}
    assert _live(w, git) == 10


def test_dry_run_reports_without_writing_and_the_option_lets_it_through(
    sqlite_app: App, tmp_path: Path
) -> None:
    w, ingestor, git = _mirror(sqlite_app, tmp_path)
    for n in range(6):
        git.remove(f"{n:03d}-page.md")
    git.write("010-new.md", "# New\n\nFresh.\n")
    git.commit("drop six pages")
    status_before = w.svc.ingest.ingest_status(w.admin, w.repo)
    dry = w.svc.ingest.ingest_backlog(
        ingestor, str(git.root), w.repo, dry_run=True, allow_mass_retire=True
    )
    assert dry["dry_run"] is True
    assert (dry["counts"]["retired"], dry["counts"]["new"]) == (6, 1)
    assert "run" not in dry
    assert _live(w, git) == 10
    assert w.svc.ingest.ingest_status(w.admin, w.repo) == status_before  # no run recorded

    with pytest.raises(FailedPrecondition):
        w.svc.ingest.ingest_backlog(ingestor, str(git.root), w.repo)
    done = w.svc.ingest.ingest_backlog(ingestor, str(git.root), w.repo, allow_mass_retire=True)
    assert done["counts"]["retired"] == 6
    assert _live(w, git) == 4


def test_ordinary_deletions_need_no_option(sqlite_app: App, tmp_path: Path) -> None:
    w, ingestor, git = _mirror(sqlite_app, tmp_path, files=3)
    for n in range(3):  # a small mirror losing every file: fewer than five retirements
        git.remove(f"{n:03d}-page.md")
    git.commit("empty")
    assert w.svc.ingest.ingest_backlog(ingestor, str(git.root), w.repo)["counts"]["retired"] == 3
