"""Surface parity: one scenario, written once, through the CLI, REST, gRPC and MCP.

The reference scenario of docs/product.md §9 — ingest → read → propose → another change accepted →
stale accept refused → rebase → accept → promote → published read → ``as_of`` read → citations
verified → history → element — plus a set of bad requests, is written once against the driver
interface of ``tests/e2e/surface_drivers.py``. It runs once in-process against the service
(the reference run) and once per surface, each on a fresh SQLite world; every run is
normalised (ids → names and first-seen ordinals, the world's tag and repository → placeholders,
scores compared to 1e-3) and each surface's transcript must equal the reference's exactly, and
every bad request must give the taxonomy code listed in ``BAD_REQUESTS`` on every surface.

How each surface is reached:

- CLI: ``ameide … --json`` through Typer's ``CliRunner`` in-process on the world's database;
  every step, ingest included.
- REST: real HTTP to uvicorn on a loopback port with a bearer token per principal. REST has no
  ingest operation, so **ingest runs through the service in-process** for the REST run.
- gRPC: the generated stubs on a real channel to a server on a loopback port. gRPC has no ingest
  RPC, so **ingest runs through the service in-process** for the gRPC run.
- MCP: the official SDK client over Streamable HTTP (real socket) with a bearer token per
  principal. MCP publishes only the nine agent tools, so **ingest, create_element,
  create_baseline, promote, show_proposal, accept and rebase run through the service
  in-process** for the MCP run (the same service instance the MCP server serves). Every step
  with a tool goes through MCP: read (``memory.get_context``), propose, verify_citations,
  history and get_element — and so do all bad requests, which only use those steps.

``test_bypassed_steps_are_exactly_the_documented_ones`` pins these lists to the drivers' code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from runtime import build_app
from service.authz import Caller
from service.settings import Settings
from tests.conftest import World, make_world
from tests.e2e import surface_drivers as drivers
from tests.e2e.conftest import without_ameide_env
from tests.e2e.surface_drivers import SURFACES, ServiceDriver, SurfaceError, open_driver
from tests.integration.ingest.conftest import GitRepo

SOP_V1 = "# Testing SOP\n\n## Phase 0\n\nRun phase 0.\n\n## Phase 1\n\nRun phase 1.\n"
SOP_FAST = SOP_V1.replace("Run phase 0.", "Run phase 0 with --fast.")
SOP_PHASE_2 = SOP_V1 + "\n## Phase 2\n\nRun phase 2.\n"
SOP_MERGED = SOP_FAST + "\n## Phase 2\n\nRun phase 2.\n"
QUESTION = "how do I run phase 0/1/2 tests?"
BACKLOG = {
    "backlog/phase-tests.md": "# Phase tests runbook\n\nHow to run phase 0, phase 1 and phase 2 "
    "tests: call make test with the phase number.\n",
    "backlog/ci-notes.md": "---\nstatus: active\n---\n# CI notes\n\nThe CI runner runs phase 1 "
    "tests nightly; see [the runbook](phase-tests.md).\n",
    "backlog/billing.md": "# Billing\n\nInvoices go out monthly.\n",
}

BYPASSED = {
    "cli": set(),
    "rest": {"ingest"},
    "grpc": {"ingest"},
    "mcp": {
        "ingest",
        "create_element",
        "create_baseline",
        "promote",
        "show_proposal",
        "accept",
        "rebase",
    },
}
"""Steps each surface lacks, done through the service in-process (the module docstring)."""


TOOL_IDS = {
    "service": None,
    "cli": "ameide-cli",
    "rest": "ameide-rest",
    "grpc": "ameide-grpc",
    "mcp": "ameide-mcp",
}
"""The provenance ``tool_id`` each surface stamps on what it writes (the one expected
difference between the runs, so it is checked per surface and left out of the transcript)."""


# ---- normalisation -----------------------------------------------------------------------

_ID = re.compile(r"\b[a-z]{2,5}_[0-9a-f]{8,64}\b")


class Approx:
    """A score, equal to another within 1e-3 (recency moves in the seventh decimal)."""

    def __init__(self, value: float) -> None:
        self.value = float(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Approx) and abs(self.value - other.value) < 1e-3

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"~{self.value:.3f}"


class Names:
    """Per-run names for what differs between runs: ids, the world's tag and repositories."""

    def __init__(self, world: World, missing_repo: str) -> None:
        self.labels: dict[str, str] = {}
        self.seen: dict[str, int] = {}
        tag = world.repo.split("/")[0].removeprefix("acme-")
        self.literals = [(world.repo, "<repo>"), (missing_repo, "<repo>"), (tag, "TAG")]

    def name(self, value: str, label: str) -> str:
        """Give an id a stable name (``SOP@1``, ``BL2``, …)."""
        assert self.labels.get(value, label) == label, (value, label, self.labels[value])
        self.labels[value] = label
        return value

    def id(self, value: str | None) -> str | None:
        """The name of an id; an unnamed one gets ``prefix#n`` in order of first sight."""
        if value is None:
            return None
        if value not in self.labels:
            prefix = value.split("_", 1)[0]
            self.seen[prefix] = self.seen.get(prefix, 0) + 1
            self.labels[value] = f"{prefix}#{self.seen[prefix]}"
        return self.labels[value]

    def text(self, value: str | None) -> str | None:
        """A message or body with ids, repositories and the tag replaced."""
        if value is None:
            return None
        for literal, placeholder in self.literals:
            value = value.replace(literal, placeholder)
        return _ID.sub(lambda m: str(self.id(m.group(0))), value)

    def tree(self, value: Any) -> Any:
        """``text`` applied to every string of a JSON value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.tree(v) for k, v in sorted(value.items())}
        if isinstance(value, list):
            return [self.tree(v) for v in value]
        return value


def items_of(n: Names, ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """Each read item: what it is, which version, why, how it ranked and what it cites."""
    return [
        {
            "title": item["title"],
            "element": n.id(item["element_id"]),
            "version": n.id(item["version_id"]),
            "repository": n.text(item["repository_id"]),
            "source_kind": item["source_kind"],
            "why_included": item["why_included"],
            "score": Approx(item["score"]),
            "content": item["content"],
            "provenance": (
                n.text(item["provenance"]["actor_id"]),
                item["provenance"].get("path"),
                item["provenance"].get("source_repo"),
                item["provenance"].get("commit_sha"),
            ),
            "citations": [
                (
                    n.id(c["version_id"]),
                    n.id(c["element_id"]),
                    c["excerpt"]["chunk_key"],
                    c["excerpt"]["start"],
                    c["excerpt"]["end"],
                )
                for c in item["citations"]
            ],
            "relationship_path": item.get("relationship_path", []),
        }
        for item in ctx["items"]
    ]


def context_of(n: Names, ctx: dict[str, Any]) -> dict[str, Any]:
    """A read's selector, items, block and truncation flag."""
    used = ctx["selector_used"]
    return {
        "selector": (used["kind"], n.id(used.get("baseline_id")), used.get("as_of") is not None),
        "items": items_of(n, ctx),
        "context_block": n.text(ctx["context_block"]),
        "truncated": ctx["truncated"],
        "scope": n.tree(ctx["scope"]),
    }


