"""Repository-relative path helpers: globbing, hostile paths, relative resolution."""

from __future__ import annotations

import pytest

from ingest.paths import glob_match, resolve_relative, unsafe_path_reason


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "backlog/deep/a.md", True),
        ("**/*.md", "a.txt", False),
        ("*.md", "backlog/a.md", False),
        ("backlog/**", "backlog/x/y.md", True),
        ("backlog/**/*.md", "backlog/a.md", True),
        ("backlog/*.md", "backlog/x/a.md", False),
        ("docs/?.md", "docs/a.md", True),
        ("docs/[a-c].md", "docs/b.md", True),
        ("docs/[!a-c].md", "docs/b.md", False),
        ("/backlog/*.md", "backlog/a.md", True),
        ("a+b.md", "a+b.md", True),
    ],
)
def test_globs_follow_gitignore_style_semantics(pattern, path, expected):
    assert glob_match(pattern, path) is expected


@pytest.mark.parametrize(
    "path",
    ["../x.md", "a/../../x.md", "/etc/passwd", "a//b.md", "./a.md", "bad\x07name.md", "a\nb.md"],
)
def test_hostile_paths_are_refused_with_a_reason(path):
    assert unsafe_path_reason(path)


def test_undecodable_path_bytes_are_refused():
    assert unsafe_path_reason(b"caf\xe9.md".decode("utf-8", "surrogateescape"))


def test_ordinary_paths_are_fine():
    assert unsafe_path_reason("backlog/0042 auth (v2).md") is None


def test_relative_targets_resolve_inside_the_repository_only():
    assert resolve_relative("a/b/c.md", "../d.md") == "a/d.md"
    assert resolve_relative("a/c.md", "./x/./y.md") == "a/x/y.md"
    assert resolve_relative("a/c.md", "/top.md") == "top.md"
    assert resolve_relative("a/c.md", "../../out.md") is None
