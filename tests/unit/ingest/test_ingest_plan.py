"""Planning an ingest run against an in-memory source: kinds, ids, skips, routing, PII, links."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import pytest

import ingest.plan as plan_module
from ingest.markdown import content_hash
from ingest.plan import PlanOptions, build_plan, element_id_for
from ingest.plan_model import TYPE_KEY, ActionKind, FileAction, IngestPlan
from ingest.routing.rules import RepositoryKey, load_config
from ingest.source import (
    MODE_GITLINK,
    MODE_SYMLINK,
    BlobTooLargeError,
    ChangeKind,
    FileChange,
    TreeEntry,
)

HOME = RepositoryKey("acme", "eng", "backlog")
FILE = 0o100644
Tree = dict[str, bytes | tuple[int, bytes]]


@dataclass
class FakeSource:
    """Commits as {path: bytes or (mode, bytes)}; identical content moved = a rename."""

    commits: dict[str, Tree] = field(default_factory=dict)
    source_repo: str = "https://git.example/backlog.git"
    broken_blobs: set[str] = field(default_factory=set)

    def resolve(self, ref: str) -> str:
        return ref

    def has_commit(self, sha: str) -> bool:
        return sha in self.commits

    def list_files(self, commit: str, glob: str | None = None) -> list[TreeEntry]:
        from ingest.paths import glob_match

        entries = [self._entry(path, spec) for path, spec in self.commits[commit].items()]
        return sorted((e for e in entries if glob is None or glob_match(glob, e.path)), key=str)

    def diff(self, old: str, new: str, rename_similarity: int = 90) -> list[FileChange]:
        before = {e.path: e for e in self.list_files(old)}
        after = {e.path: e for e in self.list_files(new)}
        gone = {p: e for p, e in before.items() if p not in after}
        changes: list[FileChange] = []
        for path, entry in after.items():
            if path in before:
                if before[path].blob_sha != entry.blob_sha:
                    old_entry = before[path]
                    changes.append(
                        FileChange(ChangeKind.MODIFIED, path, None, old_entry.blob_sha, FILE)
                    )
                continue
            moved = next((p for p, e in gone.items() if e.blob_sha == entry.blob_sha), None)
            if moved is None:
                changes.append(FileChange(ChangeKind.ADDED, path))
            else:
                old_sha = gone.pop(moved).blob_sha
                changes.append(FileChange(ChangeKind.RENAMED, path, moved, old_sha, FILE, 100))
        changes += [
            FileChange(ChangeKind.DELETED, p, None, e.blob_sha, FILE) for p, e in gone.items()
        ]
        return changes

    def read_blob(self, blob_sha: str, max_bytes: int) -> bytes:
        if blob_sha in self.broken_blobs:
            raise OSError("object database is corrupt")
        data = self._blobs()[blob_sha]
        if len(data) > max_bytes:
            raise BlobTooLargeError(len(data), max_bytes)
        return data

    def _blobs(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for tree in self.commits.values():
            for spec in tree.values():
                data = spec[1] if isinstance(spec, tuple) else spec
                out[_sha(data)] = data
        return out

    def _entry(self, path: str, spec: bytes | tuple[int, bytes]) -> TreeEntry:
        mode, data = spec if isinstance(spec, tuple) else (FILE, spec)
        return TreeEntry(path, mode, _sha(data), len(data))


def _sha(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


class Store:
    """What the caller already holds: element id → head content hash."""

    def __init__(self) -> None:
        self.heads: dict[str, str] = {}

    def apply(self, plan: IngestPlan) -> None:
        for action in plan.actions:
            if action.kind is ActionKind.DELETED:
                self.heads.pop(action.element_id or "", None)
            elif action.content_sha256 and action.element_id:
                self.heads[action.element_id] = action.content_sha256


def plan(source: FakeSource, store: Store, ref: str, since: str | None = None, **kw) -> IngestPlan:
    return build_plan(
        source, repository=HOME, current_hash=store.heads.get, ref=ref, since=since, **kw
    )


def only(plan_: IngestPlan) -> FileAction:
    (action,) = plan_.actions
    return action


def eid(path: str, repository: str = str(HOME)) -> str:
    return element_id_for(repository, FakeSource.source_repo, path)


# --- new, unchanged, changed ------------------------------------------------------------------


def test_element_ids_are_el_and_24_hex_of_sha256_over_nul_joined_parts():
    expected = hashlib.sha256(b"a/b/c\0src\0x.md").hexdigest()[:24]
    assert element_id_for("a/b/c", "src", "x.md") == "el_" + expected


def test_a_new_file_becomes_a_new_element_with_provenance_and_metadata():
    text = b"---\ntitle: Auth\nstatus: active\ntags: [sec]\n---\n# Heading\r\nBody  \r\n"
    source = FakeSource({"c1": {"backlog/a.md": text}})
    action = only(plan(source, Store(), "c1"))
    assert action.kind is ActionKind.NEW
    assert action.writes_version
    assert action.element_id == eid("backlog/a.md")
    assert action.type_key == TYPE_KEY
    assert action.repository == "acme/eng/backlog"
    assert action.title == "Auth"
    assert action.body == "---\ntitle: Auth\nstatus: active\ntags: [sec]\n---\n# Heading\nBody"
    assert action.content_sha256 == content_hash(action.body)
    assert action.metadata == {
        "title": "Auth",
        "status": "active",
        "tags": ["sec"],
        "superseded": False,
        "lifecycle": {"state": "current", "evidence": "front matter status: active"},
    }
    assert action.provenance == {
        "source_repo": FakeSource.source_repo,
        "commit_sha": "c1",
        "path": "backlog/a.md",
    }


def test_replanning_after_applying_changes_nothing():
    source = FakeSource({"c1": {"a.md": b"# A\n", "b.md": b"# B\n"}})
    store = Store()
    first = plan(source, store, "c1")
    store.apply(first)
    again = plan(source, store, "c1")
    assert [a.kind for a in again.actions] == [ActionKind.UNCHANGED] * 2
    assert again.report.unchanged == 2
    assert again.report.new == 0


def test_only_the_diff_is_read_and_whitespace_only_edits_are_unchanged():
    source = FakeSource(
        {
            "c1": {"a.md": b"# A\nx\n", "b.md": b"# B\n", "c.md": b"# C\n"},
            "c2": {"a.md": b"# A  \r\nx\r\n\r\n", "b.md": b"# B\nmore\n", "c.md": b"# C\n"},
        }
    )
    store = Store()
    store.apply(plan(source, store, "c1"))
    second = plan(source, store, "c2", since="c1")
    assert [(a.path, a.kind) for a in second.actions] == [
        ("a.md", ActionKind.UNCHANGED),
        ("b.md", ActionKind.CHANGED),
    ]


def test_a_front_matter_only_change_is_a_new_version():
    source = FakeSource(
        {
            "c1": {"a.md": b"---\nstatus: active\n---\n# A\n"},
            "c2": {"a.md": b"---\nstatus: superseded\n---\n# A\n"},
        }
    )
    store = Store()
    store.apply(plan(source, store, "c1"))
    action = only(plan(source, store, "c2", since="c1"))
    assert action.kind is ActionKind.CHANGED
    assert action.metadata["superseded"] is True


# --- renames and deletions --------------------------------------------------------------------


def test_a_renamed_file_keeps_its_element_and_needs_no_new_content():
    source = FakeSource({"c1": {"old.md": b"# Same\n"}, "c2": {"new.md": b"# Same\n"}})
    store = Store()
    store.apply(plan(source, store, "c1"))
    action = only(plan(source, store, "c2", since="c1"))
    assert (action.kind, action.old_path, action.path) == (ActionKind.RENAMED, "old.md", "new.md")
    assert action.element_id == eid("old.md")
    assert not action.content_changed
    assert not action.writes_version
    assert action.provenance["path"] == "new.md"


def test_a_rename_whose_old_element_is_unknown_is_planned_as_new():
    source = FakeSource({"c1": {"old.md": b"# Same\n"}, "c2": {"new.md": b"# Same\n"}})
    action = only(plan(source, Store(), "c2", since="c1"))
    assert (action.kind, action.element_id) == (ActionKind.NEW, eid("new.md"))


def test_locate_finds_the_element_that_mirrors_a_path_after_earlier_renames():
    source = FakeSource({"c1": {"new.md": b"# A\n"}, "c2": {"new.md": b"# A v2\n"}})
    store = Store()
    store.heads["el_original"] = content_hash("# A")
    located = plan(source, store, "c2", since="c1", locate=lambda repo, path: "el_original")
    action = only(located)
    assert (action.kind, action.element_id) == (ActionKind.CHANGED, "el_original")


def test_a_deleted_file_retires_its_element():
    source = FakeSource({"c1": {"a.md": b"# A\n", "b.md": b"# B\n"}, "c2": {"b.md": b"# B\n"}})
    store = Store()
    store.apply(plan(source, store, "c1"))
    action = only(plan(source, store, "c2", since="c1"))
    assert (action.kind, action.path, action.element_id) == (
        ActionKind.DELETED,
        "a.md",
        eid("a.md"),
    )
    assert plan(source, Store(), "c2", since="c1").actions == ()  # nothing to retire


def test_a_deleted_file_is_looked_up_in_the_repository_its_old_content_routed_to():
    routing = load_config(
        "rules:\n  - name: t\n    actions: {repository: 'team-{front_matter.team}'}\n"
    )
    source = FakeSource({"c1": {"a.md": b"---\nteam: pay\n---\n# A\n"}, "c2": {}})
    store = Store()
    store.apply(plan(source, store, "c1", routing=routing))
    action = only(plan(source, store, "c2", since="c1", routing=routing))
    assert action.kind is ActionKind.DELETED
    assert action.element_id == eid("a.md", "acme/eng/team-pay")


def test_a_rename_into_a_skipped_file_retires_the_old_element():
    source = FakeSource({"c1": {"a.md": b"# A\n"}, "c2": {"b.md": b"# A\n"}})
    store = Store()
    store.apply(plan(source, store, "c1"))
    source.commits["c2"] = {"b.md": (MODE_SYMLINK, b"# A\n")}
    kinds = [(a.kind, a.path) for a in plan(source, store, "c2", since="c1").actions]
    assert kinds == [(ActionKind.DELETED, "a.md"), (ActionKind.SKIPPED, "b.md")]


def test_renames_across_the_glob_edge_are_adds_and_deletes():
    source = FakeSource(
        {
            "c1": {"backlog/a.md": b"# A\n", "notes/b.md": b"# B\n"},
            "c2": {"archive/a.md": b"# A\n", "backlog/b.md": b"# B\n"},
        }
    )
    store = Store()
    options = PlanOptions(glob="backlog/**/*.md")
    store.apply(plan(source, store, "c1", options=options))
    actions = plan(source, store, "c2", since="c1", options=options).actions
    assert [(a.kind, a.path) for a in actions] == [
        (ActionKind.DELETED, "backlog/a.md"),
        (ActionKind.NEW, "backlog/b.md"),
    ]


def test_a_vanished_last_commit_falls_back_to_a_full_scan():
    source = FakeSource({"c2": {"a.md": b"# A\n"}})
    result = plan(source, Store(), "c2", since="rewritten")
    assert result.full_scan
    assert result.from_commit is None
    assert "full scan" in result.notes[0]
    assert result.seen_paths == {"a.md"}


# --- hostile input ----------------------------------------------------------------------------


def test_hostile_files_are_skipped_with_reasons_and_the_run_goes_on():
    source = FakeSource(
        {
            "c1": {
                "link.md": (MODE_SYMLINK, b"/etc/passwd"),
                "sub.md": (MODE_GITLINK, b""),
                "big.md": b"x" * 101,
                "bin.md": b"\x00\x01",
                "latin.md": b"caf\xe9",
                "fm.md": b"---\ntitle: [x\n---\n",
                "../up.md": b"# up",
                "broken.md": b"# broken",
                "ok.md": b"# fine",
            }
        },
        broken_blobs={_sha(b"# broken")},
    )
    result = plan(source, Store(), "c1", options=PlanOptions(max_bytes=100))
    skipped = {a.path: a.skip_code for a in result.actions if a.kind is ActionKind.SKIPPED}
    assert skipped == {
        "../up.md": "unsafe_path",
        "big.md": "too_large",
        "bin.md": "binary",
        "broken.md": "read_error",
        "fm.md": "front_matter",
        "latin.md": "undecodable",
        "link.md": "symlink",
        "sub.md": "submodule",
    }
    assert all(a.skip_reason for a in result.actions if a.kind is ActionKind.SKIPPED)
    assert result.report.new == 1
    assert result.report.skipped == 8


def test_an_unfillable_repository_template_skips_only_that_file():
    routing = load_config("rules:\n  - name: t\n    actions: {repository: 'x-{front_matter.o}'}\n")
    source = FakeSource({"c1": {"a.md": b"# A\n", "b.md": b"---\no: k\n---\n"}})
    actions = plan(source, Store(), "c1", routing=routing).actions
    assert actions[0].kind is ActionKind.SKIPPED
    assert "front_matter.o" in (actions[0].skip_reason or "")
    assert actions[1].repository == "acme/eng/x-k"
    assert actions[1].element_id == eid("b.md", "acme/eng/x-k")


# --- PII policy -------------------------------------------------------------------------------

_PII_RULES = """
rules:
  - name: reject-secrets
    override: true
    match: {all: [{field: signals.pii_kinds, contains: secret}]}
    actions: {policy: reject}
  - name: redact-pii
    override: true
    match: {all: [{field: signals.pii_detected, equals: true}]}
    actions: {policy: redact, classification: restricted, tags: [pii]}