PROPOSAL_ID_FIELDS = (
    "proposal_id",
    "proposal_element_id",
    "target_element_id",
    "target_version_id",
    "rebased_from",
    "rebased_to",
    "result_version_id",
    "proposal_version_id",
    "current_head_version_id",
    "selected_version_id",
    "decision_element_id",
)


def proposal_of(n: Names, p: dict[str, Any]) -> dict[str, Any]:
    """A proposal's state, pins, body and diff."""
    out = {f: n.id(p.get(f)) for f in PROPOSAL_ID_FIELDS}
    out.update(
        {f: p.get(f) for f in ("status", "change_kind", "summary", "title", "body", "stale")}
    )
    out.update({f: p.get(f) for f in ("has_conflicts", "client_request_id", "replay")})
    out["repository"] = n.text(p["repository_id"])
    out["proposed_by"] = (p["proposed_by"]["actor_type"], n.text(p["proposed_by"]["actor_id"]))
    out["target_selector"] = p["target_selector"]["kind"]
    out["decided_by"] = n.text(p.get("decided_by"))
    out["metadata"] = p.get("metadata") or {}
    out["diff"] = n.text(p["diff"])
    return out


def version_of(n: Names, v: dict[str, Any]) -> dict[str, Any]:
    """A version's identity, lineage and content hash (bodies where the surface returns them)."""
    return {
        "version": n.id(v["version_id"]),
        "element": n.id(v["element_id"]),
        "seq": int(v["seq"]),
        "parent": n.id(v.get("parent_version_id")),
        "title": v["title"],
        "sha256": v["content_sha256"],
        "actor": (v["provenance"]["actor_type"], n.text(v["provenance"]["actor_id"])),
        "metadata": v.get("metadata") or {},
        "erased": v["erased"],
        "body": v.get("body"),
    }


