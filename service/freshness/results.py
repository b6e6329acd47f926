"""The shapes of drift and knowledge-gap results (docs/drift.md): REST response models and MCP
output schemas alike. Counts and dates only — no invented scores."""

from __future__ import annotations

from pydantic import Field

from service.results import View


class EvidenceSide(View):
    version_id: str
    seq: int
    recorded_at: str
    commit_sha: str | None = Field(description="The source commit the version was ingested at.")
    path: str | None = Field(description="The source file the version came from.")


class DriftEntry(View):
    curated_element_id: str
    curated_title: str
    curated_version_id: str = Field(description="The curated page's head version.")
    published_version_id: str | None = Field(
        description="The page's version in the published baseline (None: not published)."
    )
    relationship_id: str = Field(description="The citation: curated page → evidence.")
    relationship_type_key: str
    evidence_element_id: str
    evidence_title: str
    pinned: EvidenceSide = Field(description="The evidence version the page cites.")
    current: EvidenceSide = Field(description="The evidence's head now.")
    versions_behind: int = Field(description="Evidence versions recorded after the pinned one.")
    evidence_retired_at: str | None
    superseded: bool = Field(description="The evidence's head says it is superseded.")
    drifted_since: str = Field(
        description="When the first evidence version after the pinned one was recorded "
        "(or the retirement, when the evidence did not change)."
    )
    diff: str = Field(description="Unified diff of the evidence body, pinned → current.")
    propose_command: str = Field(description="The CLI command that opens a proposal from it.")


class DriftList(View):
    repository_id: str
    entries: list[DriftEntry]


class DriftReviewed(View):
    review_id: str
    repository_id: str
    curated_element_id: str
    curated_version_id: str
    evidence_element_id: str
    evidence_version_id: str = Field(description="The evidence version reviewed up to.")
    reviewed_at: str
    reviewed_by: str
    note: str | None


class UnansweredQuestion(View):
    context_id: str
    at: str
    principal_id: str
    query: str
    items: int = Field(description="Items returned, none of them curated.")


class KindCounts(View):
    total: int = Field(description="Readable elements (retired ones included).")
    live: int = Field(description="Not retired.")
    retired: int
    newest_version_at: str | None = Field(description="Newest head version recorded.")


class EvidenceCounts(KindCounts):
    superseded: int = Field(description="Live evidence whose head says it is superseded.")
    superseded_share: float | None = Field(
        description="superseded / live, rounded to 3 places (None: no live evidence)."
    )
    newest_source_time: str | None = Field(
        description="When the newest source last changed (ingest's source_time)."
    )


class GapsReport(View):
    repository_id: str
    topic: str | None = Field(description="Words every counted element contains (title/body).")
    curated: KindCounts
    evidence: EvidenceCounts
    drifted: int = Field(description="Drift entries you can see (docs/drift.md).")
    contexts_scanned: int = Field(description="Stored read contexts looked at (newest first).")
    unanswered: list[UnansweredQuestion] = Field(
        description="Stored questions whose answer held no curated content."
    )
