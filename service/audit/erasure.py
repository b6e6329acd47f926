"""Compliance erasure (docs/product.md §8): a version's content, its copies, and what was
shown of it.

Erasing a version replaces its body with a tombstone; its ids, hash, seq and audit trail stay.
The same text lives on elsewhere, so the same transaction also

* erases every other version **in the same repository** with the same content (the same
  ``content_sha256``): the proposal version an accepted version was copied from (or the version
  an accepted proposal produced), a rebased proposal that carried the body unchanged, an
  identical evidence mirror — each with its own ``version.erased`` event naming the version it
  is a copy of and the reason;
* takes the text out of every stored read context that returned one of them (the record that
  ``verify_citations`` and ``replay`` check against): ids, version ids and citation offsets
  stay, so the context's own citations still verify (``domain.erasure``);
* tells the keyword index to drop each of them (the outbox row ``save_erasure`` writes, applied
  after commit) and deletes their derived chunk rows at once.

Only what the caller could erase itself is reached (``Gate.may_erase``): a copy, a later version
or a proposal's body above the caller's clearance stays as it is, and the report counts only
what the caller may read — else erasing a guess would tell whether a restricted text says so
(issue 28 item 4).

Copies in **other** repositories are left alone: an admin administers one repository, and an
erasure there is that repository's act — under its own legal hold, by its own admin, on its own
audit chain. Identical text elsewhere is erased by that repository's admin.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from domain.erasure import ERASED_QUERY, erased_note, redact_stored_context
from domain.errors import LegalHoldActive, PermissionDenied
from domain.model import Element, ElementVersion, version_classification
from domain.permissions import Action
from domain.values import MAX_RATIONALE_CHARS, validate_text
from ingest.source import is_git_url
from service import results as r
from service.audit.erasure_reach import Within, reach
from service.authz import Caller
from service.core import UnitOfWork, existing
from service.kernel import Kernel, acting
from service.views import version_view


class Erasure:
    """Right to be forgotten."""

    def __init__(self, k: Kernel) -> None:
        self.k = k

    @acting
    def erase_version(self, caller: Caller, version_id: str, reason: str) -> r.Version:
        """Compliance erasure (admin): the version and every same-content copy in its repository
        become tombstones, and stored contexts that showed them keep ids and citations but not
        the text. Refused under legal hold, or when the version is erased already."""
        reason = validate_text(reason, "reason", MAX_RATIONALE_CHARS)
        with self.k.uow() as uow:
            v, el, within = self._authorize(uow, caller, version_id)
            if existing(uow.store.get_repository(el.repo_key)).legal_hold:
                raise LegalHoldActive("the repository is under legal hold; erasure is blocked")
            at = self.k.clock.now()
            v, tomb, copies = _erase_same_content(uow, el.repo_key, v, at, caller, reason, within)
            derived = reach(
                uow.store, el.repo_key, [tomb, *copies], v.body, at, caller.principal_id, reason,
                within,
            )  # fmt: skip
            gone = [tomb, *copies, *derived.versions]
            uow.store.replace_chunk_rows([x.version_id for x in gone], [])
            redacted = self._redact_contexts(uow, el.repo_key, gone, at, within)
            report = {
                "copies_erased": len(copies),
                "derived_erased": len(derived.versions),
                "proposals_redacted": len(derived.proposals),
                "proposals_withdrawn": len(derived.withdrawn),
                "read_contexts_redacted": redacted,
                "not_erased": not_erased(v),
            }
            self.k.audit.event(
                uow,
                caller,
                el.repo_key,
                "version.erased",
                at,
                element_id=el.element_id,
                version_id=version_id,
                payload={
                    "reason": reason,
                    "content_sha256": v.content_sha256,
                    "copies_erased": [x.version_id for x in copies],
                    "derived_erased": [x.version_id for x in derived.versions],
                    "proposals_redacted": [p.proposal_id for p in derived.proposals],
                    "proposals_withdrawn": derived.withdrawn,
                    "read_contexts_redacted": redacted,
                },
            )
            for group, relation in ((copies, "copy_of"), (derived.versions, "derived_from")):
                self._audit_erased(
                    uow, caller, el.repo_key, group, reason, at, {relation: version_id}
                )
            self._audit_withdrawn(uow, caller, el.repo_key, derived.withdrawn, version_id, at)
            uow.commit()
        view = version_view(tomb)
        view["erasure"] = {**view["erasure"], **report}
        return r.Version.model_validate(view)

    def _authorize(
        self, uow: UnitOfWork, caller: Caller, version_id: str
    ) -> tuple[ElementVersion, Element, Within]:
        """The version to erase, its element, and what else the caller could erase: it must
        read the version and administer its repository at the version's level."""
        v, el, _ = self.k.gate.version(uow, caller, version_id)
        perm = self.k.gate.repository(uow, caller, el.repo_key, Action.ADMIN)
        within = Within(self.k.gate, uow, caller, perm)
        if not within.erasable(v):
            raise PermissionDenied(
                f"{caller.principal_id} may not erase content classified "
                f"{version_classification(el, v).value}",
                action=Action.ADMIN.value,
            )
        return v, el, within

    def _audit_erased(
        self,
        uow: UnitOfWork,
        caller: Caller,
        repo_key: str,
        erased: Sequence[ElementVersion],
        reason: str,
        at: datetime,
        relation: dict[str, str],
    ) -> None:
        """One ``version.erased`` event per copy or derived version, naming the version it
        copies or derives from (``relation``) and the proposal when it is a proposal's body."""
        proposals = uow.store.proposals_of_elements(sorted({x.element_id for x in erased}))
        for x in erased:
            self.k.audit.event(
                uow,
                caller,
                repo_key,
                "version.erased",
                at,
                element_id=x.element_id,
                version_id=x.version_id,
                proposal_id=proposals.get(x.element_id),
                payload={"reason": reason, "content_sha256": x.content_sha256, **relation},
            )

    def _audit_withdrawn(
        self, uow: UnitOfWork, caller: Caller, repo_key: str, withdrawn: Sequence[str],
        original_id: str, at: datetime,
    ) -> None:  # fmt: skip
        """A ``proposal.withdrawn`` event per open proposal the erasure closed."""
        for proposal_id in withdrawn:
            self.k.audit.event(
                uow,
                caller,
                repo_key,
                "proposal.withdrawn",
                at,
                proposal_id=proposal_id,
                payload={"rationale": f"its content was erased ({original_id})"},
            )

    @staticmethod
    def _redact_contexts(
        uow: UnitOfWork, repo_key: str, erased: Sequence[ElementVersion], at: datetime,
        within: Within,
    ) -> int:  # fmt: skip
        """Take the erased text out of the stored contexts that returned it (every one: the
        text is the caller's to erase); how many changed that the caller may inspect itself."""
        notes = {x.version_id: erased_note(at) for x in erased}
        ids = uow.store.contexts_showing(repo_key, list(notes))
        changed = 0
        for start in range(0, len(ids), CONTEXT_BATCH):
            rows = uow.store.read_context_responses(ids[start : start + CONTEXT_BATCH])
            for context_id, response in sorted(rows.items()):
                redacted = redact_stored_context(response, notes)
                if redacted is not None:
                    uow.store.replace_read_context_response(context_id, redacted)
                    uow.store.erase_read_context_query(context_id, ERASED_QUERY)
                    changed += within.context(context_id)
        return changed