def element_of(n: Names, e: dict[str, Any]) -> dict[str, Any]:
    """An element's identity and classification."""
    return {
        "element": n.id(e["element_id"]),
        "repository": n.text(e["repository_id"]),
        "kind": (e["element_kind"], e["type_key"], e["source_kind"], e["classification"]),
        "created_by": n.text(e["created_by"]),
        "head": n.id(e.get("head_version_id")),
        "retired": e.get("retired_at") is not None,
    }


def error_of(n: Names, e: SurfaceError) -> dict[str, Any]:
    """A failure: its taxonomy code, message and details."""
    return {"code": e.code, "message": n.text(e.message), "details": n.tree(e.details)}


# ---- the scenario ------------------------------------------------------------------------


@dataclass
class Run:
    """What one run produced, normalised."""

    surface: str
    transcript: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Ctx:
    """What the scenario learnt that the bad requests reuse."""

    world: World
    missing_repo: str
    sop: str = ""
    head: str = ""
    stale_proposal: str = ""
    rebased_proposal: str = ""
    evidence: str = ""


def scenario(d: ServiceDriver, world: World, source: str, run: Run, n: Names, c: Ctx) -> None:
    """docs/product.md §9 through one driver; every surface-visible result is recorded."""
    w, t = world, run.transcript

    # 1. Ingest a backlog with testing documents: evidence with provenance.
    report = d.ingest(d.ingestor, source)
    t["ingest"] = {
        "counts": report["counts"],
        "links": report["links"],
        "skipped": report["skipped"],
        "noop": report["noop"],
        "versions_written": report["versions_written"],
        "repositories": n.tree(report["repositories"]),
    }
    assert report["counts"]["new"] == len(BACKLOG)

    # 2. A curator creates the canonical SOP; a publisher promotes a baseline holding it.
    created = d.create_element(w.curator, "Testing SOP", SOP_V1, "ameide:sop")
    sop, v1 = created["element"]["element_id"], created["version"]["version_id"]
    n.name(sop, "SOP")
    n.name(v1, "SOP@1")
    t["create_element"] = {
        "element": element_of(n, created["element"]),
        "version": version_of(n, created["version"]),
    }
    bl1 = d.create_baseline(w.publisher, "first")
    n.name(bl1["baseline_id"], "BL1")
    t["baseline_1"] = {
        "name": bl1["name"],
        "pins": [(n.id(p["element_id"]), n.id(p["version_id"])) for p in bl1["pins"]],
    }
    assert t["baseline_1"]["pins"] == [("SOP", "SOP@1")]
    move = d.promote(w.publisher, bl1["baseline_id"])
    t["promote_1"] = (n.id(move.get("from")), n.id(move["to"]), n.text(move["by"]))
    assert t["promote_1"][:2] == (None, "BL1")

    # 3. The agent asks over the published truth: the SOP first, evidence below it.
    seen = d.read_context(w.agent, w.repo, query=QUESTION)
    n.name(seen["context_id"], "CTX-step-3")
    t["read_published"] = context_of(n, seen)
    kinds = [(i["title"], i["source_kind"]) for i in seen["items"]]
    assert kinds[0] == ("Testing SOP", "CANONICAL")
    assert ("Phase tests runbook", "INGESTED_EVIDENCE") in kinds[1:]
    assert seen["items"][0]["version_id"] == v1
    citation = seen["items"][0]["citations"][0]
    step_3 = seen["selector_used"]["resolved_at"]
    c.evidence = next(
        i["element_id"] for i in seen["items"] if i["source_kind"] == "INGESTED_EVIDENCE"
    )

    # 4. The agent proposes an update pinned to v1; a retry with the same key replays it.
    ask = {"element_id": sop, "target_version_id": v1, "body": SOP_PHASE_2}
    ask |= {"summary": "add phase 2", "client_request_id": "agent-add-phase-2"}
    proposal = d.propose(w.agent, w.repo, **ask)
    n.name(proposal["proposal_id"], "P-agent")
    t["propose"] = proposal_of(n, proposal)
    assert (proposal["status"], proposal["stale"], proposal["replay"]) == ("OPEN", False, False)
    assert proposal["proposed_by"].get("tool_id") == TOOL_IDS[d.name]  # each surface signs
    again = d.propose(w.agent, w.repo, **ask)
    t["propose_replay"] = proposal_of(n, again)
    assert (again["proposal_id"], again["replay"]) == (proposal["proposal_id"], True)

    # 5. Meanwhile another change is accepted: the agent's proposal is stale, accept refused.
    other = d.propose(
        w.agent, w.repo, element_id=sop, target_version_id=v1, body=SOP_FAST, summary="fast"
    )
    n.name(other["proposal_id"], "P-other")
    t["propose_other"] = proposal_of(n, other)
    accepted_other = d.accept(w.curator, other["proposal_id"], "fast is fine")
    v2 = accepted_other["result_version_id"]
    n.name(v2, "SOP@2")
    t["accept_other"] = proposal_of(n, accepted_other)
    late = d.propose(
        w.agent, w.repo, element_id=sop, target_version_id=v1, body=SOP_PHASE_2, summary="late"
    )
    n.name(late["proposal_id"], "P-late")
    t["propose_late"] = proposal_of(n, late)  # an agent sees it wrote against an old version
    assert (late["status"], late["stale"], late["current_head_version_id"]) == ("OPEN", True, v2)
    shown = d.show_proposal(w.curator, proposal["proposal_id"])
    t["show_stale"] = proposal_of(n, shown)
    assert (shown["stale"], shown["current_head_version_id"]) == (True, v2)
    with pytest.raises(SurfaceError) as refused:
        d.accept(w.curator, proposal["proposal_id"])
    t["accept_stale"] = error_of(n, refused.value)
    assert refused.value.code == "STALE_PROPOSAL"
    assert refused.value.details["current_head_version_id"] == v2
    c.sop, c.head, c.stale_proposal = sop, v2, late["proposal_id"]
    c.rebased_proposal = proposal["proposal_id"]

    # 6. Rebase (a clean three-way merge onto the head), then accept.
    rebased = d.rebase(w.agent, proposal["proposal_id"])
    n.name(rebased["proposal_id"], "P-rebased")
    t["rebase"] = proposal_of(n, rebased)
    assert (rebased["status"], rebased["target_version_id"]) == ("OPEN", v2)
    assert (rebased["has_conflicts"], rebased["body"]) == (False, SOP_MERGED)
    accepted = d.accept(w.curator, rebased["proposal_id"], "clean merge")
    v3 = accepted["result_version_id"]
    n.name(v3, "SOP@3")
    t["accept_rebased"] = proposal_of(n, accepted)
    c.head = v3

    # 7. The publisher promotes: published reads see v3; as of step 3 they see v1.
    bl2 = d.create_baseline(w.publisher, "second")
    n.name(bl2["baseline_id"], "BL2")
    t["baseline_2"] = {
        "name": bl2["name"],
        "pins": [(n.id(p["element_id"]), n.id(p["version_id"])) for p in bl2["pins"]],
    }
    assert t["baseline_2"]["pins"] == [("SOP", "SOP@3")]
    move = d.promote(w.publisher, bl2["baseline_id"])
    t["promote_2"] = (n.id(move.get("from")), n.id(move["to"]), n.text(move["by"]))
    assert t["promote_2"][:2] == ("BL1", "BL2")
    now = d.read_context(w.agent, w.repo, query="phase 2 tests")
    t["read_after_promote"] = context_of(n, now)
    # the SOP as published now is v3 (which of the SOP and the runbook ranks first is up to
    # the engine's BM25 statistics: tantivy puts the runbook 0.04 ahead)
    assert [i["version_id"] for i in now["items"] if i["element_id"] == sop] == [v3]
    then = d.read_context(w.agent, w.repo, query=QUESTION, as_of=step_3)
    t["read_as_of_step_3"] = context_of(n, then)
    assert [i["version_id"] for i in then["items"] if i["element_id"] == sop] == [v1]
    assert then["selector_used"]["baseline_id"] == bl1["baseline_id"]
    # Ids that name nothing readable are dropped, never told apart (malformed or missing).
    by_ids = d.read_context(w.agent, w.repo, element_ids=["not-an-id", "el_" + "0" * 24, sop])
    t["read_by_ids"] = context_of(n, by_ids)
    assert [i["version_id"] for i in by_ids["items"]] == [v3]

    # 8. Citations: what was returned verifies; a version that was not returned does not.
    cited = [citation, {**citation, "version_id": v3, "excerpt": None}]
    cited[1] = {k: v for k, v in cited[1].items() if v is not None}
    verdict = d.verify_citations(w.agent, seen["context_id"], cited)
    t["verify_citations"] = {
        "context": n.id(verdict["context_id"]),
        "counts": (verdict["all_valid"], verdict["valid"], verdict["invalid"]),
        "results": [(r["valid"], r["reason"]) for r in verdict["results"]],
    }
    assert [r["valid"] for r in verdict["results"]] == [True, False]

    # 9. History and the element as a reader sees them.
    history = d.element_history(w.reader, sop)
    t["history"] = {
        "element": element_of(n, history["element"]),
        "versions": [version_of(n, v) for v in history["versions"]],
    }
    assert [v["seq"] for v in t["history"]["versions"]] == [1, 2, 3]
    element = d.get_element(w.reader, sop)
    t["get_element"] = {
        "element": element_of(n, element["element"]),
        "version": version_of(n, element["version"]),
    }
    assert element["version"]["body"] == SOP_MERGED
    old = d.get_element(w.reader, sop, v1)
    t["get_element_v1"] = version_of(n, old["version"])
    assert old["version"]["body"] == SOP_V1


