"""The results of the registered-source use cases (``service.ingesting.sources``), typed once: the
CLI prints them, the webhook answers with :class:`HookAnswer`.

Credentials and webhook secrets appear only as references (``env:NAME`` / ``file:PATH``); the
one exception is :attr:`SourceAdded.hook_secret`, the secret ``source add`` generated, shown
once.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from service.ingesting.hooks import describe_reference
from service.results import View
from service.views import iso

Trigger = Literal["schedule", "webhook", "manual"]


class SourceView(View):
    source_id: str
    repository: str
    name: str
    location: str = Field(description="The git URL (no credentials) or the absolute path.")
    ref: str
    glob: str
    routing: str | None = Field(description="The routing rule file read at add time, if any.")
    credential: str | None = Field(description="env:NAME or file:PATH; never the value.")
    hook_secret_ref: str = Field(description="env:NAME or file:PATH of the webhook secret.")
    hook_path: str = Field(description="Where the git host posts: POST this path on the server.")
    interval_s: int
    paused: bool
    run_as: str = Field(description="Who scheduled and webhook runs act as (who added it).")
    created_at: str
    created_by: str
    next_run_at: str | None
    failures: int = Field(description="Consecutive failed runs (the back-off doubles with each).")
    queued: bool = Field(description="A webhook asked for a run that has not started yet.")
    leased_by: str | None = Field(description="The process running it now, if any.")
    lease_until: str | None


class SourceAdded(SourceView):
    hook_secret: str | None = Field(
        description="The generated webhook secret, shown this once (None when given by reference)."
    )


class SourceRunView(View):
    run_id: int
    source_id: str
    trigger: Trigger
    runner: str
    started_at: str
    finished_at: str | None
    status: Literal["running", "ok", "failed"]
    error: str | None
    report: dict[str, Any] | None = Field(description="The ingest run report (as ingest backlog).")


class SourceList(View):
    repository: str
    sources: list[SourceView]


class SourceStatus(View):
    source: SourceView
    last_run: SourceRunView | None
    last_error: str | None = Field(description="The error of the last failed run, if it failed.")
    next_run_at: str | None
    runs: list[SourceRunView] = Field(description="The latest runs, newest first.")


class SourceRemoved(View):
    source_id: str
    repository: str
    name: str
    removed: bool


class HookAnswer(View):
    source_id: str
    outcome: Literal["queued", "duplicate", "ignored", "rate_limited"]
    queued: bool
    provider: Literal["github", "gitlab"]
    event: str | None
    delivery_id: str | None
    reason: str | None = None


def source_view(row: dict[str, Any]) -> SourceView:
    """A ``sources`` row as shown (references only, never a secret)."""
    return SourceView(
        source_id=row["source_id"],
        repository=row["repo_key"],
        name=row["name"],
        location=row["location"],
        ref=row["ref"],
        glob=row["glob"],
        routing=row["routing_name"] if row["routing"] is not None else None,
        credential=describe_reference(row["credential_env"], row["credential_file"]),
        hook_secret_ref=describe_reference(row["hook_secret_env"], row["hook_secret_file"]) or "",
        hook_path=f"/v1/sources/{row['source_id']}/hook",
        interval_s=row["interval_s"],
        paused=row["paused"],
        run_as=row["run_as"],
        created_at=iso(row["created_at"]) or "",
        created_by=row["created_by"],
        next_run_at=iso(row["next_run_at"]),
        failures=row["failures"],
        queued=row["queued_at"] is not None,
        leased_by=row["leased_by"],
        lease_until=iso(row["lease_until"]),
    )


def run_view(row: dict[str, Any]) -> SourceRunView:
    """A ``source_runs`` row as shown."""
    return SourceRunView(
        run_id=row["run_id"],
        source_id=row["source_id"],
        trigger=row["trigger"],
        runner=row["runner"],
        started_at=iso(row["started_at"]) or "",
        finished_at=iso(row["finished_at"]),
        status=row["status"],
        error=row["error"],
        report=row["report"],
    )
