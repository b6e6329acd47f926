"""Real git repositories built in a temporary directory, driven through the git CLI."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ingest.git_source import GitBacklogSource

_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ingest Test",
    "GIT_AUTHOR_EMAIL": "ingest@test.invalid",
    "GIT_COMMITTER_NAME": "Ingest Test",
    "GIT_COMMITTER_EMAIL": "ingest@test.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class GitRepo:
    """A throwaway repository: write files, commit, and read back shas."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main")
        self.git("config", "core.autocrlf", "false")

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        env = {**os.environ, **_IDENTITY, "HOME": str(self.root)}
        done = subprocess.run(
            ["git", *args], cwd=self.root, env=env, input=stdin, capture_output=True, check=True
        )
        return done.stdout.decode("utf-8", "replace").strip()

    def write(self, path: str, content: bytes | str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
        return target

    def move(self, old: str, new: str) -> None:
        target = self.root / new
        target.parent.mkdir(parents=True, exist_ok=True)
        (self.root / old).rename(target)

    def remove(self, path: str) -> None:
        (self.root / path).unlink()

    def commit(self, message: str) -> str:
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def commit_tree(self, files: dict[str, str], message: str) -> str:
        """Commit a hand-made tree ``{path: content}`` on ``main``, bypassing the index, which
        refuses names like ``..`` that a hostile remote can still serve."""
        sha = self.git("commit-tree", self._tree(files), "-m", message)
        self.git("update-ref", "refs/heads/main", sha)
        return sha

    def _tree(self, files: dict[str, str]) -> str:
        blobs: dict[str, str] = {}
        folders: dict[str, dict[str, str]] = {}
        for path, content in files.items():
            head, sep, rest = path.partition("/")
            if sep:
                folders.setdefault(head, {})[rest] = content
            else:
                blobs[head] = self.git("hash-object", "-w", "--stdin", stdin=content.encode())
        records = [f"100644 blob {sha}\t{name}" for name, sha in blobs.items()]
        records += [f"040000 tree {self._tree(sub)}\t{name}" for name, sub in folders.items()]
        return self.git("mktree", "-z", stdin=b"".join(r.encode() + b"\0" for r in records))


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """An empty repository on branch ``main``."""
    return GitRepo(tmp_path / "backlog-repo")


@pytest.fixture
def source(repo: GitRepo) -> Iterator[GitBacklogSource]:
    """``repo`` opened as a backlog source (closed after the test)."""
    with GitBacklogSource.open(repo.root) as opened:
        yield opened