BadRequest = Callable[[ServiceDriver, Ctx], Any]


def propose(d: ServiceDriver, c: Ctx, who: Caller, repo: str, **change: Any) -> Any:
    """An UPDATE of the SOP pinned to its head, with ``change`` applied."""
    ask = {"element_id": c.sop, "target_version_id": c.head, "body": "# x\n", "summary": "x"}
    return d.propose(who, repo, **(ask | change))


def read(d: ServiceDriver, c: Ctx, **request: Any) -> Any:
    """The agent reads the world's repository with ``request``."""
    return d.read_context(c.world.agent, c.world.repo, **request)


UNKNOWN_EL = "el_" + "0" * 24
BAD_REQUESTS: dict[str, tuple[str, BadRequest]] = {
    "unknown selector": (
        "INVALID_ARGUMENT",
        lambda d, c: read(d, c, query="x", selector="newest"),
    ),
    "baseline_ref without a baseline": (
        "INVALID_ARGUMENT",
        lambda d, c: read(d, c, query="x", selector="baseline_ref"),
    ),
    "empty query and no ids": ("INVALID_ARGUMENT", lambda d, c: read(d, c, query="")),
    "over-cap budget": ("INVALID_ARGUMENT", lambda d, c: read(d, c, query="x", max_items=10_000)),
    "malformed as_of": ("INVALID_ARGUMENT", lambda d, c: read(d, c, query="x", as_of="yesterday")),
    "read a forbidden repository": (
        "NOT_FOUND",
        lambda d, c: d.read_context(c.world.stranger, c.world.repo, query="phase"),
    ),
    "read a missing repository": (
        "NOT_FOUND",
        lambda d, c: d.read_context(c.world.stranger, c.missing_repo, query="phase"),
    ),
    "propose in a forbidden repository": (
        "NOT_FOUND",
        lambda d, c: propose(d, c, c.world.stranger, c.world.repo),
    ),
    "propose in a missing repository": (
        "NOT_FOUND",
        lambda d, c: propose(d, c, c.world.stranger, c.missing_repo),
    ),
    "propose without the role": (
        "PERMISSION_DENIED",
        lambda d, c: propose(d, c, c.world.reader, c.world.repo),
    ),
    "propose to ingested evidence": (
        "INVALID_ARGUMENT",
        lambda d, c: propose(d, c, c.world.agent, c.world.repo, element_id=c.evidence),
    ),
    "propose an empty body": (
        "INVALID_ARGUMENT",
        lambda d, c: propose(d, c, c.world.agent, c.world.repo, body=""),
    ),
    "reuse a client_request_id for another body": (
        "ALREADY_EXISTS",
        lambda d, c: propose(
            d,
            c,
            c.world.agent,
            c.world.repo,
            summary="add phase 2",
            client_request_id="agent-add-phase-2",
        ),
    ),
    "accept a stale proposal": (
        "STALE_PROPOSAL",
        lambda d, c: d.accept(c.world.curator, c.stale_proposal),
    ),
    "accept a proposal that was rebased": (
        "FAILED_PRECONDITION",
        lambda d, c: d.accept(c.world.curator, c.rebased_proposal),
    ),
    "malformed element id": (
        "INVALID_ARGUMENT",
        lambda d, c: d.get_element(c.world.reader, "not-an-id"),
    ),
    "unknown element id": ("NOT_FOUND", lambda d, c: d.get_element(c.world.reader, UNKNOWN_EL)),
    "history of an unknown element": (
        "NOT_FOUND",
        lambda d, c: d.element_history(c.world.reader, UNKNOWN_EL),
    ),
    "verify citations of an unknown context": (
        "NOT_FOUND",
        lambda d, c: d.verify_citations(c.world.agent, "ctx_" + "0" * 24, [{"version_id": c.head}]),
    ),
    "no credentials": (
        "UNAUTHENTICATED",
        lambda d, c: d.read_without_credentials(c.world.repo, "phase"),
    ),
}
"""Each bad request and the taxonomy code every surface must answer it with."""