"""


def test_redaction_masks_body_title_and_metadata_and_counts_kinds():
    text = b"---\nowner: jane@corp.example\n---\n# Call +49 30 1234567\nmail jane@corp.example\n"
    source = FakeSource({"c1": {"a.md": text}})
    action = only(plan(source, Store(), "c1", routing=load_config(_PII_RULES)))
    assert action.kind is ActionKind.NEW
    assert action.policy == "redact"
    for leaked in ("jane", "corp.example", "1234567"):
        assert leaked not in (action.body or "") + (action.title or "") + str(action.metadata)
    assert action.pii_counts == {"email": 2, "phone": 1}
    assert action.metadata["pii_redacted"] == {"email": 2, "phone": 1}
    assert action.classification == "restricted"
    assert action.tags == ("pii",)


def test_rejected_files_are_skipped_with_the_rule_and_counts():
    source = FakeSource({"c1": {"a.md": b"key AKIAIOSFODNN7EXAMPLE and a@b.io\n"}})
    action = only(plan(source, Store(), "c1", routing=load_config(_PII_RULES)))
    assert action.kind is ActionKind.SKIPPED
    assert action.skip_code == "rejected"
    assert "reject-secrets" in (action.skip_reason or "")
    assert action.pii_counts == {"email": 1, "secret:aws": 1}


def test_without_rules_pii_is_counted_but_stored():
    source = FakeSource({"c1": {"a.md": b"mail a@b.io\n"}})
    action = only(plan(source, Store(), "c1"))
    assert action.body == "mail a@b.io"
    assert action.pii_counts == {"email": 1}


# --- links and progress -----------------------------------------------------------------------


def test_links_resolve_only_to_files_this_run_can_ingest():
    source = FakeSource(
        {
            "c1": {
                "backlog/a.md": b"[b](b.md) [bin](bin.md) [gone](gone.md) backlog/b.md",
                "backlog/b.md": b"# B",
                "backlog/bin.md": b"\x00",
            }
        }
    )
    action = plan(source, Store(), "c1").actions[0]
    assert [(link.target_path, link.resolved) for link in action.links] == [
        ("backlog/b.md", True),
        ("backlog/bin.md", False),
        ("backlog/gone.md", False),
        ("backlog/b.md", True),
    ]


def test_progress_is_reported_per_changed_file():
    source = FakeSource({"c1": {"a.md": b"a", "b.md": b"b"}})
    seen: list[tuple[int, int]] = []
    plan(source, Store(), "c1", progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]


@pytest.mark.parametrize("ref", ["c1", "c2"])
def test_planning_is_deterministic(ref):
    source = FakeSource({"c1": {"b.md": b"b", "a.md": b"a"}, "c2": {"a.md": b"a2"}})
    assert plan(source, Store(), ref) == plan(source, Store(), ref)


def test_an_edit_that_reroutes_a_file_retires_the_element_in_the_old_repository():
    routing = load_config(
        "rules:\n  - name: t\n    actions: {repository: 'team-{front_matter.team}'}\n"
    )
    source = FakeSource(
        {
            "c1": {"a.md": b"---\nteam: pay\n---\n# A\n"},
            "c2": {"a.md": b"---\nteam: ops\n---\n# A\n"},
        }
    )
    store = Store()
    store.apply(plan(source, store, "c1", routing=routing))
    actions = plan(source, store, "c2", since="c1", routing=routing).actions
    assert [(a.kind, a.repository) for a in actions] == [
        (ActionKind.NEW, "acme/eng/team-ops"),
        (ActionKind.DELETED, "acme/eng/team-pay"),
    ]


def test_an_unexpected_failure_skips_the_file_and_the_run_goes_on(monkeypatch):
    real = plan_module.prepare_document

    def flaky(path, data, router, mask):
        if path == "bad.md":
            raise RuntimeError("parser limit")
        return real(path, data, router, mask)

    monkeypatch.setattr(plan_module, "prepare_document", flaky)
    source = FakeSource({"c1": {"bad.md": b"# x", "good.md": b"# y"}})
    bad, good = plan(source, Store(), "c1").actions
    assert bad.skip_code == "unprocessable"
    assert bad.skip_reason == "RuntimeError: parser limit"
    assert good.kind is ActionKind.NEW
