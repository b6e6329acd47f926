"""The governed scenario of docs/product.md §9 through the REST API, with one token per principal.

create SOP → publish → agent reads (published) → agent proposes pinned → a curator accepts
another change → the proposal is stale, accept refused (412) → rebase → accept → publish →
a published read returns the new version, an ``as_of`` read the old one → citations verified.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import World
from tests.e2e.rest_harness import Rest, rest_client

SOP_V1 = "# Testing SOP\n\n## Phase 0\n\nRun phase 0.\n\n## Phase 1\n\nRun phase 1.\n"
SOP_FAST = SOP_V1.replace("Run phase 0.", "Run phase 0 with --fast.")
SOP_PHASE_2 = SOP_V1 + "\n## Phase 2\n\nRun phase 2.\n"


@pytest.fixture
def rest(world: World) -> Iterator[Rest]:
    with rest_client(world) as r:
        yield r


def _read(rest: Rest, query: str, **extra: object) -> dict:
    tenant, org, repo = rest.world.repo.split("/")
    body = {
        "scope": {"tenant_id": tenant, "organization_id": org, "repository_id": repo},
        "query": query,
        **extra,
    }
    result: dict = rest.ok("POST", "/v1/context", rest.world.agent, json=body)
    return result


def test_the_governed_loop_runs_end_to_end_over_rest(rest: Rest) -> None:
    w, base = rest.world, rest.repo_path

    # A curator creates the canonical SOP; a publisher promotes a baseline containing it.
    created = rest.ok(
        "POST", f"{base}/elements", w.curator,
        json={"title": "Testing SOP", "body": SOP_V1, "type_key": "ameide:sop"},
    )  # fmt: skip
    sop, v1 = created["element"]["element_id"], created["version"]["version_id"]
    assert created["version"]["provenance"]["tool_id"] == "ameide-rest"
    first = rest.ok("POST", f"{base}/baselines", w.publisher, json={"name": "v1"})
    rest.ok("POST", f"{base}/promote", w.publisher, json={"baseline_id": first["baseline_id"]})

    # The agent asks over the published truth: the SOP comes first, pinned to v1.
    seen = _read(rest, "how do I run phase 0/1/2 tests?")
    assert seen["selector_used"]["baseline_id"] == first["baseline_id"]
    assert seen["items"][0]["version_id"] == v1
    citation = seen["items"][0]["citations"][0]
    step_3 = seen["selector_used"]["resolved_at"]

    # The agent proposes pinned to v1; retrying with the same request id replays it.
    proposal_body = {
        "element_id": sop, "target_version_id": v1, "body": SOP_PHASE_2,
        "summary": "add phase 2", "client_request_id": "agent-1-add-phase-2",
    }  # fmt: skip
    proposal = rest.ok("POST", f"{base}/proposals", w.agent, json=proposal_body)
    assert proposal["status"] == "OPEN"
    assert proposal["stale"] is False
    again = rest.ok("POST", f"{base}/proposals", w.agent, json=proposal_body)
    assert again["proposal_id"] == proposal["proposal_id"]
    assert again["replay"] is True

    # Meanwhile a curator accepts another change: the agent's proposal goes stale.
    other = rest.ok(
        "POST", f"{base}/proposals", w.admin,
        json={"element_id": sop, "target_version_id": v1, "body": SOP_FAST, "summary": "fast"},
    )  # fmt: skip
    v2 = rest.ok("POST", f"/v1/proposals/{other['proposal_id']}/accept", w.curator, json={})[
        "result_version_id"
    ]
    shown = rest.ok("GET", f"/v1/proposals/{proposal['proposal_id']}", w.agent)
    assert shown["stale"] is True
    assert shown["current_head_version_id"] == v2

    refused = rest.fail(
        "POST", f"/v1/proposals/{proposal['proposal_id']}/accept", w.curator, 412, json={}
    )
    assert refused["code"] == "STALE_PROPOSAL"
    assert refused["details"]["current_head_version_id"] == v2

    # Rebase (a three-way merge keeps both changes), then accept the new proposal.
    rebased = rest.ok("POST", f"/v1/proposals/{proposal['proposal_id']}/rebase", w.agent)
    assert rebased["target_version_id"] == v2
    assert rebased["has_conflicts"] is False
    assert "--fast" in rebased["body"]
    assert "Phase 2" in rebased["body"]
    accepted = rest.ok(
        "POST", f"/v1/proposals/{rebased['proposal_id']}/accept", w.curator,
        json={"rationale": "merged cleanly"},
    )  # fmt: skip
    v3 = accepted["result_version_id"]

    # The publisher promotes: published reads see v3; as of step 3 they see v1.
    second = rest.ok("POST", f"{base}/baselines", w.publisher, json={"name": "v3"})
    move = rest.ok(
        "POST", f"{base}/promote", w.publisher,
        json={"baseline_id": second["baseline_id"], "expected_baseline_id": first["baseline_id"]},
    )  # fmt: skip
    assert (move["from"], move["to"]) == (first["baseline_id"], second["baseline_id"])
    assert _read(rest, "phase 2 tests")["items"][0]["version_id"] == v3
    then = _read(rest, "phase tests", as_of=step_3)
    assert then["items"][0]["version_id"] == v1
    published_then = rest.ok("GET", f"{base}/published", w.auditor, params={"as_of": step_3})
    assert published_then["baseline_id"] == first["baseline_id"]
    diff = rest.ok(
        "GET", f"/v1/baselines/{first['baseline_id']}/diff/{second['baseline_id']}", w.publisher
    )
    assert [(c["element_id"], c["from"]["version_id"], c["to"]["version_id"]) for c in
            diff["changed"]] == [(sop, v1, v3)]  # fmt: skip

    # Citations: what was returned verifies; a version that was not returned does not.
    verdict = rest.ok(
        "POST", f"/v1/context/{seen['context_id']}/verify-citations", w.agent,
        json={"citations": [citation, {**citation, "version_id": v3, "excerpt": None}]},
    )  # fmt: skip
    assert [r["valid"] for r in verdict["results"]] == [True, False]
    assert verdict["all_valid"] is False

    # Replaying step 3's read now shows the new version; pinned to its instant, nothing changed.
    now = rest.ok("POST", f"/v1/context/{seen['context_id']}/replay", w.agent)
    assert now["identical"] is False
    assert [d["change"] for d in now["differences"]][:1] == ["version_changed"]
    then_again = rest.ok(
        "POST", f"/v1/context/{seen['context_id']}/replay", w.auditor, json={"as_recorded": True}
    )
    assert then_again["identical"] is True

    # The audit trail has every step and its chain verifies.
    events = [e["event_type"] for e in rest.ok("GET", f"{base}/history", w.auditor)]
    for step in ("proposal.opened", "proposal.accepted", "proposal.rebased", "pointer.moved"):
        assert step in events
    assert rest.ok("GET", f"{base}/audit/verify", w.auditor)["ok"] is True


def test_versions_history_and_neighbourhood_are_readable_over_rest(rest: Rest) -> None:
    w, base = rest.world, rest.repo_path
    sop, v1 = w.canonical(body=SOP_V1)
    note, _ = w.canonical(title="Runner notes", body="# Runner notes\n\nUse the CI runner.\n")
    rest.ok(
        "POST", "/v1/relationships", w.curator,
        json={"source_element_id": sop, "target_element_id": note,
              "relationship_kind": "REFERENCE", "type_key": "ameide:cites"},
    )  # fmt: skip

    version = rest.ok("GET", f"/v1/versions/{v1}", w.reader)
    assert version["version"]["body"] == SOP_V1
    assert [c["chunk_key"] for c in version["chunks"]][:1] == ["testing-sop"]
    history = rest.ok("GET", f"/v1/elements/{sop}/history", w.reader)
    assert [v["version_id"] for v in history["versions"]] == [v1]
    around = rest.ok("GET", f"/v1/elements/{sop}/neighborhood", w.reader, params={"hops": 1})
    assert {n["element_id"] for n in around["nodes"]} == {sop, note}
    links = rest.ok("GET", f"/v1/elements/{sop}/relationships", w.reader)
    assert [r["target_element_id"] for r in links] == [note]
    listed = rest.ok("GET", f"{base}/baselines", w.reader)
    assert listed == []


def test_rest_audit_verify_reports_a_deleted_chain_as_broken(rest: Rest) -> None:
    """Issue 28 item 13 over REST: a repository whose chain and head row were deleted does not
    verify as intact with 0 events."""
    from storage import schema as t

    w = rest.world
    w.canonical()
    with w.app.engine.begin() as conn:
        conn.execute(t.audit_events.delete().where(t.audit_events.c.chain_key == w.repo))
        conn.execute(t.audit_chain_heads.delete().where(t.audit_chain_heads.c.chain_key == w.repo))
    verdict = rest.ok("GET", f"{rest.repo_path}/audit/verify", w.auditor)
    assert (verdict["ok"], verdict["events_checked"]) == (False, 0)
    assert "repository.created" in verdict["reason"]


def test_accept_takes_only_the_proposal_version_the_curator_reviewed(rest: Rest) -> None:
    """``POST …/accept {"expected_version_id"}``: a proposal revised after the version the
    curator reviewed is refused (409 CONFLICT, naming both versions) and stays OPEN."""
    w = rest.world
    el, v1 = w.canonical()
    opened = rest.ok(
        "POST", f"{rest.repo_path}/proposals", w.agent,
        json={"element_id": el, "target_version_id": v1, "summary": "twice",
              "body": "# Testing SOP\n\nRun it twice.\n"},
    )  # fmt: skip
    pid = opened["proposal_id"]
    reviewed = rest.ok("GET", f"/v1/proposals/{pid}", w.curator)["proposal_version_id"]
    revised = rest.ok(
        "POST", f"/v1/proposals/{pid}/revise", w.agent,
        json={"body": "# Testing SOP\n\nDelete everything.\n"},
    )["proposal_version_id"]  # fmt: skip
    assert revised != reviewed
    accept = f"/v1/proposals/{pid}/accept"
    refused = rest.fail("POST", accept, w.curator, 409, json={"expected_version_id": reviewed})
    assert refused["code"] == "CONFLICT"
    assert refused["details"] == {"expected_version_id": reviewed, "proposal_version_id": revised}
    assert rest.ok("GET", f"/v1/proposals/{pid}", w.curator)["status"] == "OPEN"
    malformed = rest.fail("POST", accept, w.curator, 400, json={"expected_version_id": "v2"})
    assert malformed["code"] == "INVALID_ARGUMENT"
    done = rest.ok(
        "POST", accept, w.curator, json={"expected_version_id": revised, "rationale": "seen"}
    )
    assert done["status"] == "ACCEPTED"