FORBIDDEN_VS_MISSING = [
    ("read a forbidden repository", "read a missing repository"),
    ("propose in a forbidden repository", "propose in a missing repository"),
]
"""Pairs that must be indistinguishable (the repository's name aside)."""

ADAPTER_VALIDATED: dict[str, dict[str, str]] = {
    "mcp": {"unknown selector": "selector", "over-cap budget": "max_items"},
    "rest": {"propose an empty body": "body.body", "malformed element id": "path.element_id"},
}
"""Known differences: bad requests a surface refuses itself, before the service sees them
(the MCP tool's input schema checks ``selector`` and
``max_items``; REST's OpenAPI schema carries the service's input rules, so FastAPI refuses a
blank body or a malformed id first, with the service's words inside its validation shape:
``invalid request: body.body: body is empty``), so the message and details are the surface's
own. A refused read_context body is still worded by the service's own ``parse_request`` (the
CLI's, MCP's and the console's reads are built by ``edge.reading.read_request``). The
code must still match and the message must name the field (the value here); the test also
fails once a difference disappears, so this list stays exact."""


def bad_requests(d: ServiceDriver, run: Run, n: Names, c: Ctx) -> None:
    """Every bad request through one driver; record what it answered."""
    for name, (_, call) in BAD_REQUESTS.items():
        try:
            answer = call(d, c)
        except SurfaceError as failed:
            run.errors[name] = error_of(n, failed)
        else:
            pytest.fail(f"{d.name}: {name!r} succeeded: {answer}")


