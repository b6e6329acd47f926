"""GitBacklogSource against real repositories: refs, listings, diffs, blobs, clones."""

from __future__ import annotations

import os

import pytest

from ingest.git_source import GitBacklogSource, GitSourceError, is_git_url, public_source_name
from ingest.source import MODE_SYMLINK, BlobTooLargeError, ChangeKind


def test_a_ref_resolves_to_the_full_commit_sha(repo, source):
    repo.write("a.md", "# A\n")
    sha = repo.commit("first")
    repo.git("tag", "v1")
    assert source.resolve("main") == sha
    assert source.resolve("v1") == sha
    assert source.resolve(sha[:8]) == sha
    assert source.has_commit(sha)


@pytest.mark.parametrize("ref", ["nope", "--output=/tmp/x", "main with space", ""])
def test_unknown_or_hostile_refs_are_refused(repo, source, ref):
    repo.write("a.md", "x")
    repo.commit("first")
    with pytest.raises(GitSourceError):
        source.resolve(ref)


def test_a_missing_commit_is_reported_as_absent(repo, source):
    repo.write("a.md", "x")
    repo.commit("first")
    assert not source.has_commit("0" * 40)
    assert not source.has_commit("not-a-sha")


def test_files_are_listed_with_mode_size_and_blob_matching_the_glob(repo, source):
    repo.write("backlog/a.md", "# A\n")
    repo.write("backlog/deep/b.md", "# B\n")
    repo.write("README.txt", "hi")
    os.symlink("/etc/passwd", repo.root / "backlog" / "evil.md")
    sha = repo.commit("first")
    entries = source.list_files(sha, "backlog/**/*.md")
    assert [e.path for e in entries] == ["backlog/a.md", "backlog/deep/b.md", "backlog/evil.md"]
    assert entries[0].size == 4
    assert not entries[0].is_symlink
    assert entries[2].mode == MODE_SYMLINK
    assert entries[2].is_symlink


def test_the_diff_reports_adds_edits_renames_and_deletes(repo, source):
    body = "# Stable\n" + "".join(f"line {i}\n" for i in range(20))
    repo.write("keep.md", "# Keep\n")
    repo.write("edit.md", "# Edit\n")
    repo.write("move.md", body)
    repo.write("drop.md", "# Drop\n")
    first = repo.commit("first")
    repo.write("edit.md", "# Edit\nchanged\n")
    repo.move("move.md", "moved/here.md")
    repo.write("moved/here.md", body + "one more line\n")
    repo.remove("drop.md")
    repo.write("new.md", "# New\n")
    second = repo.commit("second")
    changes = {(c.kind, c.path, c.old_path) for c in source.diff(first, second)}
    assert changes == {
        (ChangeKind.MODIFIED, "edit.md", None),
        (ChangeKind.RENAMED, "moved/here.md", "move.md"),
        (ChangeKind.DELETED, "drop.md", None),
        (ChangeKind.ADDED, "new.md", None),
    }


def test_a_rename_with_heavy_edits_is_a_delete_and_an_add(repo, source):
    repo.write("a.md", "# Title\nold text\n")
    first = repo.commit("first")
    repo.move("a.md", "b.md")
    repo.write("b.md", "# Other\ncompletely different words here\n")
    second = repo.commit("second")
    kinds = sorted(c.kind for c in source.diff(first, second, rename_similarity=90))
    assert kinds == [ChangeKind.ADDED, ChangeKind.DELETED]


def test_blobs_are_read_by_id_and_the_size_cap_refuses_before_reading(repo, source):
    repo.write("a.md", "x" * 100)
    sha = repo.commit("first")
    (entry,) = source.list_files(sha)
    assert source.read_blob(entry.blob_sha, 100) == b"x" * 100
    with pytest.raises(BlobTooLargeError, match="100 bytes, over the 99-byte cap"):
        source.read_blob(entry.blob_sha, 99)


def test_a_symlink_blob_holds_only_its_target_text(repo, source):
    os.symlink("/etc/passwd", repo.root / "evil.md")
    sha = repo.commit("first")
    (entry,) = source.list_files(sha)
    assert source.read_blob(entry.blob_sha, 1000) == b"/etc/passwd"


def test_trees_with_dot_dot_and_control_characters_are_listed_verbatim(repo, source):
    sha = repo.commit_tree({"ok.md": "# ok", "bad\x07.md": "# bell", "../up.md": "# up"}, "evil")
    assert [e.path for e in source.list_files(sha)] == ["../up.md", "bad\x07.md", "ok.md"]


def test_a_local_path_that_is_not_a_repository_is_an_error(tmp_path):
    with pytest.raises(GitSourceError, match="cannot open"):
        GitBacklogSource.open(tmp_path)


def test_a_url_needs_a_cache_directory(repo):
    with pytest.raises(GitSourceError, match="cache directory"):
        GitBacklogSource.open(f"file://{repo.root}")


def test_a_url_is_mirrored_into_the_cache_and_refreshed_on_the_next_open(repo, tmp_path):
    repo.write("a.md", "# A\n")
    first = repo.commit("first")
    cache = tmp_path / "cache"
    url = f"file://{repo.root}"
    with GitBacklogSource.open(url, cache_dir=cache) as source:
        assert source.resolve("main") == first
        assert source.source_repo == url
    repo.write("b.md", "# B\n")
    second = repo.commit("second")
    with GitBacklogSource.open(url, cache_dir=cache) as source:
        assert source.resolve("main") == second
    assert len(list(cache.iterdir())) == 1


def test_source_names_drop_credentials_and_resolve_paths(tmp_path):
    assert public_source_name("https://user:tok@git.example:8443/a.git") == (
        "https://git.example:8443/a.git"
    )
    assert public_source_name("git@github.com:org/repo.git") == "git@github.com:org/repo.git"
    assert public_source_name(str(tmp_path / "x" / "..")) == tmp_path.resolve().as_posix()
    assert is_git_url("ssh://h/r")
    assert not is_git_url("/srv/repo")


def test_a_source_that_looks_like_an_option_is_refused():
    with pytest.raises(GitSourceError, match="option"):
        GitBacklogSource.open("--upload-pack=touch /tmp/pwned")
