"""Issue 30 §3 defect 11: what an agent (or a person) is told to do next.

A NOT_FOUND advises a tool that can find what was missed (memory.search finds elements, not
repositories or contexts); proposing against a version that is already stale says so with a
``Next:`` line, on MCP and in the CLI; PROPOSAL_HAS_CONFLICTS names how many hunks conflict and
where, alike on REST, gRPC and the CLI (one error taxonomy). MCP through the official SDK client,
REST on a real uvicorn socket, gRPC on a real channel, the CLI through CliRunner.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
from mcp import Client

from ameide_proto.v1 import governance_pb2 as gov
from mcp_adapter.server import MemoryMcp
from server.rest.app import create_app
from service.authz import Caller
from tests.conftest import World
from tests.e2e.conftest import Repo
from tests.e2e.grpc_harness import serve
from tests.e2e.mcp_harness import error_of, error_text, structured
from tests.e2e.rest_harness import running, tokens_for

SOP = "# Testing SOP\n\nRun phase 0.\n\nRun phase 1.\n"


def _mcp(world: World, who: Caller, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    results: list[Any] = []

    async def main() -> None:
        async with Client(MemoryMcp(world.svc, lambda ctx: who).server()) as client:
            for name, args in calls:
                results.append(await client.call_tool(name, args))

    anyio.run(main)
    return results


def test_not_found_advises_a_tool_that_can_find_the_missing_thing(world: World) -> None:
    element, _ = world.canonical(body=SOP)
    other_repo = world.repo.rsplit("/", 1)[0] + "/nowhere"
    repo, context, version = _mcp(
        world,
        world.agent,
        [
            ("memory.get_context", {"repository": other_repo, "query": "phase"}),
            ("memory.verify_citations", {"context_id": "ctx_" + "0" * 24, "citations": []}),
            ("memory.get_element", {"element_id": element, "version_id": "ver_" + "0" * 24}),
        ],
    )
    repo_text = error_text(repo)
    assert repo_text.startswith(f"NOT_FOUND: repository {other_repo} not found. Next: ")
    assert "memory.health" in repo_text
    assert "memory.search" not in repo_text
    context_text = error_text(context)
    assert context_text.startswith("NOT_FOUND: read context ctx_")
    assert "memory.get_context" in context_text.split("Next:")[1]
    assert "memory.search" not in context_text
    assert error_of(context)["details"] == {"context_id": "ctx_" + "0" * 24}
    assert "memory.search" in error_text(version)  # search does find elements and versions


def _stale_pin(world: World) -> tuple[str, str, str]:
    """An element whose v1 was superseded by v2: (element, v1, v2)."""
    element, v1 = world.canonical(body=SOP)
    other = world.svc.curation.propose(
        world.admin, world.repo, element_id=element, target_version_id=v1,
        body=SOP + "\nMore.\n", summary="more",
    )  # fmt: skip
    return (
        element,
        v1,
        world.svc.review.accept(world.curator, other["proposal_id"])["result_version_id"],
    )


def test_proposing_against_a_stale_version_says_what_to_do_next_on_mcp(world: World) -> None:
    element, v1, v2 = _stale_pin(world)
    stale, fresh = _mcp(
        world,
        world.agent,
        [
            ("memory.propose", {"repository": world.repo, "element_id": element,
                                "target_version_id": v1, "summary": "late", "body": SOP + "x\n"}),
            ("memory.propose", {"repository": world.repo, "element_id": element,
                                "target_version_id": v2, "summary": "on time", "body": SOP}),
        ],
    )  # fmt: skip
    result = structured(stale)
    assert result["stale"] is True
    assert json.loads(stale.content[0].text) == result  # the JSON block stays first
    hint = stale.content[1].text
    assert hint.startswith(f"STALE: proposal {result['proposal_id']} is pinned to {v1}")
    assert f"Next: read the element again with memory.get_element (element_id {element})" in hint
    assert f"target_version_id {v2}" in hint
    assert structured(fresh)["stale"] is False
    assert len(fresh.content) == 1  # nothing to act on, no hint


def test_proposing_against_a_stale_version_says_what_to_do_next_in_the_cli(
    repo: Repo, files: Any
) -> None:
    cli = repo.cli
    element, v1 = repo.canonical()
    body = files("new.md", "# Testing SOP\n\nRun it twice.\n")
    pin = ("--repo", repo.key, "--element", element, "--body-file", body, "--summary", "s")
    first = cli.ok("propose", *pin, "--target-version", v1, as_=repo.agent)
    v2 = cli.ok("accept", first["proposal_id"], as_=repo.curator)["result_version_id"]
    late = cli("propose", *pin, "--target-version", v1, as_=repo.agent)
    assert late.exit_code == 0, late.output
    said = " ".join(late.stdout.split())
    assert f"stale: {element} changed since {v1}; its head is {v2}." in said
    assert f"Next: read it again (ameide element show {element}) and propose against {v2}" in said
    on_time = cli("propose", *pin, "--target-version", v2, as_=repo.agent)
    assert "stale" not in on_time.stdout
    assert "Next:" not in on_time.stdout


def _conflicted(world: World) -> tuple[str, list[dict[str, int]]]:
    """A proposal whose rebase left two conflicting hunks; its id and where they are."""
    el, v1 = world.canonical(body=SOP)
    mine = world.svc.curation.propose(
        world.agent, world.repo, body=SOP.replace(".", " twice.").replace("# Testing SOP twice.",
        "# Testing SOP"), summary="m", element_id=el, target_version_id=v1,
    )  # fmt: skip
    theirs = world.svc.curation.propose(
        world.agent, world.repo, body=SOP.replace("0.", "0 fast.").replace("1.", "1 fast."),
        summary="t", element_id=el, target_version_id=v1,
    )  # fmt: skip
    world.svc.review.accept(world.curator, theirs["proposal_id"])
    rebased = world.svc.review.rebase(world.agent, mine["proposal_id"])["proposal_id"]
    body = world.svc.curation.proposal_show(world.curator, rebased)["body"]
    lines = body.split("\n")
    starts = [n for n, line in enumerate(lines, 1) if line.startswith("<<<<<<<")]
    ends = [n for n, line in enumerate(lines, 1) if line.startswith(">>>>>>>")]
    return rebased, [{"start_line": a, "end_line": b} for a, b in zip(starts, ends, strict=True)]


def test_a_conflicted_proposal_names_its_hunks_on_rest_grpc_and_the_cli(world: World) -> None:
    proposal, hunks = _conflicted(world)
    assert len(hunks) == 2
    expected = {"conflicts": 2, "hunks": hunks}
    ranges = ", ".join(f"{h['start_line']}-{h['end_line']}" for h in hunks)

    with running(create_app(world.svc, settings=world.app.settings)) as base:
        token = tokens_for(world)[world.curator.principal_id]
        refused = httpx2.post(
            f"{base}/v1/proposals/{proposal}/accept",
            headers={"Authorization": f"Bearer {token}"},
            json={},
            timeout=30,
        )
    assert refused.status_code == 412, refused.text
    error = refused.json()["error"]
    assert error["code"] == "PROPOSAL_HAS_CONFLICTS"
    assert error["details"] == expected
    assert f"2 conflicting hunks at lines {ranges}" in error["message"]

    with serve(world) as g:
        failure = g.fail(
            g.governance.AcceptProposal,
            gov.AcceptProposalRequest(proposal_id=proposal),
            world.curator,
        )
    assert failure.code == "PROPOSAL_HAS_CONFLICTS"
    assert failure.details == expected
    assert f"lines {ranges}" in failure.message

    preview = world.svc.review.accept_preview(world.curator, proposal)
    assert preview["refusal"]["code"] == "PROPOSAL_HAS_CONFLICTS"
    assert f"lines {ranges}" in preview["refusal"]["message"]