def run_scenario(surface: str, world: World, source: str, scratch: Path) -> Run:
    """The scenario and the bad requests through ``surface`` on a fresh world."""
    tag = world.repo.split("/")[0].removeprefix("acme-")
    ingestor = Caller(f"service:ingest-{tag}", purpose="test as ingestor")
    world.svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo)
    missing_repo = f"acme-{tag}/eng/nowhere"
    names = Names(world, missing_repo)
    run, ctx = Run(surface), Ctx(world, missing_repo)
    with open_driver(surface, world, ingestor, scratch) as driver:
        assert surface == "service" or driver.bypassed() == BYPASSED[surface]
        scenario(driver, world, source, run, names, ctx)
        bad_requests(driver, run, names, ctx)
    return run


# ---- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def backlog(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A git backlog with testing documents (shared: every run mirrors the same commit)."""
    git = GitRepo(tmp_path_factory.mktemp("parity") / "backlog")
    for path, text in BACKLOG.items():
        git.write(path, text)
    git.commit("backlog")
    return str(git.root)


@pytest.fixture(scope="module")
def runs(backlog: str, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Run]:
    """``runs(surface)``: the scenario through ``surface`` (or ``"service"``, the reference)
    on its own fresh, migrated SQLite world, run once per module and shared by the tests."""
    done: dict[str, Run | BaseException] = {}

    def get(surface: str) -> Run:
        if surface not in done:
            home = tmp_path_factory.mktemp(surface)
            app = build_app(Settings(home=home / "home"), migrate=True)
            try:
                with pytest.MonkeyPatch.context() as mp:
                    without_ameide_env(mp)  # no AMEIDE_* of the shell reaches the CLI
                    world = make_world(app)
                    done[surface] = run_scenario(surface, world, backlog, home / "scratch")
            except Exception as exc:
                done[surface] = exc
                raise
            finally:
                app.close()
        outcome = done[surface]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return get


