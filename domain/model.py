"""Entities of the write side and the invariants of docs/product.md §2."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from domain.errors import (
    FailedPrecondition,
    InvalidArgument,
    LegalHoldActive,
    ProposalConflicted,
    StaleProposal,
)
from domain.values import (
    Classification,
    SourceKind,
    content_sha256,
    higher_classification,
    new_id,
    require_unicode_tree,
)

ERASED_BODY = "[erased]"
"""What an erased version's body becomes (the tombstone)."""
ERASED_TITLE = "[erased]"
"""What an erased version's title becomes: a title is often as telling as the body."""

GOVERNANCE_PREFIX = "ameide:curation."
TARGETS_VERSION = "ameide:curation.targets_version"
REBASED_TO = "ameide:curation.rebased_to"
ACCEPTED_AS = "ameide:curation.accepted_as"
REJECTED_BECAUSE = "ameide:curation.rejected_because"
PROPOSAL_TYPE = "ameide:curation.proposal"
DECISION_TYPE = "ameide:curation.decision"


class RelationshipKind(StrEnum):
    """How two elements relate."""

    SEMANTIC = "SEMANTIC"
    CONTAINMENT = "CONTAINMENT"
    REFERENCE = "REFERENCE"
    SUPERSEDES = "SUPERSEDES"  # one page replaces another (from lifecycle statements)


class ProposalStatus(StrEnum):
    """Lifecycle of a proposal; everything but OPEN is terminal."""

    OPEN = "OPEN"
    ACCEPTED = "ACCEPTED"
    REJECTED = "REJECTED"
    REBASED = "REBASED"
    WITHDRAWN = "WITHDRAWN"


class ChangeKind(StrEnum):
    """UPDATE replaces one element's body; CREATE makes a new element."""

    UPDATE = "UPDATE"
    CREATE = "CREATE"


class SelectorKind(StrEnum):
    """What a proposal was written against."""

    PUBLISHED = "published"
    BASELINE_REF = "baseline_ref"


@dataclass(frozen=True)
class Provenance:
    """Who or what produced a version."""

    actor_type: str
    actor_id: str
    tool_id: str | None = None
    source_repo: str | None = None
    commit_sha: str | None = None
    path: str | None = None
    on_behalf_of: str | None = None
    """Whom the actor acted for (None: for itself), as a delegation grant allowed."""

    @property
    def subject(self) -> str:
        """Whose act this was: the principal acted for, else the actor itself."""
        return self.on_behalf_of or self.actor_id


@dataclass(frozen=True)
class ElementVersion:
    """An immutable version of an element's content."""

    version_id: str
    element_id: str
    seq: int
    parent_version_id: str | None
    title: str
    body: str
    metadata: dict[str, Any]
    content_sha256: str
    recorded_at: datetime
    provenance: Provenance
    erased_at: datetime | None = None
    erased_by: str | None = None
    erasure_reason: str | None = None
    classification: Classification | None = None
    """The level this version was written at, when it must stay above its element's current one
    (an element whose classification was lowered keeps its earlier versions at their level);
    ``None``: it follows the element. See :func:`version_classification`."""

    @property
    def erased(self) -> bool:
        """True once a compliance erasure replaced the body with a tombstone."""
        return self.erased_at is not None

    def erase(self, at: datetime, by: str, reason: str) -> ElementVersion:
        """The tombstone: ids, hash and seq stay; the title, body and metadata are gone."""
        if self.erased:
            raise FailedPrecondition(f"version {self.version_id} is already erased")
        return replace(
            self,
            title=ERASED_TITLE,
            body=ERASED_BODY,
            metadata={},
            erased_at=at,
            erased_by=by,
            erasure_reason=reason,
        )


@dataclass
class Element:
    """The unit of knowledge; its history is a line of versions ending at the head."""

    element_id: str
    repo_key: str
    element_kind: str
    type_key: str
    source_kind: SourceKind
    classification: Classification
    created_at: datetime
    created_by: str
    head_version_id: str | None = None
    head_seq: int = 0
    retired_at: datetime | None = None
    retired_by: str | None = None

    @classmethod
    def new(
        cls,
        repo_key: str,
        *,
        kind: str,
        type_key: str,
        source_kind: SourceKind,
        classification: Classification,
        at: datetime,
        by: str,
        element_id: str | None = None,
    ) -> Element:
        """A fresh element without versions yet."""
        return cls(
            element_id or new_id("el"),
            repo_key,
            kind,
            type_key,
            source_kind,
            classification,
            at,
            by,
        )

    @property
    def retired(self) -> bool:
        """Whether the element is retired now."""
        return self.retired_at is not None

    def next_version(
        self,
        *,
        title: str,
        body: str,
        metadata: dict[str, Any],
        at: datetime,
        provenance: Provenance,
    ) -> ElementVersion:
        """The version that would follow the current head (history stays linear).

        Every path that writes a version comes here, so this is the last guard that its text
        can be stored and served: a lone surrogate in the title, body or metadata (keys and
        values, however nested) is ``INVALID_ARGUMENT``, naming where it is."""
        if self.retired:
            raise FailedPrecondition(f"element {self.element_id} is retired")
        require_unicode_tree(title, "title")
        require_unicode_tree(body, "body")
        require_unicode_tree(metadata, "metadata")
        return ElementVersion(
            version_id=new_id("ver"),
            element_id=self.element_id,
            seq=self.head_seq + 1,
            parent_version_id=self.head_version_id,
            title=title,
            body=body,
            metadata=dict(metadata),
            content_sha256=content_sha256(body),
            recorded_at=at,
            provenance=provenance,
        )

    def retire(self, at: datetime, by: str, *, legal_hold: bool) -> None:
        """Retire the element; refused under legal hold or when already retired."""
        if legal_hold:
            raise LegalHoldActive("the repository is under legal hold; retirement is blocked")
        if self.retired:
            raise FailedPrecondition(f"element {self.element_id} is already retired")
        self.retired_at, self.retired_by = at, by

    def reinstate(self) -> None:
        """Bring a retired element back (its retirement stays in history)."""
        if not self.retired:
            raise FailedPrecondition(f"element {self.element_id} is not retired")
        self.retired_at, self.retired_by = None, None


