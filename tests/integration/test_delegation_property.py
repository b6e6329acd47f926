"""Delegation, property-tested (issue 28, item 1): whatever the principals, grants,
delegations, claimed roles and surface, a caller naming someone on behalf

- is refused (``PERMISSION_DENIED``) unless it holds a delegation for that principal;
- never reads or writes beyond the intersection of both principals' permissions, each capped
  by the grants of the roles claimed (item 3), and nothing in a repository its delegation does
  not cover;
- owns a proposal (reads, revises it as its proposer) only when it acts as its owner: as
  itself, or for the principal a delegation lets it act for;
- and every write it makes names both who acted and for whom, in the version and the audit
  event.

The model below is written from the issue and docs/security.md, not from ``domain.permissions``:
a role's actions are restated as plain strings.

Surfaces: the service in-process, REST (the real ASGI app through ``TestClient``, a bearer
token per principal and the ``X-Ameide-*`` headers) and the CLI (``CliRunner`` on the same
home, ``--as`` / ``--on-behalf-of``; the CLI claims no roles).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli.main import app as cli_app
from domain.errors import AmeideError
from runtime import App, build_app
from server.rest.app import create_app
from service.authz import Caller
from service.settings import Settings
from tests.conftest import ADMIN

EXAMPLES = int(os.environ.get("AMEIDE_PROPERTY_EXAMPLES", "80"))
LEVELS = ("public", "internal", "confidential", "restricted")
ROLE_ACTIONS = {
    "reader": {"read"},
    "agent": {"read", "propose"},
    "curator": {"read", "curate"},
    "auditor": {"read", "audit"},
    "ingestor": {"ingest"},
}
SCOPES = ("A", "B", "org", "*")
SURFACES = ("service", "rest", "cli")


@dataclass
class World:
    app: App
    org: str
    repos: dict[str, str]  # "A", "B" → repository key
    elements: dict[str, str]  # level → element id in A
    public_version: str
    rest: TestClient
    home: str

    def scope(self, name: str) -> str:
        return {"org": self.org, "*": "*"}.get(name) or self.repos[name]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("delegation") / "home"
    app = build_app(Settings(home=home), migrate=True)
    svc = app.service
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    org = f"acme-{secrets.token_hex(3)}/eng"
    repos = {"A": f"{org}/alpha", "B": f"{org}/beta"}
    for key in repos.values():
        svc.admin.create_repository(ADMIN, key)
    elements = {}
    for level in LEVELS:
        made = svc.elements.create_element(
            ADMIN, repos["A"], title=f"{level} page", body=f"# {level}\n\n{level} text\n",
            classification=level,
        )  # fmt: skip
        elements[level] = made["element"]["element_id"]
    public_version = svc.elements.get_element(ADMIN, elements["public"])["version"]["version_id"]
    with TestClient(create_app(svc, settings=app.settings, require_auth=True)) as rest:
        yield World(app, org, repos, elements, public_version, rest, str(home))
    app.close()


# -- the model ------------------------------------------------------------------------------
Grants = tuple[tuple[str, str, str], ...]  # (scope name, role, level)


def covers(scope: str, repo: str) -> bool:
    return scope in ("*", "org") or scope == repo


def own_levels(grants: Grants, repo: str, claimed: frozenset[str]) -> dict[str, int]:
    """Action → highest level rank, from the grants covering ``repo`` whose role allows it;
    with claimed roles, only the grants of those roles count."""
    held = {(scope, role): level for scope, role, level in grants}  # granting again replaces
    out: dict[str, int] = {}
    for (scope, role), level in held.items():
        if not covers(scope, repo) or (claimed and role not in claimed):
            continue
        for action in ROLE_ACTIONS[role]:
            out[action] = max(out.get(action, -1), LEVELS.index(level))
    return out


@dataclass(frozen=True)
class Case:
    actor_kind: str
    actor_grants: Grants
    subject_grants: Grants
    delegation: tuple[str, str, str] | None  # (pattern, scope name, made by) or None
    names_subject: bool
    claimed: frozenset[str]
    surface: str

    def expected(self, repo: str) -> dict[str, int] | None:
        """The effective levels in repository ``repo`` ("A" or "B"; None: refused for want of
        a delegation)."""
        mine = own_levels(self.actor_grants, repo, self.claimed)
        if not self.names_subject:
            return mine
        if self.delegation is None or self.delegation[0] == "other":
            return None
        if not covers(self.delegation[1], repo):
            return {}
        theirs = own_levels((*self.subject_grants, ("A", "agent", "public")), repo, frozenset())
        return {a: min(r, theirs[a]) for a, r in mine.items() if a in theirs}


grants_st = st.lists(
    st.tuples(
        st.sampled_from(SCOPES), st.sampled_from(sorted(ROLE_ACTIONS)), st.sampled_from(LEVELS)
    ),
    max_size=3,
).map(tuple)
delegation_st = st.one_of(
    st.none(),
    st.tuples(
        st.sampled_from(("exact", "kind", "any", "other")),
        st.sampled_from(SCOPES),
        st.sampled_from(("subject", "admin")),
    ).filter(lambda d: d[2] == "admin" or d[0] == "exact"),
)
case_st = st.builds(
    Case,
    actor_kind=st.sampled_from(("agent", "user", "service")),
    actor_grants=grants_st,
    subject_grants=grants_st,
    delegation=delegation_st,
    names_subject=st.booleans(),
    claimed=st.sets(st.sampled_from(sorted(ROLE_ACTIONS)), max_size=2).map(frozenset),
    surface=st.sampled_from(SURFACES),
)


# -- the surfaces ------------------------------------------------------------------------------
class Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


def call(w: World, surface: str, who: Caller, op: str, target: str, body: str = "") -> Any:
    """Run ``op`` (get_element, proposal_show, revise) as ``who`` on ``surface``."""
    if surface == "service":
        svc = w.app.service
        try:
            if op == "get_element":
                return svc.elements.get_element(who, target)
            if op == "proposal_show":
                return svc.curation.proposal_show(who, target)
            return svc.curation.revise(who, target, body)
        except AmeideError as exc:
            raise Refused(exc.code, exc.message) from exc
    if surface == "rest":
        token = w.app.service.tokens.create(ADMIN, who.principal_id)["token"]
        headers = {"Authorization": f"Bearer {token}", "X-Ameide-Purpose": "probe"}
        if who.on_behalf_of:
            headers["X-Ameide-On-Behalf-Of"] = who.on_behalf_of
        if who.roles:
            headers["X-Ameide-Roles"] = ",".join(who.roles)
        if op == "get_element":
            response = w.rest.get(f"/v1/elements/{target}", headers=headers)
        elif op == "proposal_show":
            response = w.rest.get(f"/v1/proposals/{target}", headers=headers)
        else:
            response = w.rest.post(
                f"/v1/proposals/{target}/revise", headers=headers, json={"body": body}
            )
        if response.status_code >= 300:
            error = response.json()["error"]
            raise Refused(error["code"], error["message"])
        return response.json()
    argv = ["--home", w.home, "--as", who.principal_id, "--purpose", "probe"]
    if who.on_behalf_of:
        argv += ["--on-behalf-of", who.on_behalf_of]
    if op == "get_element":
        argv += ["element", "show", target]
    elif op == "proposal_show":
        argv += ["proposal", "show", target]
    else:
        argv += ["proposal", "revise", target, "--body-file", "-"]
    result = CliRunner().invoke(cli_app, [*argv, "--json"], input=body.encode())
    if result.exit_code != 0:
        error = json.loads(result.stdout)["error"]
        raise Refused(error["code"], error["message"])
    return json.loads(result.stdout)


def outcome(w: World, case: Case, who: Caller, op: str, target: str, body: str = "") -> Any:
    try:
        return call(w, case.surface, who, op, target, body)
    except Refused as exc:
        return exc


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=case_st)
def test_on_behalf_of_never_reaches_beyond_the_delegation_and_the_intersection(
    world: World, case: Case
) -> None:
    if case.surface == "cli" and case.claimed:
        case = Case(**{**case.__dict__, "claimed": frozenset()})  # the CLI claims no roles
    w, svc = world, world.app.service
    tag = secrets.token_hex(4)
    actor = f"{case.actor_kind}:x-{tag}"
    subject = f"user:y-{tag}"
    other = f"agent:z-{tag}"
    for principal, grants in ((actor, case.actor_grants), (subject, case.subject_grants)):
        for scope, role, level in grants:
            svc.admin.grant(ADMIN, principal, role, w.scope(scope), clearance=level)
    # The subject and a third agent each have a proposal on the public page of A.
    for principal in (subject, other):
        svc.admin.grant(ADMIN, principal, "agent", w.repos["A"], clearance="public")
    pin = {"element_id": w.elements["public"], "target_version_id": w.public_version}
    mine = svc.curation.propose(
        Caller(subject), w.repos["A"], body="subject's\n", summary="s", **pin
    )
    theirs = svc.curation.propose(Caller(other), w.repos["A"], body="other's\n", summary="s", **pin)
    if case.delegation is not None:
        pattern, scope, by = case.delegation
        named = {"exact": subject, "kind": "user:*", "any": "*", "other": other}[pattern]
        giver = Caller(subject) if by == "subject" else ADMIN
        svc.admin.grant(giver, actor, "delegate", w.scope(scope), on_behalf_of=named)
    who = Caller(
        actor,
        on_behalf_of=subject if case.names_subject else None,
        roles=tuple(sorted(case.claimed)),
        purpose="probe",
    )
    levels_a = case.expected("A")
    context = json.dumps({**case.__dict__, "claimed": sorted(case.claimed)}, default=str)

    # 1. element reads: exactly the levels within the effective read clearance
    for level, element_id in w.elements.items():
        got = outcome(w, case, who, "get_element", element_id)
        if levels_a is None:
            assert isinstance(got, Refused), context
            assert got.code == "PERMISSION_DENIED", context
            assert "delegation" in str(got), context
            continue
        may = levels_a.get("read", -1) >= LEVELS.index(level)
        assert (not isinstance(got, Refused)) == may, (level, context)
        if isinstance(got, Refused):
            assert got.code == "NOT_FOUND", (level, got, context)

    # 2. proposals: curators and auditors read all; a proposer only what it owns
    acting_as = subject if case.names_subject else actor
    for proposal, owner in ((mine["proposal_id"], subject), (theirs["proposal_id"], other)):
        got = outcome(w, case, who, "proposal_show", proposal)
        if levels_a is None:
            assert isinstance(got, Refused), context
            assert got.code == "PERMISSION_DENIED", context
            continue
        reads = levels_a.get("read", -1) >= 0
        oversees = reads and ("curate" in levels_a or "audit" in levels_a)
        owns = reads and "propose" in levels_a and owner == acting_as
        assert (not isinstance(got, Refused)) == (oversees or owns), (proposal, got, context)
        if isinstance(got, Refused):
            assert got.code == "NOT_FOUND", context

        # 3. revising: curators any, proposers their own; the record names both parties
        body = f"revised by {actor} {secrets.token_hex(2)}\n"
        got = outcome(w, case, who, "revise", proposal, body)
        may_revise = (reads and "curate" in levels_a) or owns
        assert (not isinstance(got, Refused)) == may_revise, (proposal, got, context)
        current = svc.curation.proposal_show(ADMIN, proposal)
        if isinstance(got, Refused):
            assert current["body"] != body, context
            continue
        assert current["body"] == body, context
        version = svc.reading.get_version(ADMIN, current["proposal_version_id"])["version"]
        named = subject if case.names_subject else None
        assert version["provenance"]["actor_id"] == actor, context
        assert version["provenance"]["on_behalf_of"] == named, context
        events = [
            e for e in svc.history.history(ADMIN, w.repos["A"], actor=actor)
            if e["proposal_id"] == proposal and e["event_type"] == "proposal.revised"
        ]  # fmt: skip
        assert events, context
        assert all(e["on_behalf_of"] == named for e in events), context
