"""Which file a reference names: one resolver for links and for lifecycle statements.

Real backlogs cite each other as monorepo paths (``backlog/433-codex-cli-057.md`` while the
source root is that ``backlog/`` folder), as bare names of files in other folders, or as
backlog numbers (``Supersedes: 432``); see :func:`resolve_reference` for the rules, in order.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable, Mapping


def names_index(paths: Iterable[str]) -> dict[str, list[str]]:
    """File name → the paths ending in it (for :func:`resolve_reference`)."""
    out: dict[str, list[str]] = {}
    for path in paths:
        out.setdefault(posixpath.basename(path), []).append(path)
    return out


def resolve_reference(
    ref: str,
    from_path: str,
    paths: Collection[str],
    names: Mapping[str, list[str]] | None = None,
) -> str | None:
    """The path among ``paths`` a reference names, or ``None`` (missing or ambiguous); see
    :func:`resolve_reference_outcome`."""
    return resolve_reference_outcome(ref, from_path, paths, names)[0]


def resolve_reference_outcome(
    ref: str,
    from_path: str,
    paths: Collection[str],
    names: Mapping[str, list[str]] | None = None,
) -> tuple[str | None, bool]:
    """The path among ``paths`` a reference names (``None``: missing or ambiguous) and whether
    it was ambiguous — several files answer to it, so none is chosen:
    relative to the referring file, then to the source root, then with leading folders that do
    not exist dropped (``backlog/433-x.md`` when the source root is that folder), then by a
    file name unique in the source; a bare number (``432``) names the unique file whose name
    starts ``432-``. ``names`` is :func:`names_index` of ``paths``, built once per run."""
    ref = ref.strip().split("#", 1)[0]
    if not ref:
        return None, False
    if ref.isdigit():
        hits = [p for p in paths if posixpath.basename(p).startswith(f"{ref}-")]
        return (hits[0], False) if len(hits) == 1 else (None, len(hits) > 1)
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(from_path), ref))
    plain = posixpath.normpath(ref)
    parts = plain.split("/")
    for candidate in (joined, plain, *("/".join(parts[i:]) for i in range(1, len(parts)))):
        if candidate in paths:
            return candidate, False
    same_name = (names if names is not None else names_index(paths)).get(parts[-1], [])
    return (same_name[0], False) if len(same_name) == 1 else (None, len(same_name) > 1)
