"""Planning ingest runs over real git histories, including hostile repositories."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ingest.git_source import GitBacklogSource
from ingest.links.resolve import mirrored_after, resolve_links
from ingest.plan import PlanOptions, build_plan, element_id_for
from ingest.plan_model import ActionKind, IngestPlan
from ingest.routing.rules import RepositoryKey, load_config
from ingest.state import MirrorState

HOME = RepositoryKey("acme", "eng", "backlog")
FIFTY_MB = 50 * 1024 * 1024

_opened: list[str] | None = None


def _record_opens(event: str, args: tuple[object, ...]) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], str | bytes | Path):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_record_opens)


@contextmanager
def python_file_opens() -> Iterator[list[str]]:
    """Every file Python itself opens inside the block (the audit hook cannot be removed)."""
    global _opened
    _opened = []
    try:
        yield _opened
    finally:
        _opened = None


class Heads:
    """The caller's state: element id → head content hash, updated by applying plans."""

    def __init__(self) -> None:
        self.hashes: dict[str, str] = {}

    def apply(self, plan: IngestPlan) -> None:
        for action in plan.actions:
            if action.kind is ActionKind.DELETED:
                del self.hashes[action.element_id or ""]
            elif action.content_sha256 and action.element_id:
                self.hashes[action.element_id] = action.content_sha256


def run(source: GitBacklogSource, heads: Heads, since: str | None = None, **kw) -> IngestPlan:
    plan = build_plan(source, repository=HOME, current_hash=heads.hashes.get, since=since, **kw)
    heads.apply(plan)
    return plan


def kinds(plan: IngestPlan) -> list[tuple[str, str]]:
    return [(a.kind.value, a.path) for a in plan.actions]


def test_a_history_of_edits_is_mirrored_incrementally(repo, source):
    long_body = "".join(f"- item {i}\n" for i in range(30))
    repo.write("backlog/auth.md", "---\ntitle: Auth\nstatus: active\n---\n# Auth\n" + long_body)
    repo.write("backlog/billing.md", "# Billing\nSee [auth](auth.md).\n")
    repo.write("backlog/old.md", "# Old\n")
    repo.write("docs/ignored.txt", "not markdown")
    c1 = repo.commit("add backlog")
    heads = Heads()
    first = run(source, heads)
    assert kinds(first) == [
        ("new", "backlog/auth.md"),
        ("new", "backlog/billing.md"),
        ("new", "backlog/old.md"),
    ]
    assert first.to_commit == c1
    assert first.full_scan
    (link,) = first.actions[1].links
    assert (link.target_path, link.resolved) == ("backlog/auth.md", True)

    again = run(source, heads, since=c1)
    assert again.actions == ()
    assert again.from_commit == c1

    repo.write("backlog/billing.md", "# Billing\r\nSee [auth](auth.md).   \r\n")  # CRLF only
    repo.write("backlog/auth.md", "---\ntitle: Auth\nstatus: superseded\n---\n# Auth\n" + long_body)
    repo.move("backlog/old.md", "backlog/archive/old.md")
    c2 = repo.commit("supersede auth, line endings, move old")
    second = run(source, heads, since=c1)
    assert kinds(second) == [
        ("renamed", "backlog/archive/old.md"),
        ("changed", "backlog/auth.md"),
        ("unchanged", "backlog/billing.md"),
    ]
    renamed = second.actions[0]
    assert renamed.old_path == "backlog/old.md"
    assert not renamed.content_changed
    assert renamed.element_id == element_id_for(str(HOME), source.source_repo, "backlog/old.md")
    assert second.actions[1].metadata["superseded"] is True
    assert second.actions[1].provenance["commit_sha"] == c2

    repo.remove("backlog/billing.md")
    repo.write("backlog/new.md", "# New\nDepends on backlog/auth.md\n")
    c3 = repo.commit("delete billing, add new")
    third = run(source, heads, since=c2)
    assert kinds(third) == [("deleted", "backlog/billing.md"), ("new", "backlog/new.md")]
    assert third.report.retired == 1
    assert third.report.new == 1
    assert third.to_commit == c3


