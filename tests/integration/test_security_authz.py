"""Authorization rules of issue 16 on the service: granting limits, no existence oracle for
callers who may not read, per-action clearance."""

from __future__ import annotations

import secrets

import pytest

from domain.errors import NotFound, PermissionDenied
from service.authz import Caller
from tests.conftest import World


def _fresh(prefix: str = "user") -> Caller:
    return Caller(f"{prefix}:p-{secrets.token_hex(4)}", purpose="test")


def test_a_repository_admin_cannot_grant_a_clearance_above_its_own(world: World) -> None:
    svc = world.svc
    boss = _fresh()
    svc.admin.grant(world.admin, boss.principal_id, "admin", world.repo, "internal")
    puppet = _fresh()
    with pytest.raises(PermissionDenied, match="may not grant clearance restricted") as caught:
        svc.admin.grant(boss, puppet.principal_id, "reader", world.repo, "restricted")
    assert caught.value.code == "PERMISSION_DENIED"
    with pytest.raises(PermissionDenied, match="may not grant clearance restricted"):
        svc.admin.grant(boss, boss.principal_id, "admin", world.repo, "restricted")
    # within its own clearance it may grant
    svc.admin.grant(boss, puppet.principal_id, "reader", world.repo, "internal")
    granted = {(g["principal_id"], g["clearance"]) for g in svc.admin.list_grants(boss, world.repo)}
    assert (puppet.principal_id, "internal") in granted
    assert (puppet.principal_id, "restricted") not in granted


def test_the_cap_is_per_action_a_grant_that_cannot_read_lends_nothing(world: World) -> None:
    svc = world.svc
    boss = _fresh()
    svc.admin.grant(world.admin, boss.principal_id, "admin", world.repo, "public")
    svc.admin.grant(world.admin, boss.principal_id, "ingestor", world.repo, "restricted")
    with pytest.raises(PermissionDenied, match="read there is public"):
        svc.admin.grant(boss, _fresh().principal_id, "reader", world.repo, "confidential")
    # an ingestor grant at restricted is within its own ingest clearance
    svc.admin.grant(boss, _fresh("service").principal_id, "ingestor", world.repo, "restricted")


def test_an_ingestor_only_caller_gets_not_found_for_baselines_like_missing_ones(
    world: World,
) -> None:
    svc = world.svc
    ingestor = _fresh("service")
    svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo, "restricted")
    world.canonical()
    baseline = svc.publishing.create_baseline(world.publisher, world.repo)["baseline_id"]
    missing = "bl_" + secrets.token_hex(12)
    answers = []
    for baseline_id in (baseline, missing):
        with pytest.raises(NotFound) as caught:
            svc.publishing.baseline_show(ingestor, baseline_id)
        answers.append(caught.value.message.replace(baseline_id, "X"))
    assert answers[0] == answers[1]
    with pytest.raises(NotFound):
        svc.publishing.baseline_diff(ingestor, baseline, baseline)
    with pytest.raises(NotFound):
        svc.publishing.promote(ingestor, baseline, world.repo)


def test_an_ingestor_only_caller_gets_not_found_for_element_history_and_versions(
    world: World,
) -> None:
    svc = world.svc
    ingestor = _fresh("service")
    svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo, "restricted")
    element_id, version_id = world.canonical()
    with pytest.raises(NotFound):
        svc.elements.get_element(ingestor, element_id, version_id)
    with pytest.raises(NotFound):
        svc.elements.element_history(ingestor, element_id)


def test_accepting_needs_curate_clearance_not_just_read_clearance(world: World) -> None:
    svc = world.svc
    svc.admin.grant(world.admin, world.curator.principal_id, "curator", world.repo, "restricted")
    element_id, v1 = world.canonical(classification="restricted")
    svc.admin.grant(world.admin, world.agent.principal_id, "agent", world.repo, "restricted")
    target = {"element_id": element_id, "target_version_id": v1}
    p = svc.curation.propose(world.agent, world.repo, body="y\n", summary="s", **target)
    mixed = _fresh()
    svc.admin.grant(world.admin, mixed.principal_id, "reader", world.repo, "restricted")
    svc.admin.grant(world.admin, mixed.principal_id, "curator", world.repo, "internal")
    with pytest.raises(PermissionDenied, match="may not accept"):
        svc.review.accept(mixed, p["proposal_id"])
    with pytest.raises(PermissionDenied, match="may not curate content classified restricted"):
        svc.elements.retire_element(mixed, element_id, "no")
    svc.review.accept(world.curator, p["proposal_id"])
