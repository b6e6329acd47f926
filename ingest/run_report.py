"""The run report: what applying a plan actually did, counted as it happens.

The plan's own counts say what *would* happen; the tally says what did (a retirement blocked by
a legal hold, a file routed to a repository the caller may not write, a re-added file that was
reinstated). Its :meth:`RunTally.report` is the JSON document every surface prints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ingest.links.resolve import AMBIGUOUS, MISSING, OUTSIDE_REASONS
from ingest.plan_model import ActionKind, FileAction, IngestPlan

COUNTED = ("new", "changed", "unchanged", "renamed", "retired", "reinstated", "skipped")


@dataclass
class RunTally:
    """Counters and details of one run, filled while the plan is applied."""

    counts: Counter[str] = field(default_factory=Counter)
    skipped: list[dict[str, str]] = field(default_factory=list)
    written_to: set[str] = field(default_factory=set)
    versions: int = 0
    writes: int = 0  # every state change (versions, retirements, paths, links, ...)
    links_added: int = 0
    links_retired: int = 0
    links_resolved: int = 0
    # unresolved links by reason (see ingest.links.resolve.unresolved_reason)
    links_unresolved: Counter[str] = field(default_factory=Counter)
    supersedes_added: int = 0
    supersedes_retired: int = 0
    repaired_front_matter: int = 0
    bytes_read: int = 0

    def count(self, outcome: str, repository: str | None = None) -> None:
        """One file ended as ``outcome`` (a key of :data:`COUNTED`)."""
        self.counts[outcome] += 1
        if repository is not None and outcome not in ("unchanged", "skipped"):
            self.written_to.add(repository)

    def skip(self, path: str, code: str, reason: str) -> None:
        """One file was left out, with a machine code and a human reason."""
        self.counts["skipped"] += 1
        self.skipped.append({"path": path, "code": code, "reason": reason})

    def report(
        self,
        plan: IngestPlan,
        *,
        ref: str,
        glob: str,
        noop: bool,
        duration_s: float,
    ) -> dict[str, Any]:
        """The run report (JSON-ready)."""
        left_out = {s["path"] for s in self.skipped}
        redacted, rejected, detected = _pii(plan.actions, left_out)
        files = len([a for a in plan.actions if a.kind is not ActionKind.DELETED])
        return {
            "repository": plan.repository,
            "source_repo": plan.source_repo,
            "ref": ref,
            "glob": glob,
            "from_commit": plan.from_commit,
            "to_commit": plan.to_commit,
            "full_scan": plan.full_scan,
            "noop": noop,
            "counts": {key: self.counts[key] for key in COUNTED},
            "skipped": sorted(self.skipped, key=lambda s: s["path"]),
            "skipped_by_code": dict(sorted(Counter(s["code"] for s in self.skipped).items())),
            "pii": {
                "redacted_files": redacted[0],
                "redacted": redacted[1],
                "rejected_files": rejected[0],
                "rejected": rejected[1],
                "detected": detected,
            },
            "links": {
                "added": self.links_added,
                "retired": self.links_retired,
                "unresolved": self.links_unresolved.total(),
                "resolved": self.links_resolved,
                "ambiguous": self.links_unresolved[AMBIGUOUS],
                "missing": self.links_unresolved[MISSING],
                "outside": sum(self.links_unresolved[reason] for reason in OUTSIDE_REASONS),
            },
            "supersedes": {"added": self.supersedes_added, "retired": self.supersedes_retired},
            "front_matter_repaired": self.repaired_front_matter,
            "versions_written": self.versions,
            "repositories": sorted(self.written_to),
            "files": files,
            "bytes": self.bytes_read,
            "notes": list(plan.notes),
            "duration_s": round(duration_s, 3),
        }


def _pii(
    actions: tuple[FileAction, ...], left_out: set[str]
) -> tuple[tuple[int, dict[str, int]], tuple[int, dict[str, int]], dict[str, int]]:
    """(files, counts) redacted and stored, (files, counts) rejected, and everything detected;
    ``left_out`` are paths the run skipped after planning (they were not stored)."""
    redacted: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    detected: Counter[str] = Counter()
    redacted_files = rejected_files = 0
    for action in actions:
        if not action.pii_counts:
            continue
        detected.update(action.pii_counts)
        if action.kind is ActionKind.SKIPPED and str(action.skip_code) == "rejected":
            rejected_files += 1
            rejected.update(action.pii_counts)
        elif action.kind is not ActionKind.SKIPPED and action.path not in left_out:
            masked = action.policy.masked(action.pii_counts) if action.policy else {}
            if masked:
                redacted_files += 1
                redacted.update(masked)
    return (
        (redacted_files, dict(sorted(redacted.items()))),
        (rejected_files, dict(sorted(rejected.items()))),
        dict(sorted(detected.items())),
    )
