"""The read side of the in-memory store (``tests.fakes``): ``ReadModelStore`` and
``ReadContextStore`` over a ``FakeState``, row for row what ``storage.store_read`` returns.

The SQL adapter trims in its ``WHERE`` clauses; here the same predicates are plain functions:

- *readable element*: its repository is a key of ``access`` with at least one level, and its
  current classification is one of them (``_readable``);
- *readable version*: a version written at its own level (``ElementVersion.classification``)
  needs that level readable in its element's repository too (``_version_readable``);
- *as of* ``at``: versions recorded by ``at``, retirements from the retirement history,
  relationships recorded by ``at`` and not yet retired then; ``at=None`` means now (the
  element's head, its ``retired_at``, relationships not retired).

Stored read contexts go through a JSON round trip, like the SQL ``JSON`` columns: what comes
back is a fresh copy, and a response that would not serialize fails here as it would there.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.errors import Conflict
from domain.model import Element, ElementVersion, Relationship
from domain.values import SourceKind

if TYPE_CHECKING:
    from service.ports import Access, Row
    from tests.fakes import FakeState

READABLE_KINDS = (SourceKind.CANONICAL.value, SourceKind.INGESTED_EVIDENCE.value)
"""The kinds a listed version may be of (``storage.store_read.READABLE_KINDS``)."""


def _readable(el: Element, access: Access) -> bool:
    return el.classification.value in access.get(el.repo_key, ())


def _version_readable(el: Element, v: ElementVersion, access: Access) -> bool:
    if v.classification is None:
        return True
    return v.classification.value in access.get(el.repo_key, ())


def _live(r: Relationship, at: datetime | None) -> bool:
    if at is None:
        return r.retired_at is None
    return r.recorded_at <= at and (r.retired_at is None or r.retired_at > at)


def _json(value: dict[str, Any]) -> dict[str, Any]:
    """What a JSON column gives back for ``value``."""
    out: dict[str, Any] = json.loads(json.dumps(value))
    return out


_STAMPS = itertools.count(1)


class FakeReadStore:
    """Mixin of ``FakeStore``: the read model's selections and the stored read contexts."""

    state: FakeState

    # -- helpers ---------------------------------------------------------------------------
    def _retired(self, el: Element, at: datetime | None) -> bool:
        """Whether the element was retired at ``at`` (now when None)."""
        if at is None:
            return el.retired_at is not None
        return any(
            e == el.element_id and since <= at and (until is None or until > at)
            for e, since, until in self.state.retirements
        )

    def _selected(self, v: ElementVersion, el: Element, retired: bool) -> dict[str, Any]:
        """The columns every selection returns (``store_read._SELECTED`` and ``retired``)."""
        return {
            "version_id": v.version_id,
            "element_id": v.element_id,
            "repo_key": el.repo_key,
            "source_kind": el.source_kind.value,
            "classification": el.classification.value,
            "version_classification": v.classification.value if v.classification else None,
            "retired": retired,
        }

    # -- ReadModelStore: selections --------------------------------------------------------
    def element_page(self, access: Access, after: str | None, limit: int) -> list[dict[str, Any]]:
        rows = []
        for el in sorted(self.state.elements.values(), key=lambda e: e.element_id):
            if after is not None and el.element_id <= after:
                continue
            v = self.state.versions.get(el.head_version_id or "")
            if v is None or el.source_kind.value not in READABLE_KINDS:
                continue
            if not (_readable(el, access) and _version_readable(el, v, access)):
                continue
            rows.append(
                {
                    "element_id": el.element_id,
                    "repo_key": el.repo_key,
                    "element_kind": el.element_kind,
                    "type_key": el.type_key,
                    "source_kind": el.source_kind.value,
                    "classification": el.classification.value,
                    "head_version_id": el.head_version_id,
                    "retired_at": el.retired_at,
                    "title": v.title,
                }
            )
        return rows[:limit]

    def selection_stamp(self) -> int:
        """A new stamp on every call: the fake tracks no writes, so nothing is ever reused."""
        return next(_STAMPS)

    def latest_versions(self, access: Access, source_kind: str, at: datetime | None) -> list[Row]:
        out: list[Row] = []
        for el in sorted(self.state.elements.values(), key=lambda e: e.element_id):
            if el.source_kind.value != source_kind or not _readable(el, access):
                continue
            if at is None:
                head = self.state.versions.get(el.head_version_id or "")
                if el.retired_at is not None or head is None:
                    continue
            else:
                then = [
                    v
                    for v in self.state.versions.values()
                    if v.element_id == el.element_id and v.recorded_at <= at
                ]
                if not then or self._retired(el, at):
                    continue
                head = max(then, key=lambda v: v.seq)
            if _version_readable(el, head, access):
                out.append(self._selected(head, el, retired=False))
        return out

    def pinned_versions(self, baseline_id: str, access: Access, at: datetime | None) -> list[Row]:
        baseline = self.state.baselines.get(baseline_id)
        out: list[Row] = []
        for element_id, version_id in sorted(baseline.pins.items() if baseline else ()):
            el, v = self.state.elements.get(element_id), self.state.versions.get(version_id)
            if el is None or v is None:
                continue
            if _readable(el, access) and _version_readable(el, v, access):
                out.append(self._selected(v, el, self._retired(el, at)))
        return out

    def listed_versions(
        self, version_ids: Sequence[str], access: Access, at: datetime | None
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for version_id in sorted(set(version_ids)):
            v = self.state.versions.get(version_id)
            el = self.state.elements.get(v.element_id) if v else None
            if v is None or el is None or el.source_kind.value not in READABLE_KINDS:
                continue
            if at is not None and v.recorded_at > at:
                continue
            if _readable(el, access) and _version_readable(el, v, access):
                out.append(self._selected(v, el, self._retired(el, at)))
        return out

    def baseline_header(self, baseline_id: str) -> dict[str, Any] | None:
        b = self.state.baselines.get(baseline_id)
        if b is None:
            return None
        return {"baseline_id": b.baseline_id, "repo_key": b.repo_key, "created_at": b.created_at}

    # -- ReadModelStore: candidate rows ----------------------------------------------------
    def version_metadata(self, version_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        found = (self.state.versions.get(i) for i in sorted(set(version_ids)))
        return {v.version_id: json.loads(json.dumps(v.metadata or {})) for v in found if v}

    def version_rows(self, version_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for version_id in sorted(set(version_ids)):
            v = self.state.versions.get(version_id)
            el = self.state.elements.get(v.element_id) if v else None
            if v is None or el is None:
                continue
            p = v.provenance
            out[version_id] = {
                "version_id": v.version_id,
                "element_id": v.element_id,
                "seq": v.seq,
                "title": v.title,
                "body": v.body,
                "metadata": json.loads(json.dumps(v.metadata)),
                "recorded_at": v.recorded_at,
                "actor_id": p.actor_id,
                "source_repo": p.source_repo,
                "commit_sha": p.commit_sha,
                "path": p.path,
                "erased_at": v.erased_at,
                "erased_by": v.erased_by,
                "repo_key": el.repo_key,
                "source_kind": el.source_kind.value,
                "type_key": el.type_key,
                "classification": el.classification.value,  # the element's level
            }
        return out

    # -- ReadModelStore: relationships -----------------------------------------------------
    def neighbours(
        self,
        element_ids: Sequence[str],
        access: Access,
        at: datetime | None,
        type_keys: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        wanted, types = set(element_ids), set(type_keys)
        rows: list[dict[str, Any]] = []
        for r in self.state.relationships.values():
            if not _live(r, at) or (types and r.type_key not in types):
                continue
            # both directions, like the SQL's two statements (a self-loop comes back twice)
            for near, far in (
                (r.source_element_id, r.target_element_id),
                (r.target_element_id, r.source_element_id),
            ):
                el = self.state.elements.get(far)
                if near in wanted and el is not None and _readable(el, access):
                    rows.append(
                        {
                            "relationship_id": r.relationship_id,
                            "type_key": r.type_key,
                            "source_element_id": r.source_element_id,
                            "target_element_id": r.target_element_id,
                            "from": near,
                            "to": far,
                            "recorded_at": r.recorded_at,
                        }
                    )
        rows.sort(key=lambda x: (x["from"], x["recorded_at"], x["relationship_id"], x["to"]))
        return rows

    def links_between(
        self, repository_keys: Sequence[str], at: datetime | None, type_keys: Sequence[str]
    ) -> list[tuple[str, str, str, str, str]]:
        repositories, types = set(repository_keys), set(type_keys)
        out = [
            (
                r.relationship_id,
                r.type_key,
                r.source_element_id,
                r.target_element_id,
                raw if isinstance(raw := r.metadata.get("raw"), str) else "",
            )
            for r in self.state.relationships.values()
            if r.repo_key in repositories and r.type_key in types and _live(r, at)
        ]
        return sorted(out)

    # -- ReadContextStore ------------------------------------------------------------------
    def insert_read_context(
        self,
        *,
        context_id: str,
        at: datetime,
        principal_id: str,
        on_behalf_of: str | None,
        purpose: str | None,
        repo_key: str | None,
        request: dict[str, Any],
        response: dict[str, Any],
    ) -> None:
        if context_id in self.state.read_contexts:
            raise Conflict("a concurrent change won; re-read and retry")
        self.state.read_contexts[context_id] = {
            "context_id": context_id,
            "at": at,
            "principal_id": principal_id,
            "on_behalf_of": on_behalf_of,
            "purpose": purpose,
            "repo_key": repo_key,
            "request": _json(request),
            "response": _json(response),
        }

    def drifted_citations(self, repo_key: str, access: Access) -> list[dict[str, Any]]:
        """``DriftStore.drifted_citations`` over the plain tables (this fake keeps no drift
        reviews, so none is settled): live citations of readable canonical elements pinning a
        readable evidence version that is no longer its head, or whose evidence is retired."""
        out = []
        rels = sorted(
            self.state.relationships.values(), key=lambda r: (r.recorded_at, r.relationship_id)
        )
        for rel in rels:
            cur = self.state.elements.get(rel.source_element_id)
            ev = self.state.elements.get(rel.target_element_id)
            pin = self.state.versions.get(str(rel.metadata.get("target_version_id")))
            if rel.repo_key != repo_key or rel.retired_at or cur is None or ev is None:
                continue
            if cur.retired_at or cur.source_kind.value != "CANONICAL":
                continue
            if ev.source_kind.value != "INGESTED_EVIDENCE" or pin is None:
                continue
            cur_v = self.state.versions.get(cur.head_version_id or "")
            head = self.state.versions.get(ev.head_version_id or "")
            if cur_v is None or head is None:
                continue
            readable = _readable(cur, access) and _readable(ev, access)
            versions = [(cur, cur_v), (ev, pin), (ev, head)]
            if pin.element_id != ev.element_id or not readable:
                continue
            if not all(_version_readable(el, v, access) for el, v in versions):
                continue
            if head.version_id != pin.version_id or ev.retired_at is not None:
                out.append(
                    {
                        "relationship_id": rel.relationship_id,
                        "type_key": rel.type_key,
                        "curated_element_id": cur.element_id,
                        "curated_version_id": cur_v.version_id,
                        "curated_title": cur_v.title,
                        "evidence_element_id": ev.element_id,
                        "evidence_retired_at": ev.retired_at,
                        "pinned_version_id": pin.version_id,
                        "current_version_id": head.version_id,
                    }
                )
        return out

    def get_read_context(self, context_id: str) -> dict[str, Any] | None:
        row = self.state.read_contexts.get(context_id)
        if row is None:
            return None
        return {**row, "request": _json(row["request"]), "response": _json(row["response"])}

    def erased_among(
        self, version_ids: Sequence[str], *, lock: bool = False
    ) -> dict[str, datetime]:
        found = (self.state.versions.get(i) for i in sorted(set(version_ids)))
        return {v.version_id: v.erased_at for v in found if v and v.erased_at}

    def contexts_showing(self, repo_key: str, version_ids: Sequence[str]) -> list[str]:
        quoted = [f'"{v}"' for v in set(version_ids)]
        return sorted(
            c["context_id"]
            for c in self.state.read_contexts.values()
            if c["repo_key"] in (repo_key, None)
            and any(q in json.dumps(c["response"]) for q in quoted)
        )

    def read_context_responses(self, context_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        found = (self.state.read_contexts.get(i) for i in sorted(set(context_ids)))
        return {c["context_id"]: _json(c["response"]) for c in found if c}

    def erase_read_context_query(self, context_id: str, marker: str) -> None:
        row = self.state.read_contexts.get(context_id)
        if row is None or not isinstance(row["request"], dict) or not row["request"].get("query"):
            return
        row["request"] = {**row["request"], "query": marker}

    def replace_read_context_response(self, context_id: str, response: dict[str, Any]) -> None:
        if context_id in self.state.read_contexts:
            self.state.read_contexts[context_id]["response"] = _json(response)


if TYPE_CHECKING:
    from service import ports

    # mypy checks the mixin against both read ports in full (no ``__getattr__`` to fall back on).
    _READ_MODEL: type[ports.ReadModelStore] = FakeReadStore
    _READ_CONTEXTS: type[ports.ReadContextStore] = FakeReadStore
