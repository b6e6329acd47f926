"""The authorization gate against an independently written oracle of docs/product.md §3.

The oracle below restates the role table from the specification (plain strings, not the
``domain.permissions`` table) and the rules: a grant covers its scope and everything below it;
``on_behalf_of`` yields the intersection of both principals; claimed roles only ever narrow,
and select which grants count: their actions and their clearance only.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.errors import InvalidArgument
from domain.permissions import Action
from domain.values import Classification
from service.authz import Authorizer, Caller, Grant, Permission

SPEC_ROLES: dict[str, set[str]] = {
    "reader": {"read"},
    "agent": {"read", "propose"},
    "curator": {"read", "curate"},
    "publisher": {"read", "curate", "publish"},
    "ingestor": {"ingest"},
    "auditor": {"read", "audit"},
    "admin": {"read", "propose", "curate", "publish", "ingest", "audit", "admin"},
}
LEVELS = ["public", "internal", "confidential", "restricted"]
SCOPES = [
    "*",
    "acme",
    "acme/eng",
    "acme/eng/platform",
    "acme/eng/other",
    "acme/ops",
    "acme-x",
    "acme-x/eng/platform",
    "acme/engine",
]
REPOS = ["acme/eng/platform", "acme-x/eng/platform", "acme/engine/platform", "zeta/eng/platform"]
ALICE, BOB = "user:alice", "agent:bob"


@dataclass(frozen=True)
class Expected:
    actions: frozenset[str]
    clearances: frozenset[tuple[str, str]]  # (action, highest level that action may touch)


def covers(scope: str, repo: str) -> bool:
    """A scope covers a repository when its segments are a prefix of the repository's."""
    if scope == "*":
        return True
    parts = scope.split("/")
    return repo.split("/")[: len(parts)] == parts


def oracle_single(
    grants: list[Grant], principal: str, repo: str, claimed: set[str]
) -> dict[str, int]:
    """Action → clearance rank, each action's clearance taken only from the grants whose role
    allows that action (a grant that cannot read lends no read clearance)."""
    mine = [g for g in grants if g.principal_id == principal and covers(g.scope_key, repo)]
    if claimed:
        # Claimed roles select the grants that count: a claimed "reader" never borrows the
        # clearance (or actions) of the same principal's auditor grant.
        mine = [g for g in mine if g.role in claimed]
    out: dict[str, int] = {}
    for g in mine:
        for action in SPEC_ROLES[g.role]:
            out[action] = max(out.get(action, -1), LEVELS.index(g.clearance))
    return out


def oracle(grants: list[Grant], repo: str, claimed: set[str], on_behalf_of: str | None) -> Expected:
    levels = oracle_single(grants, ALICE, repo, claimed)
    if on_behalf_of is not None:
        other = oracle_single(grants, on_behalf_of, repo, set())
        levels = {a: min(r, other[a]) for a, r in levels.items() if a in other}
    return Expected(frozenset(levels), frozenset((a, LEVELS[r]) for a, r in levels.items()))


def observed(perm: Permission) -> Expected:
    return Expected(
        frozenset(a.value for a in perm.actions),
        frozenset((a.value, c.value) for a, c in perm.clearances.items()),
    )


grant_st = st.builds(
    Grant,
    principal_id=st.sampled_from([ALICE, BOB]),
    role=st.sampled_from(sorted(SPEC_ROLES)),
    scope_key=st.sampled_from(SCOPES),
    clearance=st.sampled_from(LEVELS),
)
grants_st = st.lists(grant_st, max_size=8)
claims_st = st.sets(st.sampled_from(sorted(SPEC_ROLES)), max_size=3)
PROPERTY = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(
    grants=grants_st,
    repo=st.sampled_from(REPOS),
    claimed=claims_st,
    behalf=st.sampled_from([None, BOB]),
)
def test_the_effective_permission_matches_the_role_table_oracle_for_any_grants(
    grants: list[Grant], repo: str, claimed: set[str], behalf: str | None
):
    caller = Caller(ALICE, on_behalf_of=behalf, roles=tuple(sorted(claimed)))
    perm = Authorizer().permission(grants, caller, repo)
    assert observed(perm) == oracle(grants, repo, claimed, behalf)


@PROPERTY
@given(grants=grants_st, repo=st.sampled_from(REPOS), claimed=claims_st)
def test_acting_on_behalf_of_someone_yields_the_intersection_never_the_union(
    grants: list[Grant], repo: str, claimed: set[str]
):
    authz = Authorizer()
    roles = tuple(sorted(claimed))
    both = authz.permission(grants, Caller(ALICE, on_behalf_of=BOB, roles=roles), repo)
    alice = authz.permission(grants, Caller(ALICE, roles=roles), repo)
    bob = authz.permission(grants, Caller(BOB), repo)
    assert both.actions == alice.actions & bob.actions
    for action in both.actions:
        mine, theirs = alice.clearances[action], bob.clearances[action]
        assert both.clearances[action].rank == min(mine.rank, theirs.rank)