def not_erased(v: ElementVersion) -> list[str]:
    """Where the text may still live that memory cannot erase (said in the erase report)."""
    out = []
    p = v.provenance
    if p.source_repo:
        out.append(
            f"the git source {p.source_repo} (commit {p.commit_sha or '?'}, {p.path or '?'}): "
            "its history still holds the file; rewrite it there (e.g. git filter-repo) if the "
            "text must go, or the next full-scan ingest may bring it back"
        )
        if is_git_url(p.source_repo):
            out.append(
                "the home's mirrored clone of that source (HOME/sources/): after the source is "
                "rewritten, delete that clone (it is re-cloned on the next ingest) or run "
                "'git reflog expire --expire=now --all && git gc --prune=now' in it"
            )
    out.append(
        "other repositories, free text (rationales, relationship metadata) and backups taken "
        "before now: erase or purge them separately"
    )
    return out


CONTEXT_BATCH = 200
"""Stored contexts loaded at once while redacting (a long-lived repository has many)."""


def _erase_same_content(
    uow: UnitOfWork, repo_key: str, v: ElementVersion, at: datetime, caller: Caller, reason: str,
    within: Within,
) -> tuple[ElementVersion, ElementVersion, list[ElementVersion]]:  # fmt: skip
    """Erase ``v`` and every not yet erased copy of its content in the repository that the
    caller could erase itself: the version as re-read under lock, its tombstone, the copies'
    tombstones."""
    # Re-read under lock: a concurrent erasure of the same text waits, then finds it done.
    same = uow.store.versions_with_content(repo_key, v.content_sha256, for_update=True)
    v = next((x for x in same if x.version_id == v.version_id), v)
    tomb = v.erase(at, caller.principal_id, reason)  # refuses an erased version
    copies = [
        x.erase(at, caller.principal_id, reason)
        for x in same
        if x.version_id != v.version_id and not x.erased and within.erasable(x)
    ]
    for erased in (tomb, *copies):
        uow.store.save_erasure(erased)
    return v, tomb, copies