@dataclass(frozen=True)
class Relationship:
    """An append-only link between two elements; governance pins name a target version."""

    relationship_id: str
    repo_key: str
    relationship_kind: RelationshipKind
    type_key: str
    source_element_id: str
    target_element_id: str
    metadata: dict[str, Any]
    recorded_at: datetime
    recorded_by: str
    retired_at: datetime | None = None
    retired_by: str | None = None

    @classmethod
    def new(
        cls,
        repo_key: str,
        kind: RelationshipKind,
        type_key: str,
        source: str,
        target: str,
        metadata: dict[str, Any],
        at: datetime,
        by: str,
    ) -> Relationship:
        """Create a relationship, enforcing the governance-pin rule."""
        if type_key.startswith(GOVERNANCE_PREFIX) and not metadata.get("target_version_id"):
            raise InvalidArgument(
                f"{type_key} is a governance pin and needs metadata.target_version_id",
                field="metadata.target_version_id",
            )
        if source == target:
            raise InvalidArgument("a relationship cannot link an element to itself")
        return cls(new_id("rel"), repo_key, kind, type_key, source, target, dict(metadata), at, by)

    @property
    def target_version_id(self) -> str | None:
        """The pinned version of a governance pin, if any."""
        value = self.metadata.get("target_version_id")
        return str(value) if value else None


@dataclass(frozen=True)
class TargetSelector:
    """What the proposer was reading: the published baseline or a named one."""

    kind: SelectorKind = SelectorKind.PUBLISHED
    baseline_id: str | None = None

    def __post_init__(self) -> None:
        if self.kind is SelectorKind.BASELINE_REF and not self.baseline_id:
            raise InvalidArgument(
                "target_selector baseline_ref needs a baseline_id",
                field="target_selector.baseline_id",
            )
        if self.kind is SelectorKind.PUBLISHED and self.baseline_id:
            raise InvalidArgument(
                "target_selector published takes no baseline_id",
                field="target_selector.baseline_id",
            )


CONFLICT_MARKERS = ("<<<<<<<", "=======", ">>>>>>>")


def _is_marker(line: str, marker: str) -> bool:
    return line == marker or line.startswith(marker + " ")


def conflict_hunks(body: str) -> list[tuple[int, int]]:
    """The conflict blocks of a body, each as its first and last line (1-based, inclusive):
    ``<<<<<<<``, then ``=======``, then ``>>>>>>>``, in that order. A lone ``=======`` is an
    ordinary markdown heading underline, not a conflict."""
    hunks: list[tuple[int, int]] = []
    stage, start = 0, 0
    for number, line in enumerate(body.split("\n"), 1):
        if _is_marker(line, CONFLICT_MARKERS[stage]):
            start = number if stage == 0 else start
            stage += 1
            if stage == len(CONFLICT_MARKERS):
                hunks.append((start, number))
                stage = 0
    return hunks


def has_conflict_markers(body: str) -> bool:
    """True when a body still carries a standard merge conflict block (:func:`conflict_hunks`)."""
    return bool(conflict_hunks(body))


MAX_REPORTED_HUNKS = 20
"""At most this many hunks are listed in a PROPOSAL_HAS_CONFLICTS error (the count is exact)."""


def conflicted(proposal_id: str, body: str | None) -> ProposalConflicted:
    """The refusal to accept a proposal with conflicts; with its ``body``, the details say how
    many hunks conflict and where: ``{"conflicts": N, "hunks": [{"start_line", "end_line"}]}``
    (lines of the proposal's body, 1-based, markers included)."""
    message = f"proposal {proposal_id} has merge conflicts; revise it with a clean body first"
    hunks = conflict_hunks(body or "")
    if not hunks:
        return ProposalConflicted(message)
    listed = [{"start_line": a, "end_line": b} for a, b in hunks[:MAX_REPORTED_HUNKS]]
    lines = ", ".join(f"{a}-{b}" for a, b in hunks[:MAX_REPORTED_HUNKS])
    found = f"{len(hunks)} conflicting hunk{'s' if len(hunks) != 1 else ''} at lines {lines}"
    return ProposalConflicted(
        f"proposal {proposal_id} has merge conflicts ({found}); revise it with a clean body first",
        conflicts=len(hunks),
        hunks=listed,
    )


