"""What the ingest planner needs from a backlog source, independent of git itself.

``GitBacklogSource`` (in ``ingest.git_source``) implements :class:`BacklogSource`; unit tests use an
in-memory fake. The service opens sources through a :class:`BacklogSourceFactory` that the
composition root hands it, so it never imports GitPython. Nothing here imports GitPython.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000  # a submodule: a commit of another repository, not a file
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")


class SourceError(Exception):
    """The source cannot be opened, a ref does not resolve, or reading it failed."""


def is_git_url(source: str) -> bool:
    """Whether ``source`` is a URL to clone (``scheme://…`` or scp-like ``user@host:path``)."""
    return "://" in source or bool(_SCP_LIKE.match(source))


@dataclass(frozen=True)
class TreeEntry:
    """One file entry of a commit's tree: its path, git file mode, blob id and size in bytes."""

    path: str
    mode: int
    blob_sha: str
    size: int

    @property
    def is_symlink(self) -> bool:
        """Git stores symlinks as blobs holding the link target, with mode 120000."""
        return self.mode == MODE_SYMLINK

    @property
    def is_submodule(self) -> bool:
        """A gitlink entry (mode 160000) points at another repository's commit."""
        return self.mode == MODE_GITLINK


class ChangeKind(StrEnum):
    """How a path changed between two commits."""

    ADDED = "added"
    MODIFIED = "modified"
    RENAMED = "renamed"
    DELETED = "deleted"


@dataclass(frozen=True)
class FileChange:
    """One changed path between two commits.

    ``path`` is the path at the new commit (for a deletion: the deleted path). ``old_path`` is set
    for renames; ``old_blob_sha``/``old_mode`` describe the file at the old commit (``None`` for
    additions). ``similarity`` is git's rename similarity index (0-100) for renames.
    """

    kind: ChangeKind
    path: str
    old_path: str | None = None
    old_blob_sha: str | None = None
    old_mode: int | None = None
    similarity: int | None = None

    @property
    def old_file_blob(self) -> str | None:
        """The old blob id when it held file content (not a symlink target or a submodule)."""
        return None if self.old_mode in (MODE_SYMLINK, MODE_GITLINK) else self.old_blob_sha


class BlobTooLargeError(Exception):
    """A blob is larger than the caller's size cap; it was not read."""

    def __init__(self, size: int, max_bytes: int) -> None:
        super().__init__(f"file is {size} bytes, over the {max_bytes}-byte cap")
        self.size = size
        self.max_bytes = max_bytes


class BacklogSource(Protocol):
    """Read-only access to a versioned backlog (files at commits), never to a working tree."""

    @property
    def source_repo(self) -> str:
        """Stable, credential-free identity of the source (URL or absolute path)."""
        ...

    def resolve(self, ref: str) -> str:
        """Resolve a branch, tag or sha to a full commit sha."""
        ...

    def has_commit(self, sha: str) -> bool:
        """Whether ``sha`` names a commit in the source (history may have been rewritten)."""
        ...

    def list_files(self, commit: str, glob: str | None = None) -> list[TreeEntry]:
        """Every file entry at ``commit`` (optionally only paths matching ``glob``), sorted."""
        ...

    def diff(
        self, old_commit: str, new_commit: str, rename_similarity: int = 90
    ) -> list[FileChange]:
        """Changed paths from ``old_commit`` to ``new_commit`` with rename detection."""
        ...

    def read_blob(self, blob_sha: str, max_bytes: int) -> bytes:
        """The blob's bytes; raises :class:`BlobTooLargeError` rather than read past the cap."""
        ...


class BacklogSourceFactory(Protocol):
    """Opens a backlog source by name (a path or URL); URL sources are cloned under
    ``cache_dir`` (``credential``, a token, authenticates a URL's fetch; it is never stored).
    Raises :class:`SourceError`; the source is closed when its context exits."""

    def __call__(
        self, source: str, *, cache_dir: Path | None = None, credential: str | None = None
    ) -> AbstractContextManager[BacklogSource]: ...
