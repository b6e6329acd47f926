"""Ingest runs through the service on real git histories: provenance, idempotency, diffs,
renames, retirement, reinstatement, links, time travel and the ingestor grant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from domain.errors import InvalidArgument, NotFound, PermissionDenied
from ingest.git_source import GitBacklogSource
from ingest.plan import element_id_for
from runtime import App
from service.authz import Caller
from tests.conftest import World, make_world
from tests.integration.ingest.conftest import GitRepo

LINK_TYPE = "ameide:ingest.links_to"
COUNTED_TABLES = (
    "audit_events",
    "elements",
    "element_versions",
    "element_retirements",
    "relationships",
    "ingest_files",
    "ingest_sources",
    "index_outbox",
)


@dataclass
class Mirror:
    """A repository with an ingestor, and a git backlog to mirror into it."""

    world: World
    git: GitRepo
    ingestor: Caller

    @property
    def svc(self) -> Any:
        return self.world.svc

    def run(self, ref: str = "main", **kw: Any) -> dict[str, Any]:
        return self.svc.ingest.ingest_backlog(
            self.ingestor, str(self.git.root), self.world.repo, ref=ref, **kw
        )

    def eid(self, path: str) -> str:
        return element_id_for(self.world.repo, str(self.git.root.resolve()), path)

    def show(self, path: str, **kw: Any) -> dict[str, Any]:
        return self.svc.elements.get_element(self.world.auditor, self.eid(path), **kw)

    def history(self, path: str) -> list[dict[str, Any]]:
        return self.svc.elements.element_history(self.world.auditor, self.eid(path))["versions"]

    def links(self, path: str) -> list[dict[str, Any]]:
        rels = self.svc.elements.list_relationships(self.world.auditor, self.eid(path))
        return [r for r in rels if r["source_element_id"] == self.eid(path)]

    def events(self) -> list[str]:
        return [
            e["event_type"] for e in self.svc.history.history(self.world.auditor, self.world.repo)
        ]


def with_ingestor(world: World) -> Caller:
    principal = f"service:ingest-{world.repo.split('/')[0]}"
    world.svc.admin.grant(world.admin, principal, "ingestor", world.repo)
    return Caller(principal, purpose="mirror the backlog")


def table_counts(app: App) -> dict[str, int]:
    """Rows per table: a run that writes nothing leaves every count as it was."""
    with app.engine.connect() as conn:
        return {
            name: conn.execute(sa.text(f"SELECT count(*) FROM {name}")).scalar_one()
            for name in COUNTED_TABLES
        }


@pytest.fixture
def mirror(any_app: App, tmp_path: Path) -> Mirror:
    world = make_world(any_app)
    return Mirror(world, GitRepo(tmp_path / "backlog"), with_ingestor(world))


@pytest.fixture
def sqlite_mirror(sqlite_app: App, tmp_path: Path) -> Mirror:
    world = make_world(sqlite_app)
    return Mirror(world, GitRepo(tmp_path / "backlog"), with_ingestor(world))


AUTH = """---
title: Authentication
status: active
owners: [security]
tags: [security, login]
effective_from: 2025-01-01
---
# Auth

Sessions expire after an hour. Billing relies on it: see [billing](billing.md).
The retired design lives in backlog/old.md; see also [a missing page](missing.md).
"""
OLD = """---
status: superseded
superseded_by: [backlog/auth.md]
---
# Old auth

