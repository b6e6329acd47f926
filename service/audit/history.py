"""Use cases: history queries, audit verification, access log."""

from __future__ import annotations

import bisect
from datetime import datetime
from typing import Any

from domain.audit import (
    GENESIS_HASH,
    GLOBAL_CHAIN,
    REPOSITORY_GENESIS,
    Checkpoint,
    check_extends,
    verify_chain,
)
from domain.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from domain.permissions import Action
from domain.values import validate_id, validate_instant, validate_principal
from service import results as r
from service import results_ops as ro
from service.audit.trimming import EventTrimmer, Visibility
from service.authz import Caller
from service.core import UnitOfWork, repo_key
from service.kernel import Kernel, acting
from service.views import iso

MAX_HISTORY = 10_000


class History:
    """Auditing: history queries, chain verification, the access log."""

    def __init__(self, k: Kernel) -> None:
        self.k = k

    @acting
    def history(
        self,
        caller: Caller,
        repo: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        element_id: str | None = None,
        actor: str | None = None,
        limit: int = 1000,
    ) -> list[r.AuditEvent]:
        """Audit events of a repository, oldest first, filtered by time, element and actor: the
        newest ``limit`` (:meth:`history_page` pages back and forth)."""
        return self.history_page(
            caller, repo, since=since, until=until, element_id=element_id, actor=actor, limit=limit
        ).events

    @acting
    def history_page(
        self,
        caller: Caller,
        repo: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        element_id: str | None = None,
        actor: str | None = None,
        limit: int = 1000,
        before: int | None = None,
        after: int | None = None,
    ) -> ro.HistoryPage:
        """One page of a repository's audit events, oldest first within the page, filtered by
        time, element and actor: the newest ``limit``, or the newest ``limit`` before the event
        at chain position ``before``, or the oldest ``limit`` after the one at ``after`` (and
        before ``before``, when both are given).

        ``prev_cursor`` (pass it as ``before``) is there while older events match,
        ``next_cursor`` (pass it as ``after``) while newer ones do: both are ``chain_seq``
        values, positions in the repository's append-only chain, so a page never shifts when
        events are added, and a walk either way sees each event once.

        Trimmed to the caller's read clearance (``service.audit.trimming``): readers see the
        events of content they may read, with unreadable ids taken out of payloads; auditors
        see every event, those about content above their clearance redacted.
        """
        key = repo_key(repo)
        _check_query(since, until, element_id, actor, limit, before, after)
        with self.k.uow(readonly=True) as uow:
            self.k.gate.repository(uow, caller, key, Action.READ)
            if element_id is not None:
                self.k.gate.element(uow, caller, element_id)
            events = uow.store.audit_events(
                key, since=since, until=until, element_id=element_id, actor=actor
            )
            views = EventTrimmer(Visibility(self.k.gate, uow, caller), key).views(events)
            self.k.audit.log_read(
                uow,
                caller,
                "history",
                key,
                since=iso(since),
                until=iso(until),
                element_id=element_id,
                actor=actor,
                before=before,
                after=after,
            )
            uow.commit()
        return ro.HistoryPage.model_validate(_history_window(views, limit, before, after))

    @acting
    def verify_audit(
        self, caller: Caller, repo: str | None, checkpoint: Checkpoint | None = None
    ) -> r.AuditVerdict:
        """Check a repository's hash chain — or, with ``repo=None``, the global chain (grants on
        organizations, tenants and everything; tokens) — and name the first broken event.

        With a ``checkpoint`` (from :meth:`audit_checkpoint`, kept outside the database) the
        chain must also still extend it: a consistent rewrite of the tail fails here."""
        with self.k.uow(readonly=True) as uow:
            key = self._auditable_chain(uow, caller, repo)
            head = uow.store.audit_chain_head(key) or (0, GENESIS_HASH)
            events = uow.store.audit_events(key)
        verdict = verify_chain(events, head, genesis=_genesis(key))
        out: dict[str, Any] = {"repository_id": None if repo is None else key, "chain": key}
        if checkpoint is not None:
            if checkpoint.chain_key != key:
                raise InvalidArgument(
                    f"the checkpoint is of chain {checkpoint.chain_key}, not {key}",
                    field="checkpoint",
                )
            if verdict.ok:
                verdict = check_extends(events, checkpoint)
            out["checkpoint"] = {"length": checkpoint.length, "head_hash": checkpoint.head_hash}
        return r.AuditVerdict.model_validate(
            {
                **out,
                "ok": verdict.ok,
                "events_checked": verdict.events_checked,
                "first_broken_event_id": verdict.first_broken_event_id,
                "reason": verdict.reason,
            }
        )

    @acting
    def audit_checkpoint(self, caller: Caller, repo: str | None) -> ro.AuditCheckpoint:
        """The chain's length and head hash now, to keep outside the database and verify against
        later; refused while the chain does not verify."""
        with self.k.uow(readonly=True) as uow:
            key = self._auditable_chain(uow, caller, repo)
            head = uow.store.audit_chain_head(key) or (0, GENESIS_HASH)
            events = uow.store.audit_events(key)
        verdict = verify_chain(events, head, genesis=_genesis(key))
        if not verdict.ok:
            raise FailedPrecondition(
                f"the audit chain of {key} does not verify ({verdict.reason}); "
                "a checkpoint of it would vouch for the damage"
            )
        return ro.AuditCheckpoint(
            repository_id=None if repo is None else key,
            chain=key,
            length=head[0],
            head_hash=head[1],
            taken_at=iso(self.k.clock.now()),
        )

    def _auditable_chain(self, uow: UnitOfWork, caller: Caller, repo: str | None) -> str:
        """The chain key of ``repo`` (or the global chain), for an auditor or admin."""
        if repo is None:
            key = GLOBAL_CHAIN
            perm = self.k.gate.permission(uow, caller, GLOBAL_CHAIN)
            if not perm.any:
                raise NotFound("the global audit chain is not visible to you")
        else:
            key = repo_key(repo)
            perm = self.k.gate.repository(uow, caller, key, Action.READ)
        if not (perm.can(Action.AUDIT) or perm.can(Action.ADMIN)):
            raise PermissionDenied(f"{caller.principal_id} may not verify the audit log")
        return key

    @acting
    def access_log(self, caller: Caller, repo: str, limit: int = 1000) -> list[r.AccessRow]:
        """Who read what, on behalf of whom and why (auditors), newest first.

        Trimmed like :meth:`history`: a read of content above the auditor's clearance keeps
        its row, its subject redacted (``{"redacted": true}``); ids the auditor may not read
        are nulled or left out of lists."""
        key = repo_key(repo)
        with self.k.uow(readonly=True) as uow:
            perm = self.k.gate.repository(uow, caller, key, Action.READ)
            if not perm.can(Action.AUDIT):
                raise PermissionDenied(f"{caller.principal_id} may not read the access log")
            rows = uow.store.access_log(key, limit)
            trimmer = EventTrimmer(Visibility(self.k.gate, uow, caller), key)
            return [
                r.AccessRow.model_validate(row)
                for row in [
                    {
                        "access_id": r["access_id"],
                        "at": iso(r["at"]),
                        "principal_id": r["principal_id"],
                        "on_behalf_of": r["on_behalf_of"],
                        "purpose": r["purpose"],
                        "operation": r["operation"],
                        "repository_id": r["repo_key"],
                        "subject": trimmer.subject(r["subject"]),
                    }
                    for r in rows
                ]
            ]


