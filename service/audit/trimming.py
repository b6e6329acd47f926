"""Trimming of audit history and replay answers to what one caller may read.

Reads of content are trimmed in their queries; history and replay answer with ids and counts
*about* content, so they are trimmed here, with the same rule: an element, a version or a
proposal is nameable only when the caller may read its element (read clearance per
repository, ``Permission.may_see``) — a version only at the level it was written at — and a
count over content counts only what the caller may read.

- ``EventTrimmer`` turns audit events into views. An event about content the caller may not
  read is dropped — or, for an auditor (who must see that the trail has no gaps), kept with
  its subject ids and payload redacted. Inside a kept payload, ids of unreadable elements,
  versions or proposals are nulled (or left out of lists); a ``relationship.added`` whose
  target is unreadable counts as an event about unreadable content (the relationship itself
  is invisible); ``baseline.created`` counts only readable pins; the totals of an ``ingest.run``
  (and of ``ingest status``'s last reports: ``ingest_report``) are shown only to a caller cleared
  for every classification.
  ``EventTrimmer.subject`` applies the same rule to the subject of an access-log entry (a read).
- ``readable_items`` keeps the items of a stored context the caller may read (replay and
  citation checks compare only those).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from domain.audit import AuditEvent
from domain.model import version_classification
from domain.permissions import Action
from domain.values import Classification
from service.authz import Caller, Permission
from service.ports import Store
from service.views import event_view, iso

if TYPE_CHECKING:
    from service.core import UnitOfWork
    from service.gate import Gate

_ID = re.compile(r"^(el|ver|prop)_[0-9a-f]{24}$")
_HIDES_EVENT = ("target_element_id",)  # the relationship is invisible when its target is
_INGEST_RUN_FIELDS = (
    "repository",
    "source_repo",
    "ref",
    "glob",
    "from_commit",
    "to_commit",
    "full_scan",
    "noop",
    "run",
)
"""What an ingest run's report (or its ``ingest.run`` event) says besides its totals: the only
fields shown to a caller not cleared for every classification."""


class Visibility:
    """What one caller may read, per repository and per id (memoized for one unit of work)."""

    def __init__(self, gate: Gate, uow: UnitOfWork, caller: Caller) -> None:
        self._gate, self._uow, self._caller = gate, uow, caller
        self._perms: dict[str, Permission] = {}
        self._seen: dict[str, bool] = {}

    @property
    def store(self) -> Store:
        """The unit of work's store (for the counts the trimmer recomputes)."""
        return self._uow.store

    def permission(self, repo_key: str) -> Permission:
        """The caller's permission in a repository."""
        if repo_key not in self._perms:
            self._perms[repo_key] = self._gate.permission(self._uow, self._caller, repo_key)
        return self._perms[repo_key]

    def element(self, element_id: str | None) -> bool:
        """Whether the element exists and is within the caller's read clearance."""
        if element_id is None:
            return True
        if element_id not in self._seen:
            el = self._uow.store.get_element(element_id)
            self._seen[element_id] = el is not None and self._gate.sees(
                self._uow, self._caller, self.permission(el.repo_key), el
            )
        return self._seen[element_id]

    def version(self, version_id: str | None) -> bool:
        """Whether the version is readable: its element is, and the version itself at the level
        it was written at (``version_classification``: an element lowered since keeps its
        earlier versions at their level, so their ids and hashes stay unnamed)."""
        if version_id is None:
            return True
        if version_id not in self._seen:
            v = self._uow.store.get_version(version_id)
            el = None if v is None else self._uow.store.get_element(v.element_id)
            self._seen[version_id] = (
                v is not None
                and el is not None
                and self.element(el.element_id)
                and self.permission(el.repo_key).may_see(version_classification(el, v))
            )
        return self._seen[version_id]

    def proposal(self, proposal_id: str | None) -> bool:
        """Whether the proposal's element (and its target, if any) is readable."""
        if proposal_id is None:
            return True
        if proposal_id not in self._seen:
            p = self._uow.store.get_proposal(proposal_id)
            self._seen[proposal_id] = (
                p is not None and self.element(p.element_id) and self.element(p.target_element_id)
            )
        return self._seen[proposal_id]

    def nameable(self, value: str) -> bool:
        """Whether an id-shaped string may be shown (anything not an id always may)."""
        if not _ID.match(value):
            return True
        prefix = value.split("_", 1)[0]
        if prefix == "el":
            return self.element(value)
        if prefix == "ver":
            return self.version(value)
        return self.proposal(value)


