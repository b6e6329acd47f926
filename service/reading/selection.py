"""Resolving who may read what, and the version set a read draws from (its selection).

The caller's permissions are compiled once per read into the repositories it may read and the
classifications readable in each; every query of the read (SQL and the keyword index) filters on
exactly that, so nothing unreadable is ever fetched, counted or ranked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from domain.errors import NotFound
from domain.permissions import Action
from domain.values import Classification, RepoRef, higher_classification
from projection.selection import (
    CANONICAL,
    EVIDENCE,
    SelectedVersion,
    Selection,
    valid_at,
)
from service.authz import Caller, Permission, access_levels
from service.core import UnitOfWork
from service.gate import Gate
from service.reading.request import ReadRequest, Scope


def readable_repositories(
    gate: Gate, uow: UnitOfWork, caller: Caller, scope: Scope
) -> dict[str, Permission]:
    """Repository key → permission, for the scope's repository or every readable one of the
    organization. An invisible repository or organization is NOT_FOUND, like a missing one."""
    key = scope.repo_key
    if key is not None:
        ref = RepoRef.parse(key)
        return {ref.key: gate.repository(uow, caller, ref.key, Action.READ)}
    org = RepoRef.parse(f"{scope.org_key}/x").org_key
    perms = gate.permissions(uow, caller, uow.store.list_repository_keys(org))
    out = {repo: perm for repo, perm in perms.items() if perm.can(Action.READ)}
    if not out:
        raise NotFound(f"organization {org} not found", organization=org)
    return out


def _level(element_level: str, version_level: str | None) -> str:
    """The level a selected version is read at (``domain.model.version_classification``)."""
    if not version_level:  # the common case: the version follows its element
        return element_level
    return higher_classification(Classification(element_level), Classification(version_level)).value


def _selected(rows: Iterable[Mapping[Any, Any]]) -> list[SelectedVersion]:
    return [
        SelectedVersion(
            version_id=r["version_id"],
            element_id=r["element_id"],
            repository_key=r["repo_key"],
            source_kind=r["source_kind"],
            classification=_level(r["classification"], r["version_classification"]),
            retired=bool(r["retired"]),
        )
        for r in sorted(rows, key=lambda r: (r["element_id"], r["version_id"]))
    ]


def resolve_selection(
    uow: UnitOfWork, perms: Mapping[str, Permission], req: ReadRequest, at: datetime | None
) -> Selection:
    """The versions this read may use: the selector's canonical versions, then (with
    ``include_evidence``) each evidence element's latest non-retired version, as of ``at``,
    narrowed to the ``valid_at`` window."""
    store = uow.store
    access = access_levels(perms)
    selection = Selection()
    kind = req.selector.kind
    if kind == "published":
        for repo in sorted(access):
            pointer = store.get_pointer(repo)[0] if at is None else store.pointer_as_of(repo, at)
            selection.baselines[repo] = pointer
            if pointer:
                selection.add(_selected(store.pinned_versions(pointer, {repo: access[repo]}, at)))
    elif kind == "baseline_ref":
        baseline_id = str(req.selector.baseline_id)
        header = store.baseline_header(baseline_id)
        if header is None or header["repo_key"] not in access:
            raise NotFound(f"baseline {baseline_id} not found", baseline_id=baseline_id)
        if at is not None and header["created_at"] > at:
            raise NotFound(f"baseline {baseline_id} did not exist at {at.isoformat()}")
        repo = header["repo_key"]
        selection.baselines[repo] = baseline_id
        selection.add(_selected(store.pinned_versions(baseline_id, {repo: access[repo]}, at)))
    elif kind == "head":
        selection.add(_selected(store.latest_versions(access, CANONICAL, at)))
    else:
        rows = store.listed_versions(req.wanted_version_ids, access, at)
        selection.add(_selected(rows), several=True)
    if req.include_evidence:
        selection.add(_selected(store.latest_versions(access, EVIDENCE, at)))
    if req.valid_at is not None:
        instant = req.valid_at.timestamp()
        metadata = store.version_metadata(list(selection.versions))
        selection.keep(v for v, m in metadata.items() if valid_at(m, instant))
    return selection
