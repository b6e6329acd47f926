"""``ameide routing explain``: which rule decides a file, and why — as a JSON-ready document."""

from __future__ import annotations

from typing import Any

from ingest.document import Skip, SkipCode, routable_file
from ingest.paths import unsafe_path_reason
from ingest.routing.model import RoutingConfig
from ingest.routing.rules import RepositoryKey, Router

PLACEHOLDER_REPOSITORY = RepositoryKey("tenant", "organization", "repository")
"""Stands for the command's repository when none is given (templates resolve against it)."""


def explain_routing(
    config: RoutingConfig,
    path: str,
    data: bytes,
    *,
    repository: RepositoryKey | None = None,
    max_bytes: int = 2 * 1024 * 1024,
) -> dict[str, Any]:
    """Evaluate every rule for the file ``path`` with content ``data``; nothing is stored."""
    path = path.replace("\\", "/").removeprefix("./")
    out: dict[str, Any] = {
        "path": path,
        "repository": str(repository) if repository else None,
        "skipped": None,
        "decision": None,
        "error": None,
        "summary": "",
        "rules": [],
        "front_matter": {},
        "signals": {},
    }
    routable = _refusal(path, data, max_bytes) or routable_file(path, data)
    if isinstance(routable, Skip):
        out["skipped"] = {"code": str(routable.code), "reason": routable.reason}
        out["summary"] = f"skipped ({routable.code}): {routable.reason}"
        return out
    explained = Router(config, repository or PLACEHOLDER_REPOSITORY).explain(routable)
    decision = explained.decision
    out.update(
        front_matter=dict(routable.front_matter),
        signals=dict(routable.signals),
        error=explained.error,
        summary=explained.summary,
        rules=[
            {
                "rule": trace.label,
                "priority": trace.priority,
                "override": trace.override,
                "matched": trace.matched,
                "reasons": list(trace.reasons),
            }
            for trace in explained.traces
        ],
    )
    if decision is not None:
        out["decision"] = {
            "repository": str(decision.repository),
            "classification": str(decision.classification),
            "policy": str(decision.policy),
            "tags": list(decision.tags),
            "rule": decision.rule,
            "override_rule": decision.override_rule,
        }
    return out


def _refusal(path: str, data: bytes, max_bytes: int) -> Skip | None:
    """What ingest would refuse before parsing: a hostile path or an oversized file."""
    reason = unsafe_path_reason(path)
    if reason is not None:
        return Skip(SkipCode.UNSAFE_PATH, reason)
    if len(data) > max_bytes:
        return Skip(SkipCode.TOO_LARGE, f"file is {len(data)} bytes, over the {max_bytes}-byte cap")
    return None