class EventTrimmer:
    """Audit events as one caller may see them."""

    def __init__(self, visibility: Visibility, repo_key: str) -> None:
        self._vis = visibility
        perm = visibility.permission(repo_key)
        self._repo_key = repo_key
        self._auditor = perm.can(Action.AUDIT)

    def views(self, events: Iterable[AuditEvent]) -> list[dict[str, Any]]:
        """The events the caller may see, trimmed; oldest first."""
        out = []
        for e in events:
            view = self.view(e)
            if view is not None:
                out.append(view)
        return out

    def view(self, e: AuditEvent) -> dict[str, Any] | None:
        """One event trimmed, ``None`` when the caller may not even know it happened."""
        vis = self._vis
        payload = e.payload if isinstance(e.payload, Mapping) else {}
        view = event_view(e)
        if self._hidden(e.element_id, e.version_id, e.proposal_id, payload):
            if not self._auditor:
                return None
            return {
                **view,
                "element_id": None,
                "version_id": None,
                "proposal_id": None,
                "payload": _redacted(),
            }
        trimmed = self._payload(payload)
        if e.event_type == "baseline.created" and e.baseline_id and "pins" in trimmed:
            b = vis.store.get_baseline(e.baseline_id)
            if b is not None:
                trimmed["pins"] = sum(1 for el in b.pins if vis.element(el))
        if e.event_type == "ingest.run":
            trimmed = ingest_report(vis, self._repo_key, trimmed)
        return {**view, "payload": trimmed}

    def subject(self, subject: Any) -> dict[str, Any]:
        """The subject of an access-log entry (a read), by the rule of :meth:`view`: a read of
        an element, version or proposal the caller may not read is ``{"redacted": true}``;
        otherwise unreadable ids inside it are nulled (or left out of lists). Only auditors
        read the access log, so entries are redacted, never dropped: the log keeps no gaps."""
        fields = subject if isinstance(subject, Mapping) else {}
        ids = [fields.get(k) for k in ("element_id", "version_id", "proposal_id")]
        if any(v is not None and not isinstance(v, str) for v in ids):
            return _redacted()
        element_id, version_id, proposal_id = ids
        if self._hidden(element_id, version_id, proposal_id, fields):
            return _redacted()
        trimmed: dict[str, Any] = self._payload(fields)
        return trimmed

    def _hidden(
        self,
        element_id: str | None,
        version_id: str | None,
        proposal_id: str | None,
        payload: Mapping[str, Any],
    ) -> bool:
        """Whether a record is about content the caller may not read (its subject ids, or a
        payload key that hides the whole record)."""
        vis = self._vis
        return not (
            vis.element(element_id) and vis.version(version_id) and vis.proposal(proposal_id)
        ) or any(
            isinstance(payload.get(k), str) and not vis.nameable(payload[k]) for k in _HIDES_EVENT
        )

    def _payload(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: self._payload(v) for k, v in value.items()}
        if isinstance(value, list):
            return [
                self._payload(v) for v in value if not isinstance(v, str) or self._vis.nameable(v)
            ]
        if isinstance(value, str) and not self._vis.nameable(value):
            return None
        return value


def ingest_report(vis: Visibility, repo_key: str, report: Mapping[str, Any]) -> dict[str, Any]:
    """An ingest run's report (``ingest status``) or ``ingest.run`` payload as one caller may
    see it: whole to a caller cleared for ``restricted`` — to read or to ingest — in ``repo_key``
    and in every repository the run wrote to; to anyone else only what the run was (source, ref,
    commits, run number), none of its totals, skips, paths or PII counts: they count content the
    caller may not read."""
    written = report.get("repositories")
    repos = (
        {repo_key, *(r for r in written if isinstance(r, str))}
        if isinstance(written, list)
        else {repo_key}
    )
    if all(_cleared_for_all(vis.permission(r)) for r in repos):
        return dict(report)
    return {k: report[k] for k in _INGEST_RUN_FIELDS if k in report}


def _cleared_for_all(perm: Permission) -> bool:
    """Cleared for every classification, to read or to ingest (an ingestor cleared for it is
    handed every run's totals by the run itself)."""
    top = Classification.RESTRICTED
    return perm.may_see(top) or perm.may_act_on(Action.INGEST, top)


def _redacted() -> dict[str, Any]:
    """The payload (or access-log subject) of a record about content the caller may not read."""
    return {"redacted": True}


def readable_items(vis: Visibility, items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The items of a stored context whose element (and version) the caller may read."""
    return [
        dict(i)
        for i in items
        if vis.element(str(i.get("element_id"))) and vis.version(i.get("version_id"))
    ]


def ingest_source_view(row: dict[str, Any], vis: Visibility, key: str) -> dict[str, Any]:
    """One ``ingest_sources`` record for ``ingest status``; the last report's totals only for
    a caller cleared for ``restricted`` (``service.audit.trimming.ingest_report``)."""
    report = row["last_report"]
    return {
        "source_repo": row["source_repo"],
        "last_commit": row["last_commit"],
        "last_ref": row["last_ref"],
        "last_run_at": iso(row["last_run_at"]),
        "last_run_by": row["last_run_by"],
        "run_count": row["run_count"],
        "last_report": ingest_report(vis, key, report) if isinstance(report, dict) else report,
    }