def test_hostile_files_are_skipped_and_nothing_outside_the_repository_is_read(repo, tmp_path):
    secret = tmp_path / "outside-secret.md"
    secret.write_text("# TOP SECRET outside the repository\n")
    repo.write("backlog/ok.md", "# Fine\n")
    os.symlink("/etc/passwd", repo.root / "backlog" / "passwd.md")
    os.symlink(secret, repo.root / "backlog" / "escape.md")
    with (repo.root / "backlog" / "huge.md").open("wb") as big:
        big.write(b"# huge\n" + b"x" * (1024 * 1024 - 7))
        big.truncate(FIFTY_MB)  # the rest is a hole of NUL bytes: quick to write
    repo.write("backlog/image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    repo.write("backlog/latin1.md", "# Café\n".encode("latin-1"))
    repo.write("backlog/broken-fm.md", "---\ntitle: [unclosed\n---\n# Body\n")
    repo.write("backlog/bad-date.md", "---\ndate: 2024-13-45\n---\n# Body\n")
    repo.write("backlog/bell\x07.md", "# bell\n")
    repo.commit("hostile")
    with python_file_opens() as opened, GitBacklogSource.open(repo.root) as source:
        plan = build_plan(source, repository=HOME, current_hash=lambda _id: None)
    skipped = {a.path: a.skip_code for a in plan.actions if a.kind is ActionKind.SKIPPED}
    assert skipped == {
        "backlog/bad-date.md": "front_matter",
        "backlog/bell\x07.md": "unsafe_path",
        "backlog/broken-fm.md": "front_matter",
        "backlog/escape.md": "symlink",
        "backlog/huge.md": "too_large",
        "backlog/image.md": "binary",
        "backlog/latin1.md": "undecodable",
        "backlog/passwd.md": "symlink",
    }
    assert [a.path for a in plan.actions if a.kind is ActionKind.NEW] == ["backlog/ok.md"]
    assert opened, "the audit hook saw no file opens at all"
    assert not any(path.startswith(("/etc", str(tmp_path / "outside"))) for path in opened)
    assert not any(p.startswith(str(repo.root / "backlog")) for p in opened)  # no working tree


def test_a_hand_made_tree_with_dot_dot_entries_is_refused(repo, source):
    repo.commit_tree(
        {"ok.md": "# ok\n", "../escape.md": "# up\n", "a/../../b.md": "x", "a\nb.md": "x"},
        "hostile tree",
    )
    plan = build_plan(source, repository=HOME, current_hash=lambda _id: None)
    assert {a.path: a.skip_code for a in plan.actions} == {
        "../escape.md": "unsafe_path",
        "a/../../b.md": "unsafe_path",
        "a\nb.md": "unsafe_path",
        "ok.md": None,
    }


def test_routing_and_the_pii_barrier_apply_to_real_files(repo, source):
    routing = load_config(
        """
rules:
  - name: secrets
    override: true
    match: {all: [{field: signals.pii_kinds, contains: secret}]}
    actions: {policy: reject}
  - name: pii
    override: true
    match: {all: [{field: signals.pii_detected, equals: true}]}
    actions: {policy: redact}
  - name: teams
    match: {all: [{field: front_matter.team, present: true}]}
    actions: {repository: "team-{front_matter.team}", tags: [team]}
"""
    )
    repo.write("backlog/pay.md", "---\nteam: payments\n---\n# Pay\nCard 4111 1111 1111 1111.\n")
    repo.write("backlog/key.md", "# Key\naws AKIAIOSFODNN7EXAMPLE\n")
    repo.write("backlog/plain.md", "# Plain\n")
    repo.commit("routing")
    plan = build_plan(source, repository=HOME, current_hash=lambda _id: None, routing=routing)
    key, pay, plain = plan.actions
    assert key.kind is ActionKind.SKIPPED
    assert key.skip_code == "rejected"
    assert pay.repository == "acme/eng/team-payments"
    assert pay.tags == ("team",)
    assert "4111" not in (pay.body or "")
    assert pay.pii_counts == {"payment_card": 1}
    assert pay.element_id == element_id_for("acme/eng/team-payments", source.source_repo, pay.path)
    assert plain.repository == str(HOME)
    assert plan.report.redacted_files == 1


def test_a_path_holding_personal_data_is_rejected_and_reported_masked(repo, source):
    repo.write("backlog/user-carol@example.com/notes.md", "# Carol's notes\n")
    repo.write("backlog/4111111111111111.md", "# Card\n")
    repo.write("backlog/4111.1111.1111.1111/plan.md", "# Dotted\n")
    repo.write("backlog/ok.md", "# Fine, links [notes](user-carol@example.com/notes.md)\n")
    repo.commit("paths with pii")
    plan = build_plan(source, repository=HOME, current_hash=lambda _id: None)
    skipped = [a for a in plan.actions if a.kind is ActionKind.SKIPPED]
    assert {a.skip_code for a in skipped} == {"pii_path"}
    assert len(skipped) == 3
    for action in skipped:
        shown = f"{action.path} {action.skip_reason}"
        assert "carol" not in shown
        assert "4111" not in shown
        assert action.path.startswith("backlog/")
        assert "█" in action.path
    assert [a.path for a in plan.actions if a.kind is ActionKind.NEW] == ["backlog/ok.md"]
    assert not any(link.resolved for link in plan.actions[-1].links)


def test_the_glob_and_size_cap_are_configurable(repo, source):
    repo.write("backlog/a.md", "# A\n" + "word " * 100)
    repo.write("notes/b.md", "# B\n")
    repo.commit("first")
    options = PlanOptions(glob="backlog/*.md", max_bytes=100)
    plan = build_plan(source, repository=HOME, current_hash=lambda _id: None, options=options)
    (action,) = plan.actions
    assert action.path == "backlog/a.md"
    assert action.skip_code == "too_large"


def test_links_resolve_without_a_missing_leading_folder_and_by_a_unique_file_name(repo, source):
    """Monorepo paths (``backlog/433-x.md`` when the source root is the backlog folder itself)
    and bare names of files elsewhere in the source resolve; an ambiguous name does not."""
    repo.write("433-codex.md", "# Codex\n")
    repo.write("deep/nested/600-plan.md", "# Plan\n")
    repo.write("a/dup.md", "# Dup A\n")
    repo.write("b/dup.md", "# Dup B\n")
    repo.write(
        "index.md",
        "# Index\n\nSee [codex](backlog/433-codex.md), `backlog/433-codex.md`, "
        "[plan](600-plan.md) and [dup](dup.md).\n",
    )
    repo.commit("links")
    plan = build_plan(source, repository=HOME, current_hash=lambda _id: None)
    index = next(a for a in plan.actions if a.path == "index.md")
    resolved = {link.target_path for link in index.links if link.resolved}
    assert resolved == {"433-codex.md", "deep/nested/600-plan.md"}
    assert any(not link.resolved for link in index.links)  # dup.md is ambiguous


def test_unresolved_references_say_whether_ambiguous_missing_or_not_a_mirrored_file(repo, source):
    """Each unresolved reference is told apart: several files answer to it (ambiguous), the
    document is not in the source (missing), or it names no file the ingest mirrors (outside
    the glob: source code); the resolved ones are counted too."""
    repo.write("a/dup.md", "# Dup A\n")
    repo.write("b/dup.md", "# Dup B\n")
    repo.write("433-codex.md", "# Codex\n")
    repo.write(
        "index.md",
        "# Index\n\nSee [codex](backlog/433-codex.md), [dup](dup.md), [gone](gone.md) and "
        "[code](services/auth/rbac.ts).\n",
    )
    repo.commit("links")
    plan = build_plan(source, repository=HOME, current_hash=lambda _id: None)
    index = next(a for a in plan.actions if a.path == "index.md")
    by_raw = {link.raw: link for link in index.links}
    assert by_raw["backlog/433-codex.md"].resolved
    assert by_raw["dup.md"].ambiguous
    assert not by_raw["dup.md"].resolved
    assert not by_raw["gone.md"].ambiguous
    assert not by_raw["gone.md"].outside
    assert by_raw["services/auth/rbac.ts"].outside
    links = resolve_links(plan.actions, mirrored_after(plan.actions, MirrorState("src", [])))
    reasons = {u["raw"]: u["reason"] for u in links["index.md"].unresolved}
    assert reasons == {
        "dup.md": "ambiguous",
        "gone.md": "not mirrored",
        "services/auth/rbac.ts": "not a mirrored file",
    }
