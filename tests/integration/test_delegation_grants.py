"""Delegation grants, claimed roles and revocation (issue 28, items 1, 3 and 11), on the
service over a real SQLite file."""

from __future__ import annotations

import secrets
from dataclasses import replace

import pytest

from domain.errors import AlreadyExists, InvalidArgument, NotFound, PermissionDenied
from service.authz import Caller
from tests.conftest import World


def _agent(world: World, name: str) -> Caller:
    who = Caller(f"agent:{name}-{secrets.token_hex(3)}", purpose="test")
    world.svc.admin.grant(world.admin, who.principal_id, "agent", world.repo)
    return who


def _gateway_for_users(world: World) -> tuple[Caller, str, str]:
    """A gateway (an agent) an admin lets act for every user, and two users who are agents."""
    svc = world.svc
    gateway = Caller(f"service:gw-{secrets.token_hex(3)}", purpose="test")
    svc.admin.grant(world.admin, gateway.principal_id, "agent", world.repo)
    svc.admin.grant(
        world.admin, gateway.principal_id, "delegate", world.repo, on_behalf_of="user:*"
    )
    alice, bob = (f"user:{n}-{secrets.token_hex(3)}" for n in ("alice", "bob"))
    for user in (alice, bob):
        svc.admin.grant(world.admin, user, "agent", world.repo)
    return gateway, alice, bob


def test_a_delegation_is_given_by_the_subject_or_an_admin_audited_listed_and_revocable(
    world: World,
) -> None:
    svc = world.svc
    alice = Caller(f"user:alice-{secrets.token_hex(3)}", purpose="test")
    svc.admin.grant(world.admin, alice.principal_id, "agent", world.repo)
    coder, other = _agent(world, "coder"), _agent(world, "other")
    # a third party may not let anyone act for alice
    with pytest.raises(PermissionDenied, match="only an admin"):
        svc.admin.grant(
            other, coder.principal_id, "delegate", world.repo, on_behalf_of=alice.principal_id
        )
    with pytest.raises(InvalidArgument, match="--for"):
        svc.admin.grant(alice, coder.principal_id, "delegate", world.repo)
    with pytest.raises(InvalidArgument, match="only with the delegate role"):
        svc.admin.grant(world.admin, coder.principal_id, "reader", world.repo,
                  on_behalf_of=alice.principal_id)  # fmt: skip
    made = svc.admin.grant(alice, coder.principal_id, "delegate", world.repo,
                     on_behalf_of=alice.principal_id)  # fmt: skip
    assert (made["role"], made["on_behalf_of"], made["clearance"]) == (
        "delegate", alice.principal_id, None,
    )  # fmt: skip
    listed = [g for g in svc.admin.list_grants(world.admin, world.repo) if g["role"] == "delegate"]
    assert [(g["principal_id"], g["on_behalf_of"], g["created_by"]) for g in listed] == [
        (coder.principal_id, alice.principal_id, alice.principal_id)
    ]
    mine = svc.discovery.whoami(coder)["delegations"]
    assert mine == [
        {"on_behalf_of": alice.principal_id, "scope": world.repo, "created_by": alice.principal_id}
    ]
    events = [e for e in svc.history.history(world.auditor, world.repo) if
        e["event_type"].startswith( "delegation.")]  # fmt: skip
    assert [(e["event_type"], e["actor"], e["payload"]["on_behalf_of"]) for e in events] == [
        ("delegation.added", alice.principal_id, alice.principal_id)
    ]
    # acting for alice works now, and stops when the holder gives it up
    for_alice = replace(coder, on_behalf_of=alice.principal_id)
    assert svc.discovery.whoami(for_alice)["on_behalf_of"] == alice.principal_id
    svc.admin.revoke(
        coder, coder.principal_id, "delegate", world.repo, on_behalf_of=alice.principal_id
    )
    with pytest.raises(PermissionDenied, match="no delegation grant"):
        svc.discovery.list_repositories(for_alice)
    with pytest.raises(NotFound):
        svc.admin.revoke(world.admin, coder.principal_id, "delegate", world.repo,
                   on_behalf_of=alice.principal_id)  # fmt: skip


def test_a_delegation_covers_only_its_scope(world: World) -> None:
    svc = world.svc
    other_repo = world.repo.rsplit("/", 1)[0] + "/elsewhere"
    svc.admin.create_repository(world.admin, other_repo)
    coder = _agent(world, "coder")
    svc.admin.grant(world.admin, coder.principal_id, "delegate", other_repo,
              on_behalf_of=world.reader.principal_id)  # fmt: skip
    el, _ = world.canonical()
    as_reader = replace(coder, on_behalf_of=world.reader.principal_id)
    with pytest.raises(NotFound):  # both may read here, but the delegation is for elsewhere
        svc.elements.get_element(as_reader, el)


