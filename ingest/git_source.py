"""``GitBacklogSource``: a markdown backlog read straight from a git object database.

This is the only module that imports GitPython. Files are read as blobs by id from the object
database, never from a working tree, so a symlink is just a small blob with mode 120000 that is
never followed, and nothing outside the repository is ever opened.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit, urlunsplit

import git

from ingest.paths import glob_match
from ingest.source import (
    BlobTooLargeError,
    ChangeKind,
    FileChange,
    SourceError,
    TreeEntry,
    is_git_url,
)

_HEX_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_BAD_REF = re.compile(r"[\x00-\x20\x7f]")


class GitSourceError(SourceError):
    """The source cannot be opened, a ref does not resolve, or git failed."""


def public_source_name(source: str) -> str:
    """A stable, credential-free identity for a source: URLs lose user:password, paths resolve."""
    if not is_git_url(source):
        return Path(source).resolve().as_posix()
    if "://" not in source:
        return source
    parts = urlsplit(source)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class GitBacklogSource:
    """A git repository (local path or cloned URL) seen as files at commits.

    Use :meth:`open`, and close it (or use it as a context manager): GitPython keeps
    ``git cat-file`` helper processes alive until then.
    """

    def __init__(self, repo: git.Repo, source_repo: str) -> None:
        self._repo = repo
        self._source_repo = source_repo

    @classmethod
    def open(
        cls,
        source: str | os.PathLike[str],
        *,
        cache_dir: Path | None = None,
        source_name: str | None = None,
        credential: str | None = None,
    ) -> GitBacklogSource:
        """Open a local repository, or mirror-clone (or refresh) a URL under ``cache_dir``;
        ``credential`` (a token) is sent to an ``http(s)`` URL as an HTTP header through git's
        environment, never written into the URL, the clone's config or the command line."""
        text = os.fspath(source)
        if text.startswith("-"):
            raise GitSourceError(f"refusing source that looks like an option: {text!r}")
        name = source_name or public_source_name(text)
        try:
            repo = (
                _clone_or_fetch(text, cache_dir, credential) if is_git_url(text) else git.Repo(text)
            )
        except (git.GitError, OSError) as exc:
            raise GitSourceError(f"cannot open git source {name!r}: {_first_line(exc)}") from exc
        return cls(repo, name)

    @property
    def source_repo(self) -> str:
        """Stable identity of the source used in element ids and provenance."""
        return self._source_repo

    def close(self) -> None:
        """Stop GitPython's helper processes."""
        self._repo.close()

    def __enter__(self) -> GitBacklogSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def resolve(self, ref: str) -> str:
        """Resolve a branch, tag or (abbreviated) sha to the full sha of a commit."""
        if not ref or ref.startswith("-") or _BAD_REF.search(ref):
            raise GitSourceError(f"invalid ref {ref!r}")
        try:
            out = self._git("rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
        except git.GitCommandError as exc:
            raise GitSourceError(f"ref {ref!r} does not name a commit") from exc
        return out.decode("ascii").strip()

    def has_commit(self, sha: str) -> bool:
        """Whether the full ``sha`` names a commit present in the object database."""
        if not _HEX_SHA.match(sha):
            return False
        try:
            self._git("cat-file", "-e", f"{sha}^{{commit}}")
        except git.GitCommandError:
            return False
        return True

    def list_files(self, commit: str, glob: str | None = None) -> list[TreeEntry]:
        """File entries of ``commit``'s whole tree (optionally filtered by ``glob``), by path."""
        out = self._git("ls-tree", "-r", "-l", "-z", "--full-tree", self._commit(commit))
        entries = [_parse_ls_tree(record) for record in out.split(b"\0") if record]
        if glob is not None:
            entries = [e for e in entries if glob_match(glob, e.path)]
        return sorted(entries, key=lambda e: e.path)

    def diff(
        self, old_commit: str, new_commit: str, rename_similarity: int = 90
    ) -> list[FileChange]:
        """Changed paths between two commits; renames need ``rename_similarity`` percent."""
        threshold = min(max(rename_similarity, 1), 100)
        out = self._git(
            "diff-tree", "-r", "-z", "--raw", "--no-commit-id", f"-M{threshold}%",
            self._commit(old_commit), self._commit(new_commit),
        )  # fmt: skip
        return _parse_raw_diff(out.split(b"\0"))

    def read_blob(self, blob_sha: str, max_bytes: int) -> bytes:
        """Read a blob by id, refusing (without reading) one larger than ``max_bytes``."""
        if not _HEX_SHA.match(blob_sha):
            raise GitSourceError(f"invalid blob id {blob_sha!r}")
        binsha = bytes.fromhex(blob_sha)
        info = self._repo.odb.info(binsha)
        if info.type != b"blob":
            raise GitSourceError(f"object {blob_sha} is a {info.type.decode()}, not a blob")
        if info.size > max_bytes:
            raise BlobTooLargeError(info.size, max_bytes)
        data: bytes = self._repo.odb.stream(binsha).read()
        return data

    def change_times(self, commit: str) -> dict[str, int]:
        """Path → commit time (epoch seconds) of the last commit touching it, for every path
        in the history of ``commit``: one ``git log`` walk, newest first, first sighting wins."""
        out = self._git(
            "-c", "core.quotePath=false", "log", "--format=@%ct", "--name-only",
            "--no-renames", self._commit(commit), "--",
        )  # fmt: skip
        times: dict[str, int] = {}
        current = 0
        for raw in out.decode("utf-8", "surrogateescape").split("\n"):
            if raw.startswith("@") and raw[1:].isdigit():
                current = int(raw[1:])
            elif raw and raw not in times:
                times[raw] = current
        return times

    def _commit(self, sha: str) -> str:
        if not _HEX_SHA.match(sha):
            raise GitSourceError(f"expected a full commit sha, got {sha!r}")
        return sha

    def _git(self, *args: str) -> bytes:
        out = self._repo.git.execute(
            ["git", *args], stdout_as_string=False, strip_newline_in_stdout=False
        )
        assert isinstance(out, bytes)
        return out


def _credential_env(url: str, credential: str | None) -> dict[str, str]:
    """git's environment for a fetch: never prompt; with a credential for an ``http(s)`` URL,
    an ``Authorization: Basic`` header (user: the URL's, else ``x-access-token``) passed as
    ``GIT_CONFIG_*`` variables, so the token is in no file and no command line."""
    env = {"GIT_TERMINAL_PROMPT": "0"}
    parts = urlsplit(url) if "://" in url else None
    if credential and parts is not None and parts.scheme in ("http", "https"):
        user = parts.username or "x-access-token"
        basic = base64.b64encode(f"{user}:{credential}".encode()).decode()
        env |= {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.extraHeader",
            "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
        }
    return env


def _clone_or_fetch(url: str, cache_dir: Path | None, credential: str | None = None) -> git.Repo:
    """Mirror-clone ``url`` into the cache (one directory per URL), or fetch if already there."""
    env = {**os.environ, **_credential_env(url, credential)}
    if cache_dir is None:
        raise GitSourceError("a cache directory is needed to clone a URL source")
    key = hashlib.sha256(public_source_name(url).encode()).hexdigest()[:24]
    target = Path(cache_dir) / f"src-{key}.git"
    if target.exists():
        repo = git.Repo(target)
        repo.git.fetch("--prune", "--quiet", "origin", env=env)
        return repo
    target.parent.mkdir(parents=True, exist_ok=True)
    return git.Repo.clone_from(url, target, env=env, multi_options=["--mirror", "--quiet"])


def _parse_ls_tree(record: bytes) -> TreeEntry:
    """Parse ``<mode> <type> <sha> <size>\\t<path>`` (``git ls-tree -l``)."""
    meta, _, raw_path = record.partition(b"\t")
    mode, _type, sha, size = meta.split()
    return TreeEntry(
        path=_decode_path(raw_path),
        mode=int(mode, 8),
        blob_sha=sha.decode("ascii"),
        size=int(size) if size.isdigit() else 0,
    )


def _parse_raw_diff(tokens: list[bytes]) -> list[FileChange]:
    """Parse ``git diff-tree -z --raw`` tokens: ``:<modes> <shas> <status>``, then path(s)."""
    changes: list[FileChange] = []
    i = 0
    while i < len(tokens) and tokens[i].startswith(b":"):
        old_mode, _new_mode, old_sha, _new_sha, status = tokens[i][1:].decode("ascii").split()
        letter = status[0]
        paths = [_decode_path(t) for t in tokens[i + 1 : i + (3 if letter in "RC" else 2)]]
        i += 1 + len(paths)
        if letter in "AC":  # copies are only reported with -C, which is not passed
            changes.append(FileChange(ChangeKind.ADDED, paths[-1]))
            continue
        kind = {"R": ChangeKind.RENAMED, "D": ChangeKind.DELETED}.get(letter, ChangeKind.MODIFIED)
        changes.append(
            FileChange(
                kind,
                paths[-1],  # M and T (type change, e.g. a file became a symlink) count as edits
                old_path=paths[0] if kind is ChangeKind.RENAMED else None,
                old_blob_sha=old_sha,
                old_mode=int(old_mode, 8),
                similarity=int(status[1:]) if kind is ChangeKind.RENAMED else None,
            )
        )
    return changes


def _decode_path(raw: bytes) -> str:
    """Git paths are bytes; undecodable ones keep surrogates so path checks can refuse them."""
    return raw.decode("utf-8", "surrogateescape")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
