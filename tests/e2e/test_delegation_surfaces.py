"""On-behalf-of needs a delegation grant, on every surface (issue 28, item 1).

The probe: ``agent:a1`` opens proposal P; ``agent:a2``, an agent of the same repository, gets
NOT_FOUND for P — but naming ``agent:a1`` on behalf (``X-Ameide-On-Behalf-Of``, gRPC metadata
``x-ameide-on-behalf-of``, the CLI's ``--on-behalf-of``) it read P, revised it ("HIJACKED")
and withdrew it, and the record still said a1 proposed it. Now a request that names another
principal is ``PERMISSION_DENIED``, saying which grant is missing, until that principal (or an
admin) grants the delegation; with it, the records name both who acted and for whom.

And item 3: claimed roles cap clearance — a principal holding reader@public and
auditor@internal that claims ``reader`` reads public content only, on every surface.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from ameide_proto.v1 import governance_pb2 as gov
from service.authz import Caller
from tests.conftest import World
from tests.e2e.conftest import without_ameide_env
from tests.e2e.surface_drivers import SurfaceError, open_driver

SURFACES = ("service", "cli", "rest", "grpc", "mcp")
HIJACK = "HIJACKED by a2\n"


def _enrol(driver: Any, world: World, *who: Caller) -> None:
    client = getattr(driver, "g", None)
    if client is not None:
        for caller in who:
            client.tokens[caller.principal_id] = world.svc.tokens.create(
                world.admin, caller.principal_id
            )["token"]


def _revise(driver: Any, who: Caller, proposal_id: str, body: str) -> dict[str, Any]:
    """Revise through the driver's own surface (MCP has no revise tool: the service)."""
    if driver.name == "rest":
        path = f"/v1/proposals/{proposal_id}/revise"
        return dict(driver.call("POST", path, who, json={"body": body}))
    if driver.name == "grpc":
        request = gov.ReviseProposalRequest(proposal_id=proposal_id, body=body)
        return dict(driver.call(driver.g.governance.ReviseProposal, request, who))
    if driver.name == "cli":
        return dict(
            driver.cli(who, "proposal", "revise", proposal_id, "--body-file", driver.file(body))
        )
    return dict(driver._run(driver.svc.curation.revise, who, proposal_id, body))


def _withdraw(driver: Any, who: Caller, proposal_id: str) -> dict[str, Any]:
    if driver.name == "rest":
        return dict(driver.call("POST", f"/v1/proposals/{proposal_id}/withdraw", who, json={}))
    if driver.name == "grpc":
        request = gov.WithdrawProposalRequest(proposal_id=proposal_id)
        return dict(driver.call(driver.g.governance.WithdrawProposal, request, who))
    if driver.name == "cli":
        return dict(driver.cli(who, "withdraw", proposal_id))
    return dict(driver._run(driver.svc.review.withdraw, who, proposal_id))


def _refused(call: Any, *args: Any) -> SurfaceError:
    with pytest.raises(SurfaceError) as caught:
        call(*args)
    return caught.value


@pytest.mark.parametrize("surface", SURFACES)
def test_naming_another_agent_on_behalf_is_refused_until_it_delegates(
    surface: str, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_ameide_env(monkeypatch)
    svc = world.svc
    a1 = world.agent
    a2 = Caller(f"agent:a2-{secrets.token_hex(4)}", purpose="probe")
    svc.admin.grant(world.admin, a2.principal_id, "agent", world.repo)
    el, v1 = world.canonical("Runbook", "# Runbook\n\nstep one\n")
    p = svc.curation.propose(a1, world.repo, body="a1's draft\n", summary="s", element_id=el,
                    target_version_id=v1)["proposal_id"]  # fmt: skip
    posing = Caller(a2.principal_id, on_behalf_of=a1.principal_id, purpose="probe")
    with open_driver(surface, world, world.admin, tmp_path / "scratch") as driver:
        _enrol(driver, world, a1, a2)
        # a2 as itself: P does not exist to it
        assert _refused(driver.show_proposal, a2, p).code == "NOT_FOUND"
        # naming a1 without a delegation: refused, saying which grant is missing
        for attempt in (
            lambda: driver.show_proposal(posing, p),
            lambda: driver.read_context(posing, world.repo, query="runbook", selector="head"),
            lambda: driver.propose(
                posing, world.repo, element_id=el, target_version_id=v1, body="x\n", summary="s"
            ),
            lambda: _revise(driver, posing, p, HIJACK),
            lambda: _withdraw(driver, posing, p),
        ):
            err = _refused(attempt)
            assert err.code == "PERMISSION_DENIED", (err.code, err.message)
            assert "delegat" in err.message
            assert a1.principal_id in err.message
        shown = svc.curation.proposal_show(world.curator, p)
        assert shown["status"] == "OPEN"
        assert shown["body"] == "a1's draft\n"

        # a1 lets a2 act for it: now a2 may, and the records name both
        svc.admin.grant(a1, a2.principal_id, "delegate", world.repo, on_behalf_of=a1.principal_id)
        assert driver.show_proposal(posing, p)["proposal_id"] == p
        revised = _revise(driver, posing, p, "a2 for a1\n")
        assert revised["proposal_id"] == p
        version = svc.reading.get_version(world.curator, revised["proposal_version_id"])["version"]
        assert version["provenance"]["actor_id"] == a2.principal_id
        assert version["provenance"]["on_behalf_of"] == a1.principal_id
        events = [
            e for e in svc.history.history(world.auditor, world.repo)
            if e["event_type"] == "proposal.revised" and e["proposal_id"] == p
        ]  # fmt: skip
        assert [(e["actor"], e["on_behalf_of"]) for e in events] == [
            (a2.principal_id, a1.principal_id)
        ]
        # a2 as itself still does not own a1's proposal
        assert _refused(driver.show_proposal, a2, p).code == "NOT_FOUND"


@pytest.mark.parametrize("surface", [s for s in SURFACES if s != "cli"])  # the CLI claims none
def test_a_claimed_role_caps_clearance_to_that_roles_grants(
    surface: str, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_ameide_env(monkeypatch)
    svc = world.svc
    dual = Caller(f"user:dual-{secrets.token_hex(4)}", purpose="probe")
    svc.admin.grant(world.admin, dual.principal_id, "reader", world.repo, "public")
    svc.admin.grant(world.admin, dual.principal_id, "auditor", world.repo, "internal")
    internal, _ = world.canonical("Plan", "# Plan\n\ninternal plan\n", classification="internal")
    public, _ = world.canonical("Notes", "# Notes\n\nopen notes\n", classification="public")
    as_reader = Caller(dual.principal_id, roles=("reader",), purpose="probe")
    with open_driver(surface, world, world.admin, tmp_path / "scratch") as driver:
        _enrol(driver, world, dual)
        assert driver.get_element(dual, internal)["element"]["element_id"] == internal
        assert driver.get_element(as_reader, public)["element"]["element_id"] == public
        assert _refused(driver.get_element, as_reader, internal).code == "NOT_FOUND"
        out = driver.read_context(as_reader, world.repo, query="plan notes", selector="head")
        assert {i["element_id"] for i in out["items"]} == {public}