# ---- the tests ---------------------------------------------------------------------------


@pytest.mark.parametrize("surface", SURFACES)
def test_the_scenario_gives_the_same_results_on_every_surface(
    surface: str, runs: Callable[[str], Run]
) -> None:
    reference, run = runs("service"), runs(surface)
    assert list(run.transcript) == list(reference.transcript)
    for step, expected in reference.transcript.items():
        assert run.transcript[step] == expected, f"{surface}: step {step!r} differs"


@pytest.mark.parametrize("surface", SURFACES)
def test_bad_requests_give_the_same_errors_on_every_surface(
    surface: str, runs: Callable[[str], Run]
) -> None:
    reference, run = runs("service"), runs(surface)
    codes = {name: e["code"] for name, e in run.errors.items()}
    assert codes == {name: code for name, (code, _) in BAD_REQUESTS.items()}
    own = ADAPTER_VALIDATED.get(surface, {})
    for name, expected in reference.errors.items():
        if name == "no credentials":  # each surface names its own credential mechanism
            continue
        if name in own:
            assert own[name] in run.errors[name]["message"], (surface, name, run.errors[name])
            assert run.errors[name] != expected, f"{surface}: {name!r} now matches; unlist it"
        else:
            assert run.errors[name] == expected, f"{surface}: {name!r} differs"
    # forbidden and missing look exactly alike (the repository's name aside)
    for forbidden, missing in FORBIDDEN_VS_MISSING:
        assert run.errors[forbidden] == run.errors[missing], f"{surface}: {forbidden!r}"


def test_bypassed_steps_are_exactly_the_documented_ones() -> None:
    classes = {
        "cli": drivers.CliDriver,
        "rest": drivers.RestDriver,
        "grpc": drivers.GrpcDriver,
        "mcp": drivers.McpDriver,
    }
    assert {name: cls.bypassed() for name, cls in classes.items()} == BYPASSED
