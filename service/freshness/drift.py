"""Use cases: curated knowledge whose evidence moved (docs/drift.md).

A curated page cites evidence by a relationship pinned to one evidence version
(``metadata.target_version_id``). When ingest records a newer version of that evidence (or
retires it), the citation has **drifted**: the page may say something the evidence no longer
does. The list is trimmed in its query — an entry exists only when the caller may read the page
and both evidence versions — so a reader never learns that evidence it cannot read changed.
A curator settles a drift by reviewing it (recorded and audited; it comes back when the evidence
moves again) or by opening a proposal on the page from it.
"""

from __future__ import annotations

from typing import Any

from domain.errors import Conflict, NotFound
from domain.merge import unified_diff
from domain.model import ElementVersion
from domain.permissions import Action
from domain.values import MAX_RATIONALE_CHARS, MAX_SUMMARY_CHARS, new_id, validate_id, validate_text
from service.authz import Caller, Permission, access_levels
from service.core import UnitOfWork, existing, repo_key
from service.freshness.results import DriftEntry, DriftList, DriftReviewed, EvidenceSide
from service.governance.curation import Curation
from service.kernel import Kernel, acting
from service.results import Proposal
from service.views import iso


def _side(v: ElementVersion) -> EvidenceSide:
    p = v.provenance
    return EvidenceSide(
        version_id=v.version_id,
        seq=v.seq,
        recorded_at=existing(iso(v.recorded_at)),
        commit_sha=p.commit_sha,
        path=p.path,
    )


def drift_entries(uow: UnitOfWork, perm: Permission, key: str) -> list[DriftEntry]:
    """The drifted citations of repository ``key`` the caller (``perm``) may see in full."""
    rows = uow.store.drifted_citations(key, access_levels({key: perm}))
    pointer = uow.store.get_pointer(key)[0]
    baseline = uow.store.get_baseline(pointer) if pointer else None
    published = baseline.pins if baseline else {}
    return [_entry(uow, key, row, published) for row in rows]


def _entry(uow: UnitOfWork, key: str, row: dict[str, Any], published: dict[str, str]) -> DriftEntry:
    pinned = existing(uow.store.get_version(row["pinned_version_id"]))
    current = existing(uow.store.get_version(row["current_version_id"]))
    evidence, curated = row["evidence_element_id"], row["curated_element_id"]
    moved = uow.store.first_version_after(evidence, pinned.seq)
    since = moved or row["evidence_retired_at"]
    return DriftEntry(
        curated_element_id=curated,
        curated_title=row["curated_title"],
        curated_version_id=row["curated_version_id"],
        published_version_id=published.get(curated),
        relationship_id=row["relationship_id"],
        relationship_type_key=row["type_key"],
        evidence_element_id=evidence,
        evidence_title=current.title,
        pinned=_side(pinned),
        current=_side(current),
        versions_behind=current.seq - pinned.seq,
        evidence_retired_at=iso(row["evidence_retired_at"]),
        superseded=bool((current.metadata or {}).get("superseded")),
        drifted_since=existing(iso(since)),
        diff=unified_diff(
            pinned.body,
            current.body,
            f"{evidence}@{pinned.version_id}",
            f"{evidence}@{current.version_id}",
        ),
        propose_command=f"ameide drift propose {curated} {evidence}",
    )


def drift_flags(uow: UnitOfWork, perms: dict[str, Permission]) -> dict[str, list[dict[str, Any]]]:
    """Curated element id → the drifted evidence it cites (what ``explain`` flags on an item so an
    agent can hedge), per repository of ``perms``, trimmed like the drift list."""
    out: dict[str, list[dict[str, Any]]] = {}
    for key, perm in perms.items():
        for row in uow.store.drifted_citations(key, access_levels({key: perm})):
            pinned = existing(uow.store.get_version(row["pinned_version_id"]))
            moved = uow.store.first_version_after(row["evidence_element_id"], pinned.seq)
            out.setdefault(row["curated_element_id"], []).append(
                {
                    "evidence_element_id": row["evidence_element_id"],
                    "pinned_version_id": pinned.version_id,
                    "current_version_id": row["current_version_id"],
                    "evidence_retired": row["evidence_retired_at"] is not None,
                    "drifted_since": iso(moved or row["evidence_retired_at"]),
                }
            )
    return out