@PROPERTY
@given(grants=grants_st, repo=st.sampled_from(REPOS), claimed=claims_st)
def test_claimed_roles_never_widen_what_the_grants_allow(
    grants: list[Grant], repo: str, claimed: set[str]
):
    authz = Authorizer()
    plain = authz.permission(grants, Caller(ALICE), repo)
    narrowed = authz.permission(grants, Caller(ALICE, roles=tuple(sorted(claimed))), repo)
    assert narrowed.actions <= plain.actions
    for action in narrowed.actions:
        assert narrowed.clearances[action].rank <= plain.clearances[action].rank
    granted = {g.role for g in grants if g.principal_id == ALICE and covers(g.scope_key, repo)}
    if not granted:
        # Claiming roles one was never granted adds nothing.
        assert not narrowed.any


def test_an_organization_grant_covers_its_repositories_but_not_a_lookalike_organization():
    grants = [Grant(ALICE, "curator", "acme/eng", "confidential")]
    authz = Authorizer()
    inside = authz.permission(grants, Caller(ALICE), "acme/eng/platform")
    lookalike = authz.permission(grants, Caller(ALICE), "acme/engine/platform")
    assert {a.value for a in inside.actions} == {"read", "curate"}
    assert inside.clearance is Classification.CONFIDENTIAL
    assert not lookalike.any


def test_a_grant_that_cannot_read_never_raises_read_clearance():
    grants = [
        Grant(ALICE, "reader", "acme/eng/platform", "public"),
        Grant(ALICE, "ingestor", "acme/eng/platform", "restricted"),
    ]
    perm = Authorizer().permission(grants, Caller(ALICE), "acme/eng/platform")
    assert perm.clearance is Classification.PUBLIC
    assert not perm.may_see(Classification.INTERNAL)
    assert perm.may_act_on(Action.INGEST, Classification.RESTRICTED)
    assert not perm.may_act_on(Action.CURATE, Classification.PUBLIC)


def test_an_ingestor_only_grant_reads_nothing():
    grants = [Grant(ALICE, "ingestor", "acme", "restricted")]
    perm = Authorizer().permission(grants, Caller(ALICE), "acme/eng/platform")
    assert perm.any
    assert not perm.can(Action.READ)
    assert not perm.may_see(Classification.PUBLIC)


def test_a_principal_without_grants_has_no_permission_and_sees_nothing():
    perm = Authorizer().permission([], Caller(ALICE), "acme/eng/platform")
    assert not perm.any
    assert perm.actions == frozenset()


def test_claiming_an_unknown_role_is_an_invalid_argument():
    with pytest.raises(InvalidArgument, match="unknown role 'wizard'"):
        Authorizer().permission([], Caller(ALICE, roles=("wizard",)), "acme/eng/platform")


@pytest.fixture
def frequent_thread_switches() -> Iterator[None]:
    """Switch threads every 10 µs so interleavings that are rare in production happen here."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


@pytest.mark.usefixtures("frequent_thread_switches")
def test_authorizing_from_many_threads_at_once_never_fails():
    grants = [Grant(ALICE, "curator", "acme", "internal"), Grant(BOB, "agent", "acme", "public")]
    caller = Caller(ALICE, on_behalf_of=BOB)
    authz = Authorizer()  # shared, as one MemoryService serves every request thread
    reference = Authorizer().permission(grants, caller, "acme/eng/platform")
    start = threading.Barrier(8)
    failures: list[BaseException] = []

    def work(n: int) -> None:
        start.wait(timeout=30)
        try:
            for i in range(40):  # distinct repositories: every question reaches Casbin
                perm = authz.permission(grants, caller, f"acme/eng/t{n}-r{i}")
                assert (perm.actions, perm.clearance) == (reference.actions, reference.clearance)
        except Exception as exc:  # what a request thread would surface as a 500
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert failures == []


def test_a_revoked_or_changed_grant_is_never_answered_from_memory():
    authz = Authorizer()
    granted = [Grant(ALICE, "curator", "acme", "confidential")]
    assert authz.permission(granted, Caller(ALICE), "acme/eng/platform").any
    assert not authz.permission([], Caller(ALICE), "acme/eng/platform").any
    lowered = [Grant(ALICE, "curator", "acme", "public")]
    perm = authz.permission(lowered, Caller(ALICE), "acme/eng/platform")
    assert perm.clearance is Classification.PUBLIC