def test_a_gateway_acting_for_every_user_owns_each_users_proposals_not_the_others(
    world: World,
) -> None:
    svc = world.svc
    gateway, alice, bob = _gateway_for_users(world)
    el, v1 = world.canonical()
    for_alice = replace(gateway, on_behalf_of=alice)
    for_bob = replace(gateway, on_behalf_of=bob)
    p = svc.curation.propose(for_alice, world.repo, body="alice's\n", summary="s", element_id=el,
                    target_version_id=v1)  # fmt: skip
    assert p["proposed_by"]["actor_id"] == gateway.principal_id
    assert p["proposed_by"]["on_behalf_of"] == alice
    # alice owns it (directly too); bob's session through the same gateway does not
    assert (
        svc.curation.proposal_show(Caller(alice), p["proposal_id"])["proposal_id"]
        == p["proposal_id"]
    )
    with pytest.raises(NotFound):
        svc.curation.proposal_show(for_bob, p["proposal_id"])
    with pytest.raises(NotFound):
        svc.curation.proposal_show(gateway, p["proposal_id"])  # acting for nobody, it is alice's
    # the gateway may not act for an agent: its delegation is for users
    with pytest.raises(PermissionDenied, match="no delegation grant"):
        svc.curation.proposal_show(
            replace(gateway, on_behalf_of=world.agent.principal_id), p["proposal_id"]
        )
    assert [q["proposal_id"] for q in svc.curation.proposal_list(Caller(alice), world.repo)] == [
        p["proposal_id"]
    ]
    svc.review.withdraw(Caller(alice), p["proposal_id"])


def test_body_roles_narrow_the_claimed_roles_never_replace_them(world: World) -> None:
    svc = world.svc
    dual = Caller(f"user:dual-{secrets.token_hex(3)}", purpose="test")
    svc.admin.grant(world.admin, dual.principal_id, "reader", world.repo, "public")
    svc.admin.grant(world.admin, dual.principal_id, "auditor", world.repo, "internal")
    world.canonical("Plan", "# Plan\n\nzebra internal plan\n", classification="internal")
    world.canonical("Notes", "# Notes\n\nzebra open notes\n", classification="public")
    tenant, org, repo = world.repo.split("/")
    request = {
        "scope": {"tenant_id": tenant, "organization_id": org, "repository_id": repo},
        "selector": {"kind": "head"},
        "query": "zebra",
    }

    def titles(caller: Caller, roles: list[str] | None = None) -> set[str]:
        body = {**request, "principal": {"roles": roles}} if roles else request
        return {i["title"] for i in svc.reading.read_context(caller, body)["items"]}

    assert titles(dual) == {"Plan", "Notes"}
    as_reader = replace(dual, roles=("reader",))
    assert titles(as_reader) == {"Notes"}
    assert titles(dual, ["reader"]) == {"Notes"}
    # a body cannot claim back what the header left out
    assert titles(as_reader, ["reader", "auditor"]) == {"Notes"}
    with pytest.raises(InvalidArgument, match="share no role"):
        titles(as_reader, ["auditor"])


def test_revoking_obeys_the_clearance_rule_of_granting(world: World) -> None:
    svc = world.svc
    internal_admin = Caller(f"user:adm-{secrets.token_hex(3)}", purpose="test")
    svc.admin.grant(world.admin, internal_admin.principal_id, "admin", world.repo, "internal")
    target = f"user:t-{secrets.token_hex(3)}"
    svc.admin.grant(world.admin, target, "reader", world.repo, "restricted")
    with pytest.raises(PermissionDenied, match="restricted"):
        svc.admin.revoke(internal_admin, target, "reader", world.repo)
    assert any(g["principal_id"] == target for g in svc.admin.list_grants(world.admin, world.repo))
    svc.admin.grant(world.admin, target, "agent", world.repo, "internal")
    svc.admin.revoke(internal_admin, target, "agent", world.repo)  # one it could have made
    svc.admin.revoke(world.admin, target, "reader", world.repo)


def test_without_a_delegation_existing_and_missing_objects_get_the_same_refusal(
    world: World,
) -> None:
    svc = world.svc
    el, v1 = world.canonical()
    p = svc.curation.propose(world.agent, world.repo, body="x\n", summary="s", element_id=el,
                    target_version_id=v1)["proposal_id"]  # fmt: skip
    posing = replace(_agent(world, "a2"), on_behalf_of=world.agent.principal_id)
    pairs = [
        (svc.elements.get_element, el, "el_" + "0" * 24),
        (svc.reading.get_version, v1, "ver_" + "0" * 24),
        (svc.curation.proposal_show, p, "prop_" + "0" * 24),
        (svc.review.withdraw, p, "prop_" + "0" * 24),
    ]
    for call, real, missing in pairs:
        answers = []
        for target in (real, missing):
            with pytest.raises(PermissionDenied) as err:
                call(posing, target)
            answers.append(err.value.message)
        assert answers[0] == answers[1], call
    assert svc.curation.proposal_show(world.curator, p)["status"] == "OPEN"


def test_a_gateway_replaying_one_users_request_id_for_another_gets_nothing_of_the_first(
    world: World,
) -> None:
    svc = world.svc
    gateway, alice, bob = _gateway_for_users(world)
    el, v1 = world.canonical()
    same = {"body": "x\n", "summary": "s", "element_id": el, "target_version_id": v1,
            "client_request_id": "req-1"}  # fmt: skip
    first = svc.curation.propose(replace(gateway, on_behalf_of=alice), world.repo, **same)
    again = svc.curation.propose(replace(gateway, on_behalf_of=alice), world.repo, **same)
    assert (again["proposal_id"], again["replay"]) == (first["proposal_id"], True)
    with pytest.raises(AlreadyExists):
        svc.curation.propose(replace(gateway, on_behalf_of=bob), world.repo, **same)