class Drift:
    """Drifted citations: list them, review one, open a proposal from one."""

    def __init__(self, k: Kernel, curation: Curation) -> None:
        self.k = k
        self.curation = curation

    @acting
    def drift_list(self, caller: Caller, repo: str) -> DriftList:
        """Curated pages citing evidence that moved since the version they pin (or was retired):
        the evidence, pinned and current versions, a diff between them and since when — only
        where you may read the page and the evidence."""
        key = repo_key(repo)
        with self.k.uow(readonly=True) as uow:
            perm = self.k.gate.repository(uow, caller, key, Action.READ)
            entries = drift_entries(uow, perm, key)
            self.k.audit.log_read(uow, caller, "drift.list", key, entries=len(entries))
            uow.commit()
        return DriftList(repository_id=key, entries=entries)

    def _one(
        self, uow: UnitOfWork, caller: Caller, curated_element_id: str, evidence_element_id: str,
        action: Action,
    ) -> tuple[DriftEntry, str]:  # fmt: skip
        """The drift of one page on one evidence element, as the caller sees it (NOT_FOUND when
        there is none, or the caller may not see it: the same answer)."""
        validate_id(evidence_element_id, "el", "element")
        el, perm = self.k.gate.element(uow, caller, curated_element_id, action)
        for entry in drift_entries(uow, perm, el.repo_key):
            if (entry.curated_element_id, entry.evidence_element_id) == (
                el.element_id,
                evidence_element_id,
            ):
                return entry, el.repo_key
        raise NotFound(
            f"no drift of {curated_element_id} on {evidence_element_id}",
            element_id=curated_element_id,
        )

    @acting
    def drift_review(
        self,
        caller: Caller,
        curated_element_id: str,
        evidence_element_id: str,
        *,
        evidence_version_id: str | None = None,
        note: str | None = None,
    ) -> DriftReviewed:
        """Mark a drift reviewed (curator): recorded and audited; the page leaves the drift list
        until the evidence moves again. ``evidence_version_id``, when given, must still be the
        evidence's head (what you reviewed), else CONFLICT."""
        note = validate_text(note, "note", MAX_RATIONALE_CHARS, required=False) or None
        with self.k.uow() as uow:
            entry, key = self._one(
                uow, caller, curated_element_id, evidence_element_id, Action.CURATE
            )
            up_to = entry.current.version_id
            if evidence_version_id is not None and evidence_version_id != up_to:
                raise Conflict(
                    f"the evidence's head is {up_to}, not {evidence_version_id}: review it again",
                    current_version_id=up_to,
                )
            review = self._record(uow, caller, key, entry, note)
            uow.commit()
        return review

    def _record(
        self, uow: UnitOfWork, caller: Caller, key: str, entry: DriftEntry, note: str | None
    ) -> DriftReviewed:
        """Write the review row of ``entry`` up to its current evidence version, and its event."""
        at = self.k.clock.now()
        up_to = entry.current.version_id
        review = DriftReviewed(
            review_id=new_id("drv"),
            repository_id=key,
            curated_element_id=entry.curated_element_id,
            curated_version_id=entry.curated_version_id,
            evidence_element_id=entry.evidence_element_id,
            evidence_version_id=up_to,
            reviewed_at=existing(iso(at)),
            reviewed_by=caller.principal_id,
            note=note,
        )
        uow.store.insert_drift_review(
            review_id=review.review_id,
            repo_key=key,
            curated_element_id=review.curated_element_id,
            curated_version_id=review.curated_version_id,
            evidence_element_id=review.evidence_element_id,
            evidence_version_id=up_to,
            reviewed_at=at,
            reviewed_by=caller.principal_id,
            on_behalf_of=caller.on_behalf_of,
            note=note,
        )
        payload = {  # target_element_id: the event is hidden from who may not read the evidence
            "review_id": review.review_id,
            "target_element_id": review.evidence_element_id,
            "evidence_element_id": review.evidence_element_id,
            "pinned_version_id": entry.pinned.version_id,
            "evidence_version_id": up_to,
            "note": note,
        }
        self.k.audit.event(
            uow, caller, key, "drift.reviewed", at, element_id=review.curated_element_id,
            version_id=review.curated_version_id, payload=payload,
        )  # fmt: skip
        return review

    @acting
    def drift_propose(
        self,
        caller: Caller,
        curated_element_id: str,
        evidence_element_id: str,
        *,
        body: str | None = None,
        summary: str | None = None,
    ) -> Proposal:
        """Open an UPDATE proposal on a drifted page, pinned to its head, whose summary and
        metadata cite the evidence's new version; ``body`` is the new page body (default: the
        current one, to revise once the evidence is read)."""
        with self.k.uow(readonly=True) as uow:
            entry, key = self._one(
                uow, caller, curated_element_id, evidence_element_id, Action.PROPOSE
            )
            head = existing(uow.store.get_version(entry.curated_version_id))
        cites = (
            f"Evidence {entry.evidence_title!r} ({entry.evidence_element_id}) changed since this "
            f"page cited it: {entry.pinned.version_id} → {entry.current.version_id} "
            f"(since {entry.drifted_since}). Re-check the page against it."
        )
        summary = validate_text(summary, "summary", MAX_SUMMARY_CHARS, required=False)
        return self.curation.propose(
            caller,
            key,
            body=head.body if body is None else body,
            summary=summary or cites[:MAX_SUMMARY_CHARS],
            element_id=entry.curated_element_id,
            target_version_id=entry.curated_version_id,
            metadata={
                "drift": {
                    "evidence_element_id": entry.evidence_element_id,
                    "pinned_version_id": entry.pinned.version_id,
                    "current_version_id": entry.current.version_id,
                    "drifted_since": entry.drifted_since,
                }
            },
        )
