"""Repository-relative path helpers: glob matching and hostile-path checks.

Paths here are always POSIX, relative to the source repository root, exactly as git stores them.
"""

from __future__ import annotations

import functools
import posixpath
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_PATH_CHARS = 1000  # what the store keeps of a path (ingest_files.path, provenance path)


def unsafe_path_reason(path: str) -> str | None:
    """Return why ``path`` must not be ingested, or ``None`` when it is a plain relative path.

    Git trees written with plumbing (``git mktree``) may hold ``..`` entries or control characters;
    such paths are refused before anything else looks at them.
    """
    if not path:
        return "empty path"
    if len(path) > MAX_PATH_CHARS:
        return f"path is longer than {MAX_PATH_CHARS} characters"
    if _CONTROL.search(path):
        return "path contains control characters"
    if "\ufffd" in path or any(0xDC80 <= ord(c) <= 0xDCFF for c in path):
        return "path is not valid UTF-8"
    if path.startswith("/"):
        return "path is absolute"
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "path has empty, '.' or '..' components"
    return None


@functools.lru_cache(maxsize=256)
def _compile_glob(pattern: str) -> re.Pattern[str]:
    """Translate a gitignore-style glob into a regular expression.

    ``**`` crosses directories (``**/`` may match nothing, so ``**/*.md`` matches ``a.md``);
    ``*`` and ``?`` never match ``/``; ``[...]`` is a character class.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            negate = body.startswith(("!", "^"))
            body = re.escape(body[1:] if negate else body).replace(r"\-", "-")
            out.append(f"[{'^' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def glob_match(pattern: str, path: str) -> bool:
    """Whether the repository-relative ``path`` matches the glob ``pattern`` as a whole."""
    return _compile_glob(pattern.lstrip("/")).fullmatch(path) is not None


def resolve_relative(base_file: str, target: str) -> str | None:
    """Resolve ``target`` against the directory of ``base_file``; ``/x`` is root-relative.

    Returns ``None`` when the result would leave the repository root.
    """
    if target.startswith("/"):
        joined = target.lstrip("/")
    else:
        joined = posixpath.join(posixpath.dirname(base_file), target)
    parts: list[str] = []
    for part in joined.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) or None
