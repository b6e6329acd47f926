"""What a proposal view says once the proposal is decided."""

from __future__ import annotations

from tests.conftest import World


def test_an_accepted_proposal_is_not_reported_stale(world: World):
    element_id, v1 = world.canonical()
    p = world.svc.curation.propose(
        world.agent,
        world.repo,
        element_id=element_id,
        target_version_id=v1,
        body="# Testing SOP\n\nRun it twice.\n",
        summary="twice",
    )
    accepted = world.svc.review.accept(world.curator, p["proposal_id"])
    assert accepted["stale"] is False
    assert world.svc.curation.proposal_show(world.curator, p["proposal_id"])["stale"] is False


def test_accepting_a_create_proposal_names_the_new_element(world: World):
    p = world.svc.curation.propose(
        world.agent,
        world.repo,
        change_kind="CREATE",
        title="Release SOP",
        body="# Release SOP\n\nTag, build, ship.\n",
        summary="new SOP",
    )
    accepted = world.svc.review.accept(world.curator, p["proposal_id"])
    element_id = accepted["target_element_id"]
    assert element_id is not None
    shown = world.svc.elements.get_element(world.reader, element_id)
    assert shown["version"]["version_id"] == accepted["result_version_id"]
    assert world.svc.curation.proposal_show(world.curator, p["proposal_id"])[
        "target_element_id"
    ] == (element_id)
