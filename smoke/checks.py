"""What the scenario remembers between steps, and the checks several steps share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from projection.packaging import JOINER
from smoke.content import AGENT
from smoke.runner import StepFailed, expect
from smoke.surface import Surface, SurfaceError


@dataclass
class ScenarioState:
    """Ids and instants one run of the scenario collected (tests inject faults with them)."""

    repo: str
    sop: str = ""
    v1: str = ""
    v2: str = ""
    v3: str = ""
    first_baseline: str = ""
    second_baseline: str = ""
    read_at: str = ""
    """When step 3's published read resolved: the ``as_of`` of step 6."""
    proposal: str = ""
    """The agent's proposal, pinned to v1."""
    rebased: str = ""
    evidence: bool = False
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The latest published read per surface (what ``verify_citations`` checks against)."""

    @property
    def missing_repo(self) -> str:
        """A repository that does not exist, next to the real one."""
        return self.repo + "-missing"


def refused(call: Callable[[], object], what: str) -> SurfaceError:
    """The error of a call that must be refused."""
    try:
        outcome = call()
    except SurfaceError as exc:
        return exc
    status = outcome.get("status") if isinstance(outcome, dict) else None
    raise StepFailed(f"{what} was not refused" + (f" (it came back {status})" if status else ""))


def same_answer(a: SurfaceError, b: SurfaceError, names: tuple[str, str], what: str) -> None:
    """``a`` (about the real thing) and ``b`` (about a missing one) say the same, names aside."""
    expect(
        a.code == "NOT_FOUND" and b.code == "NOT_FOUND",
        f"{what}: expected NOT_FOUND for both, got {a.code} and {b.code}",
    )
    expect(a.status == b.status, f"{what}: transport status {a.status} differs from {b.status}")
    expect(
        a.message.replace(names[0], "X") == b.message.replace(names[1], "X"),
        f"{what}: the answer tells them apart: {a.message!r} vs {b.message!r}",
    )


def sop_first(
    surface: Surface, st: ScenarioState, ctx: dict[str, Any], version: str, via: str
) -> str:
    """The published SOP (at ``version``) is the first item; its citations slice exactly the
    text it shows; evidence, once ingested, ranks below it."""
    items = ctx["items"]
    expect(items, f"the published read via {via} returned nothing")
    first = items[0]
    expect(
        first["element_id"] == st.sop and first["source_kind"] == "CANONICAL",
        f"via {via} the first item is {first['title']!r} ({first['source_kind']}), "
        "not the published SOP",
    )
    expect(
        first["version_id"] == version,
        f"via {via} the SOP comes back as {first['version_id']}, not {version}",
    )
    citations = first["citations"]
    expect(citations, f"the SOP item via {via} has no citations")
    body = surface.version_body(AGENT, st.sop, version, via)
    spans = []
    for c in citations:
        expect(
            c["version_id"] == version and c["element_id"] == st.sop,
            f"a citation via {via} points at {c['version_id']}, not the item's {version}",
        )
        span = c.get("excerpt") or {}
        start, end = int(span.get("start", -1)), int(span.get("end", -1))
        expect(0 <= start < end <= len(body), f"citation span [{start}, {end}) is off")
        spans.append(body[start:end])
    expect(
        JOINER.join(spans) == first["content"],
        f"via {via} the citation offsets do not slice the text the SOP item shows",
    )
    later = [i for i in items[1:] if i["source_kind"] == "INGESTED_EVIDENCE"]
    if st.evidence:
        expect(later, f"via {via} no matching evidence ranks below the SOP")
    return (
        f"via {via}: SOP first of {len(items)}, {len(citations)} citations slice the text "
        f"exactly, {len(later)} evidence below"
    )