def _check_query(
    since: datetime | None,
    until: datetime | None,
    element_id: str | None,
    actor: str | None,
    limit: int,
    before: int | None,
    after: int | None,
) -> None:
    """A history query's arguments, each validated (INVALID_ARGUMENT naming it)."""
    validate_instant(since, "since")
    validate_instant(until, "until")
    # since after until is an empty window (no events), not an error: no schema can say it
    if element_id is not None:
        validate_id(element_id, "el", "element")
    if actor is not None:
        validate_principal(actor, "actor")
    if not 1 <= limit <= MAX_HISTORY:
        raise InvalidArgument(f"limit must be between 1 and {MAX_HISTORY}", field="limit")
    for name, cursor in (("before", before), ("after", after)):
        if cursor is not None and cursor < 0:
            raise InvalidArgument(f"{name} must be a chain position (0 or more)", field=name)


def _history_window(
    views: list[dict[str, Any]], limit: int, before: int | None, after: int | None
) -> dict[str, Any]:
    """The page of ``views`` (in chain order) the cursors select, with the cursors around it.
    Without a cursor: the newest ``limit``, so a bounded view shows recent work."""
    seqs = [v["chain_seq"] for v in views]
    stop = len(views) if before is None else bisect.bisect_left(seqs, before)
    if after is not None:  # with before as well: the oldest limit strictly between the two
        start = min(bisect.bisect_right(seqs, after), stop)
        end = min(start + limit, stop)
    else:
        end = stop
        start = max(end - limit, 0)
    # The page's first and last positions; past either end of an empty page, one beyond it.
    prev = None if start == 0 else seqs[start] if start < len(seqs) else seqs[-1] + 1
    nxt = None if end == len(seqs) else seqs[end - 1] if end > 0 else seqs[0] - 1
    return {"events": views[start:end], "prev_cursor": prev, "next_cursor": nxt}


def _genesis(chain_key: str) -> str | None:
    """The event a chain must start with: a repository's (it exists — the gate found it in the
    repositories table — so its chain holds its creation); none for the global chain."""
    return None if chain_key == GLOBAL_CHAIN else REPOSITORY_GENESIS