@dataclass
class Proposal:
    """A proposed change, stored as a proposal element plus this record."""

    proposal_id: str
    repo_key: str
    element_id: str
    change_kind: ChangeKind
    summary: str
    proposed_by: Provenance
    created_at: datetime
    target_selector: TargetSelector = field(default_factory=TargetSelector)
    target_element_id: str | None = None
    target_version_id: str | None = None
    status: ProposalStatus = ProposalStatus.OPEN
    has_conflicts: bool = False
    client_request_id: str | None = None
    rebased_from: str | None = None
    rebased_to: str | None = None
    result_version_id: str | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None

    def __post_init__(self) -> None:
        if self.change_kind is ChangeKind.UPDATE and not (
            self.target_element_id and self.target_version_id
        ):
            raise InvalidArgument(
                "an UPDATE proposal must be pinned to a target element and version",
                field="target_version_id",
            )

    def is_stale(self, head_version_id: str | None) -> bool:
        """The head rule: an OPEN UPDATE is stale once its pinned version is no longer the head.

        A decided proposal is never stale: accepting it moved the head on purpose.
        """
        return (
            self.status is ProposalStatus.OPEN
            and self.change_kind is ChangeKind.UPDATE
            and self.target_version_id != head_version_id
        )

    def ensure_open(self) -> None:
        """Refuse anything on a terminal proposal."""
        if self.status is not ProposalStatus.OPEN:
            raise FailedPrecondition(
                f"proposal {self.proposal_id} is {self.status.value}, not OPEN",
                status=self.status.value,
            )

    def ensure_acceptable(self, head_version_id: str | None, body: str | None = None) -> None:
        """Only an OPEN, fresh, conflict-free proposal can be accepted. ``body`` (the
        proposal's current body) names the conflicting hunks in the refusal."""
        self.ensure_open()
        if self.is_stale(head_version_id):
            raise StaleProposal(
                f"proposal {self.proposal_id} is stale: it is pinned to {self.target_version_id} "
                f"but the current head is {head_version_id}; rebase it",
                target_version_id=self.target_version_id,
                current_head_version_id=head_version_id,
            )
        if self.has_conflicts:
            raise conflicted(self.proposal_id, body)

    def close(self, status: ProposalStatus, at: datetime, by: str) -> None:
        """Move an OPEN proposal to a terminal status."""
        self.ensure_open()
        if status is ProposalStatus.OPEN:
            raise InvalidArgument("cannot close a proposal as OPEN")
        self.status, self.decided_at, self.decided_by = status, at, by

    def accepted_as(self, version: ElementVersion, at: datetime, by: str) -> None:
        """Close as ACCEPTED with ``version`` as the result (of the target, or of the element
        that accepting a CREATE made, which becomes the target)."""
        self.close(ProposalStatus.ACCEPTED, at, by)
        self.result_version_id = version.version_id
        self.target_element_id = version.element_id

    def ensure_rebasable(self, head_version_id: str | None) -> None:
        """Only an OPEN UPDATE that is stale against ``head_version_id`` can be rebased."""
        self.ensure_open()
        if self.change_kind is not ChangeKind.UPDATE:
            raise FailedPrecondition("only UPDATE proposals can be rebased")
        if not self.is_stale(head_version_id):
            raise FailedPrecondition(
                f"proposal {self.proposal_id} is already on the current head {head_version_id}"
            )

    def rebased_onto(
        self, head_version_id: str, *, at: datetime, by: str, has_conflicts: bool
    ) -> Proposal:
        """Close as REBASED and return the successor: OPEN, pinned to the current head, with
        the same proposer, summary and selector."""
        self.ensure_rebasable(head_version_id)
        successor = Proposal(
            new_id("prop"),
            self.repo_key,
            new_id("el"),
            ChangeKind.UPDATE,
            self.summary,
            self.proposed_by,
            at,
            self.target_selector,
            self.target_element_id,
            head_version_id,
            has_conflicts=has_conflicts,
            rebased_from=self.proposal_id,
        )
        self.close(ProposalStatus.REBASED, at, by)
        self.rebased_to = successor.proposal_id
        return successor


@dataclass(frozen=True)
class Baseline:
    """An immutable set of element → version pins of one repository."""

    baseline_id: str
    repo_key: str
    name: str
    created_at: datetime
    created_by: str
    pins: dict[str, str]
    parent_baseline_id: str | None = None


@dataclass(frozen=True)
class PointerMove:
    """One recorded move of a repository's published pointer."""

    move_id: str
    repo_key: str
    from_baseline_id: str | None
    to_baseline_id: str
    at: datetime
    by: str
    reason: str


def version_classification(el: Element, v: ElementVersion) -> Classification:
    """The level a reader must be cleared for to read ``v``: the higher of its element's current
    classification and the level the version itself was written at. Raising an element's
    classification raises every version; lowering it never lowers a version written before."""
    return higher_classification(el.classification, v.classification)