Cookies forever.
"""
PLAN = "# Plan\n\n" + "".join(f"- step {i} of the rollout plan\n" for i in range(40))


def first_commit(git: GitRepo) -> str:
    git.write("backlog/auth.md", AUTH)
    git.write("backlog/billing.md", "# Billing\n\nInvoices depend on [auth](auth.md).\n")
    git.write("backlog/old.md", OLD)
    git.write("backlog/plan.md", PLAN)
    git.write("docs/notes.txt", "not markdown")
    return git.commit("add the backlog")


# --- the first run -------------------------------------------------------------------------


def test_a_first_run_mirrors_every_markdown_file_as_evidence_with_provenance(mirror):
    c1 = first_commit(mirror.git)
    report = mirror.run()
    assert report["counts"]["new"] == 4
    assert report["full_scan"] is True
    assert report["to_commit"] == c1
    assert report["noop"] is False
    shown = mirror.show("backlog/auth.md")
    element, version = shown["element"], shown["version"]
    assert element["element_id"] == mirror.eid("backlog/auth.md")
    assert element["type_key"] == "ameide:ingest.backlog_md"
    assert element["source_kind"] == "INGESTED_EVIDENCE"
    assert element["element_kind"] == "DOCUMENT"
    assert version["title"] == "Authentication"
    assert version["body"] == AUTH.rstrip("\n")
    assert version["provenance"] == {
        "actor_type": "service",
        "actor_id": mirror.ingestor.principal_id,
        "tool_id": "ameide-ingest",
        "on_behalf_of": None,
        "source_repo": str(mirror.git.root.resolve()),
        "commit_sha": c1,
        "path": "backlog/auth.md",
    }
    metadata = version["metadata"]
    assert metadata["status"] == "active"
    assert metadata["owners"] == ["security"]
    assert metadata["tags"] == ["security", "login"]
    assert metadata["effective_from"] == "2025-01-01"
    assert metadata["superseded"] is False
    assert mirror.show("backlog/old.md")["version"]["metadata"]["superseded"] is True
    assert "ingest.run" in mirror.events()


def test_a_second_run_at_the_same_commit_writes_nothing_at_all(mirror):
    first_commit(mirror.git)
    mirror.run()
    before = table_counts(mirror.world.app)
    status = mirror.svc.ingest.ingest_status(mirror.ingestor, mirror.world.repo)
    again = mirror.run()
    assert again["noop"] is True
    assert again["counts"] == dict.fromkeys(again["counts"], 0)
    assert table_counts(mirror.world.app) == before  # no versions, no audit events, no run record
    assert mirror.svc.ingest.ingest_status(mirror.ingestor, mirror.world.repo) == status


# --- later commits -------------------------------------------------------------------------


def test_a_later_commit_applies_only_its_diff(sqlite_mirror):
    mirror = sqlite_mirror
    c1 = first_commit(mirror.git)
    mirror.run()
    auth_v1 = mirror.show("backlog/auth.md")["version"]
    mirror.git.write("backlog/billing.md", "# Billing\n\nInvoices are monthly now.\n")
    mirror.git.write("backlog/auth.md", AUTH.replace("status: active", "status: done"))
    mirror.git.move("backlog/plan.md", "roadmap/plan.md")
    mirror.git.remove("backlog/old.md")
    mirror.git.write("backlog/new.md", "# New\n\nFollows roadmap/plan.md.\n")
    c2 = mirror.git.commit("edit, front matter, rename, delete, add")

    report = mirror.run()
    assert report["from_commit"] == c1
    assert report["to_commit"] == c2
    assert report["full_scan"] is False
    assert report["counts"] == {
        "new": 1,  # backlog/new.md
        "changed": 2,  # billing.md (text), auth.md (front matter)
        "unchanged": 0,
        "renamed": 1,  # plan.md → roadmap/plan.md
        "retired": 1,  # old.md
        "reinstated": 0,
        "skipped": 0,
    }
    assert report["versions_written"] == 3  # new.md, billing.md, auth.md; the rename kept its body

    auth = mirror.show("backlog/auth.md")["version"]
    assert auth["seq"] == 2
    assert auth["parent_version_id"] == auth_v1["version_id"]
    assert auth["metadata"]["status"] == "done"
    assert auth["provenance"]["commit_sha"] == c2

    moved = mirror.svc.elements.get_element(mirror.world.auditor, mirror.eid("backlog/plan.md"))
    assert moved["version"]["seq"] == 1  # same element, no new version: only the path moved
    with mirror.world.app.engine.connect() as conn:
        paths = conn.execute(
            sa.text("SELECT path FROM ingest_files WHERE element_id = :e"),
            {"e": mirror.eid("backlog/plan.md")},
        ).scalars()
        assert list(paths) == ["roadmap/plan.md"]

    old = mirror.show("backlog/old.md")["element"]
    assert old["retired_at"] is not None
    events = mirror.events()
    assert events.count("ingest.run") == 2
    assert "element.retired" in events
    assert "version.created" in events


def test_an_edit_that_only_changes_line_endings_or_trailing_blanks_is_not_a_new_version(
    sqlite_mirror,
):
    mirror = sqlite_mirror
    mirror.git.write("a.md", "# A\n\nBody\n")
    mirror.git.commit("a")
    mirror.run()
    mirror.git.write("a.md", "# A  \r\n\r\nBody\r\n\r\n")
    mirror.git.commit("crlf")
    report = mirror.run()
    assert report["counts"]["unchanged"] == 1
    assert report["versions_written"] == 0
    assert len(mirror.history("a.md")) == 1


def test_only_the_changed_blobs_are_read_on_an_incremental_run(sqlite_mirror, monkeypatch):
    mirror = sqlite_mirror
    for i in range(20):
        mirror.git.write(f"backlog/{i:02}.md", f"# Item {i}\n\nBody of item {i}.\n")
    mirror.git.commit("twenty files")
    reads: list[str] = []
    original = GitBacklogSource.read_blob

    def counting(self, blob_sha, max_bytes):
        reads.append(blob_sha)
        return original(self, blob_sha, max_bytes)

    monkeypatch.setattr(GitBacklogSource, "read_blob", counting)
    mirror.run()
    assert len(reads) == 20

    reads.clear()
    mirror.git.write("backlog/07.md", "# Item 7\n\nEdited.\n")
    mirror.git.write("backlog/20.md", "# Item 20\n")
    mirror.git.commit("one edit, one addition")
    report = mirror.run()
    assert (report["counts"]["changed"], report["counts"]["new"]) == (1, 1)
    assert len(reads) == 2  # the new blobs of the two changed paths, nothing else

    reads.clear()
    mirror.run()
    assert reads == []


def test_an_older_ref_then_newer_ones_build_a_history_that_as_of_walks(mirror):
    c1 = first_commit(mirror.git)
    mirror.git.write("backlog/billing.md", "# Billing\n\nInvoices are monthly now.\n")
    mirror.git.remove("backlog/old.md")
    c2 = mirror.git.commit("edit billing, delete old")

    first = mirror.run(ref=c1)
    assert first["to_commit"] == c1
    between = datetime.now(UTC)
    second = mirror.run(ref="main")
    assert (second["from_commit"], second["to_commit"]) == (c1, c2)

    then = mirror.show("backlog/billing.md", as_of=between)["version"]
    now = mirror.show("backlog/billing.md")["version"]
    assert "depend on [auth]" in then["body"]
    assert then["provenance"]["commit_sha"] == c1
    assert now["provenance"]["commit_sha"] == c2
    assert now["seq"] == 2

    deleted = mirror.show("backlog/old.md", as_of=between)
    assert deleted["version"]["title"] == "Old auth"
    assert deleted["element"]["retired_at_as_of"] is False
    assert mirror.show("backlog/old.md")["element"]["retired_at"] is not None


def test_every_ingested_version_names_its_exact_commit_and_path(mirror):
    c1 = first_commit(mirror.git)
    mirror.run()
    mirror.git.write("backlog/plan.md", PLAN + "- one more step\n")
    c2 = mirror.git.commit("extend the plan")
    mirror.run()
    for path, commits in [("backlog/plan.md", [c1, c2]), ("backlog/auth.md", [c1])]:
        versions = mirror.history(path)
        assert [v["provenance"]["commit_sha"] for v in versions] == commits
        assert {v["provenance"]["path"] for v in versions} == {path}
        assert {v["provenance"]["source_repo"] for v in versions} == {
            str(mirror.git.root.resolve())
        }


def test_a_file_added_again_after_its_deletion_is_reinstated(sqlite_mirror):
    mirror = sqlite_mirror
    first_commit(mirror.git)
    mirror.run()
    mirror.git.remove("backlog/plan.md")
    mirror.git.commit("drop the plan")
    mirror.run()
    assert mirror.show("backlog/plan.md")["element"]["retired_at"] is not None
    mirror.git.write("backlog/plan.md", PLAN + "- revived\n")
    mirror.git.commit("the plan is back")
    report = mirror.run()
    assert report["counts"]["reinstated"] == 1
    shown = mirror.show("backlog/plan.md")
    assert shown["element"]["retired_at"] is None
    assert shown["version"]["seq"] == 2
    assert "element.reinstated" in mirror.events()


def test_a_new_file_at_a_renamed_files_old_path_gets_its_own_element(sqlite_mirror):
    mirror = sqlite_mirror
    first_commit(mirror.git)
    mirror.run()
    mirror.git.move("backlog/plan.md", "backlog/plan-2025.md")
    mirror.git.commit("rename")
    mirror.run()
    mirror.git.write("backlog/plan.md", "# A brand new plan\n")
    mirror.git.commit("new plan at the old path")
    report = mirror.run()
    assert report["counts"]["new"] == 1
    renamed = mirror.svc.elements.get_element(mirror.world.auditor, mirror.eid("backlog/plan.md"))
    assert renamed["version"]["title"] == "Plan"  # the moved element kept its content
    with mirror.world.app.engine.connect() as conn:
        rows = dict(
            conn.execute(
                sa.text("SELECT path, element_id FROM ingest_files WHERE repo_key = :r"),
                {"r": mirror.world.repo},
            ).all()
        )
    assert rows["backlog/plan-2025.md"] == mirror.eid("backlog/plan.md")
    assert rows["backlog/plan.md"] != mirror.eid("backlog/plan.md")


def test_a_full_scan_retires_what_vanished_since_the_last_run(sqlite_mirror):
    mirror = sqlite_mirror
    first_commit(mirror.git)
    mirror.run()
    mirror.git.remove("backlog/old.md")
    mirror.git.commit("delete old")
    report = mirror.run(full_scan=True)
    assert report["full_scan"] is True
    assert report["counts"]["retired"] == 1
    assert report["counts"]["unchanged"] == 3
    assert mirror.show("backlog/old.md")["element"]["retired_at"] is not None


def test_a_legal_hold_keeps_a_deleted_files_element_and_reports_why(sqlite_mirror):
    mirror = sqlite_mirror
    first_commit(mirror.git)
    mirror.run()
    mirror.svc.admin.set_legal_hold(mirror.world.admin, mirror.world.repo, True)
    mirror.git.remove("backlog/old.md")
    mirror.git.commit("delete old")
    report = mirror.run()
    assert report["counts"]["retired"] == 0
    assert report["skipped"] == [
        {
            "path": "backlog/old.md",
            "code": "legal_hold",
            "reason": f"deleted upstream, but {mirror.world.repo} is under legal hold",
        }
    ]
    assert mirror.show("backlog/old.md")["element"]["retired_at"] is None


# --- links ---------------------------------------------------------------------------------


def test_links_between_mirrored_files_become_reference_relationships(mirror):
    first_commit(mirror.git)
    report = mirror.run()
    links = mirror.links("backlog/auth.md")
    assert {(r["relationship_kind"], r["type_key"]) for r in links} == {("REFERENCE", LINK_TYPE)}
    assert {r["target_element_id"] for r in links} == {
        mirror.eid("backlog/billing.md"),
        mirror.eid("backlog/old.md"),
    }
    unresolved = mirror.show("backlog/auth.md")["version"]["metadata"]["unresolved_links"]
    assert unresolved == [
        {"raw": "missing.md", "target_path": "backlog/missing.md", "reason": "not mirrored"}
    ]
    assert report["links"]["added"] == 3  # auth → billing, auth → old, billing → auth
    assert report["links"]["unresolved"] == 1
    assert report["links"]["resolved"] == 3
    assert (report["links"]["ambiguous"], report["links"]["missing"]) == (0, 1)
    assert report["links"]["outside"] == 0


def test_links_are_not_duplicated_and_follow_edits(sqlite_mirror):
    mirror = sqlite_mirror
    first_commit(mirror.git)
    mirror.run()
    mirror.run(full_scan=True)
    assert len(mirror.links("backlog/auth.md")) == 2

    mirror.git.write("backlog/auth.md", AUTH.replace("see [billing](billing.md)", "see nothing"))
    mirror.git.commit("drop the billing link")
    report = mirror.run()
    assert report["links"]["retired"] == 1
    assert {r["target_element_id"] for r in mirror.links("backlog/auth.md")} == {
        mirror.eid("backlog/old.md")
    }
    assert "relationship.retired" in mirror.events()


def test_an_unresolved_link_connects_once_its_target_is_mirrored(sqlite_mirror):
    mirror = sqlite_mirror
    first_commit(mirror.git)
    mirror.run()
    mirror.git.write("backlog/missing.md", "# No longer missing\n")
    mirror.git.commit("add the missing page")
    report = mirror.run()
    assert report["counts"]["new"] == 1
    assert mirror.eid("backlog/missing.md") in {
        r["target_element_id"] for r in mirror.links("backlog/auth.md")
    }


# --- who may ingest ------------------------------------------------------------------------


def test_ingesting_needs_an_ingestor_grant(mirror):
    first_commit(mirror.git)
    world = mirror.world
    before = table_counts(world.app)
    for caller in (world.reader, world.curator, world.publisher):
        with pytest.raises(PermissionDenied):
            world.svc.ingest.ingest_backlog(caller, str(mirror.git.root), world.repo)
    with pytest.raises(NotFound):
        world.svc.ingest.ingest_backlog(world.stranger, str(mirror.git.root), world.repo)
    assert table_counts(world.app) == before


def test_status_shows_the_last_run_per_source_to_ingestors_and_readers(sqlite_mirror):
    """Every reader and ingestor sees which sources ran, when and at which commit; the last
    report's totals (counts, skips and their paths, PII, links) only a caller cleared for
    ``restricted``, to read or to ingest: they count content the others may not read."""
    mirror = sqlite_mirror
    world = mirror.world
    c1 = first_commit(mirror.git)
    mirror.run()
    mirror.run()
    restricted_reader = Caller(f"user:top-{world.repo.split('/')[0]}")
    world.svc.admin.grant(
        world.admin, restricted_reader.principal_id, "reader", world.repo, "restricted"
    )
    restricted_ingestor = Caller(f"service:top-{world.repo.split('/')[0]}")
    world.svc.admin.grant(
        world.admin, restricted_ingestor.principal_id, "ingestor", world.repo, "restricted"
    )
    below = (mirror.ingestor, world.reader, world.auditor)  # internal clearance
    for caller in (*below, restricted_reader, restricted_ingestor):
        status = world.svc.ingest.ingest_status(caller, world.repo)
        (source,) = status["sources"]
        assert source["source_repo"] == str(mirror.git.root.resolve())
        assert source["last_commit"] == c1
        assert source["run_count"] == 1  # the no-op re-run recorded nothing
        report = source["last_report"]
        assert (report["to_commit"], report["source_repo"]) == (c1, source["source_repo"])
        if caller in below:
            assert set(report) <= {
                "repository", "source_repo", "ref", "glob", "from_commit", "to_commit",
                "full_scan", "noop", "run",
            }  # fmt: skip
        else:
            assert report["counts"]["new"] == 4
            assert {"skipped", "pii", "links"} <= set(report)
    with pytest.raises(NotFound):
        world.svc.ingest.ingest_status(world.stranger, world.repo)
    # history says the same of the run's ingest.run event
    (run,) = [
        e
        for e in world.svc.history.history(world.reader, world.repo)
        if e["event_type"] == "ingest.run"
    ]
    assert run["payload"]["to_commit"] == c1
    assert "counts" not in run["payload"]
    (run,) = [
        e for e in world.svc.history.history(restricted_reader, world.repo)
        if e["event_type"] == "ingest.run"
    ]  # fmt: skip
    assert run["payload"]["counts"]["new"] == 4


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"ref": "no-such-branch"}, "ref"),
        ({"ref": "--upload-pack=evil"}, "ref"),
        ({"glob": ""}, "glob"),
        ({"routing": "rules: [{name: x, actions: {policy: explode}}]\n"}, "routing"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_written(sqlite_mirror, kwargs, field):
    first_commit(sqlite_mirror.git)
    before = table_counts(sqlite_mirror.world.app)
    with pytest.raises(InvalidArgument) as caught:
        sqlite_mirror.run(**kwargs)
    assert caught.value.details.get("field") == field
    assert table_counts(sqlite_mirror.world.app) == before


def test_a_source_that_is_not_a_git_repository_is_an_invalid_argument(sqlite_mirror, tmp_path):
    with pytest.raises(InvalidArgument, match="cannot open git source"):
        sqlite_mirror.svc.ingest.ingest_backlog(
            sqlite_mirror.ingestor, str(tmp_path / "nowhere"), sqlite_mirror.world.repo
        )


def test_front_matter_cannot_forge_the_metadata_ingest_records(sqlite_mirror):
    mirror = sqlite_mirror
    mirror.git.write(
        "a.md",
        "---\nrouting_rule: admin-only\nunresolved_links: [{target_path: b.md}]\nowner: x\n---\n"
        "# A\n",
    )
    mirror.git.commit("forged keys")
    mirror.run()
    metadata = mirror.show("a.md")["version"]["metadata"]
    assert "routing_rule" not in metadata
    assert "unresolved_links" not in metadata
    assert metadata["owner"] == "x"


# --- failures --------------------------------------------------------------------------------


def test_a_run_that_fails_in_a_later_batch_keeps_whole_batches_and_a_rerun_converges(
    mirror, monkeypatch
):
    import service.ingesting.mirror
    from storage.store_ingest import IngestStore

    monkeypatch.setattr(service.ingesting.mirror, "BATCH", 2)  # four files: two units of work
    first_commit(mirror.git)
    real = IngestStore.insert_ingest_files
    calls: list[int] = []

    def failing_second_time(self, rows):
        calls.append(len(rows))
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(self, rows)

    monkeypatch.setattr(IngestStore, "insert_ingest_files", failing_second_time)
    before = table_counts(mirror.world.app)

    def added() -> dict[str, int]:
        return {k: n - before[k] for k, n in table_counts(mirror.world.app).items()}

    with pytest.raises(RuntimeError, match="disk full"):
        mirror.run()
    # the first batch whole, nothing of the second (its elements and versions were rolled back)
    assert added() == {
        **dict.fromkeys(COUNTED_TABLES, 0),
        "elements": 2,
        "element_versions": 2,
        "ingest_files": 2,
        "audit_events": 2,
        "index_outbox": 2,  # applied rows stay: every index on the database consumes them
    }
    assert mirror.svc.history.verify_audit(mirror.world.auditor, mirror.world.repo)["ok"] is True

    monkeypatch.setattr(IngestStore, "insert_ingest_files", real)
    report = mirror.run()
    assert report["counts"]["new"] == 2
    assert report["counts"]["unchanged"] == 2
    counts = added()
    assert (counts["elements"], counts["element_versions"], counts["ingest_files"]) == (4, 4, 4)
    assert counts["ingest_sources"] == 1
    assert {link["target_element_id"] for link in mirror.links("backlog/auth.md")} == {
        mirror.eid("backlog/billing.md"),
        mirror.eid("backlog/old.md"),
    }
    assert mirror.svc.history.verify_audit(mirror.world.auditor, mirror.world.repo)["ok"] is True
    assert mirror.run()["noop"] is True
