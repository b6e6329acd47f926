"""The authorization gate at service level: invisible looks like missing; roles, on-behalf-of,
claimed roles and clearance are enforced the same way for every operation."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pytest

from domain.errors import NotFound, PermissionDenied
from domain.values import new_id
from runtime import App, build_app
from service.app import MemoryService
from service.authz import Caller
from service.settings import Settings
from tests.conftest import World, make_world


@dataclass(frozen=True)
class Ids:
    """The ids an operation is called with: all real, or all unknown."""

    repo: str
    el: str
    el2: str
    ver: str
    prop: str
    bl: str
    bl2: str
    rel: str
    tok: str

    def placeholders(self, text: str) -> str:
        for name, value in vars(self).items():
            text = text.replace(value, f"<{name}>")
        return text


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, Ids]]:
    """One repository with one of everything, shared by the (read-only) checks below."""
    app = build_app(Settings(home=tmp_path_factory.mktemp("authz")), migrate=True)
    w = make_world(app)
    svc = w.svc
    el, v1 = w.canonical()
    el2, _ = w.canonical(title="Other", body="other\n")
    rel = svc.elements.add_relationship(
        w.curator, el, el2, kind="SEMANTIC", type_key="ameide:related"
    )
    prop = svc.curation.propose(
        w.agent, w.repo, body="new\n", summary="s", element_id=el, target_version_id=v1
    )
    bl = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    bl2 = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    svc.publishing.promote(w.publisher, bl)
    tok = svc.tokens.create(w.curator, w.curator.principal_id)["token_id"]
    real = Ids(w.repo, el, el2, v1, prop["proposal_id"], bl, bl2, rel["relationship_id"], tok)
    yield w, real
    app.close()


def missing_ids(real: Ids) -> Ids:
    return Ids(
        real.repo.replace("acme-", "gone-"),
        new_id("el"),
        new_id("el"),
        new_id("ver"),
        new_id("prop"),
        new_id("bl"),
        new_id("bl"),
        new_id("rel"),
        new_id("tok"),
    )


NOW = datetime(2030, 1, 1, tzinfo=UTC)
Op = Callable[[MemoryService, Caller, Ids], Any]
OPERATIONS: dict[str, Op] = {
    # reads
    "get_element": lambda s, c, i: s.elements.get_element(c, i.el),
    "get_element@version": lambda s, c, i: s.elements.get_element(c, i.el, version_id=i.ver),
    "get_element@as_of": lambda s, c, i: s.elements.get_element(c, i.el, as_of=NOW),
    "element_history": lambda s, c, i: s.elements.element_history(c, i.el),
    "list_relationships": lambda s, c, i: s.elements.list_relationships(c, i.el),
    "proposal_show": lambda s, c, i: s.curation.proposal_show(c, i.prop),
    "proposal_list": lambda s, c, i: s.curation.proposal_list(c, i.repo),
    "baseline_show": lambda s, c, i: s.publishing.baseline_show(c, i.bl),
    "list_baselines": lambda s, c, i: s.publishing.list_baselines(c, i.repo),
    "baseline_diff": lambda s, c, i: s.publishing.baseline_diff(c, i.bl, i.bl2),
    "published": lambda s, c, i: s.publishing.published(c, i.repo),
    "published@as_of": lambda s, c, i: s.publishing.published(c, i.repo, as_of=NOW),
    "history": lambda s, c, i: s.history.history(c, i.repo),
    "verify_audit": lambda s, c, i: s.history.verify_audit(c, i.repo),
    "access_log": lambda s, c, i: s.history.access_log(c, i.repo),
    "list_grants": lambda s, c, i: s.admin.list_grants(c, i.repo),
    # writes
    "create_element": lambda s, c, i: s.elements.create_element(c, i.repo, title="t", body="b\n"),
    "retire_element": lambda s, c, i: s.elements.retire_element(c, i.el, "r"),
    "add_relationship": lambda s, c, i: s.elements.add_relationship(
        c, i.el, i.el2, kind="SEMANTIC", type_key="ameide:related"
    ),
    "retire_relationship": lambda s, c, i: s.elements.retire_relationship(c, i.rel),
    "erase_version": lambda s, c, i: s.erasure.erase_version(c, i.ver, "gdpr"),
    "propose": lambda s, c, i: s.curation.propose(
        c, i.repo, body="x\n", summary="s", element_id=i.el, target_version_id=i.ver
    ),
    "propose_create": lambda s, c, i: s.curation.propose(
        c, i.repo, body="x\n", summary="s", title="t", change_kind="CREATE"
    ),
    "revise": lambda s, c, i: s.curation.revise(c, i.prop, "y\n"),
    "accept": lambda s, c, i: s.review.accept(c, i.prop),
    "reject": lambda s, c, i: s.review.reject(c, i.prop, "no"),
    "withdraw": lambda s, c, i: s.review.withdraw(c, i.prop),
    "rebase": lambda s, c, i: s.review.rebase(c, i.prop),
    "create_baseline": lambda s, c, i: s.publishing.create_baseline(c, i.repo),
    "promote": lambda s, c, i: s.publishing.promote(c, i.bl2),
    "rollback": lambda s, c, i: s.publishing.rollback(c, i.repo),
    "set_legal_hold": lambda s, c, i: s.admin.set_legal_hold(c, i.repo, True),
    "grant": lambda s, c, i: s.admin.grant(c, "user:someone", "reader", i.repo),
    "revoke": lambda s, c, i: s.admin.revoke(c, "user:someone", "reader", i.repo),
    "revoke_token": lambda s, c, i: s.tokens.revoke(c, i.tok),
}


def outcome(op: Op, svc: MemoryService, caller: Caller, ids: Ids) -> tuple[str, str, str]:
    with pytest.raises(NotFound) as err:
        op(svc, caller, ids)
    e = err.value
    return e.code, ids.placeholders(e.message), ids.placeholders(repr(sorted(e.details.items())))


@pytest.mark.parametrize("who", ["stranger", "member of another repository"])
@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_an_unauthorized_principal_gets_the_same_not_found_as_for_a_missing_id(
    scene: tuple[World, Ids], name: str, who: str
):
    w, real = scene
    caller = w.stranger
    if who != "stranger":
        other = make_world(w.app)  # a curator + publisher + admin elsewhere, nothing here
        caller = other.curator
        w.svc.admin.grant(w.admin, caller.principal_id, "publisher", other.repo)
    op = OPERATIONS[name]
    hidden = outcome(op, w.svc, caller, real)
    missing = outcome(op, w.svc, w.admin, missing_ids(real))  # the global admin sees everything
    assert hidden == missing
    assert hidden[0] == "NOT_FOUND"


def test_creating_a_repository_does_not_reveal_whether_it_exists(scene: tuple[World, Ids]):
    w, real = scene
    errors = []
    for repo in (real.repo, missing_ids(real).repo):
        with pytest.raises(PermissionDenied) as err:
            w.svc.admin.create_repository(w.stranger, repo)
        errors.append(re.sub(r"acme-\w+|gone-\w+", "<tenant>", err.value.message))
    assert errors[0] == errors[1]


@pytest.fixture
def fresh(sqlite_app: App) -> World:
    return make_world(sqlite_app)


def test_an_agent_cannot_accept_reject_or_promote(fresh: World):
    w, svc = fresh, fresh.svc
    el, v1 = w.canonical()
    p = svc.curation.propose(
        w.agent, w.repo, body="x\n", summary="s", element_id=el, target_version_id=v1
    )
    with pytest.raises(PermissionDenied, match="may not accept"):
        svc.review.accept(w.agent, p["proposal_id"])
    with pytest.raises(PermissionDenied, match="may not reject"):
        svc.review.reject(w.agent, p["proposal_id"], "mine")
    with pytest.raises(PermissionDenied, match="may not publish"):
        svc.publishing.create_baseline(w.agent, w.repo)
    bl = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    with pytest.raises(PermissionDenied, match="may not publish") as err:
        svc.publishing.promote(w.agent, bl)
    assert err.value.code == "PERMISSION_DENIED"
    with pytest.raises(PermissionDenied, match="may not curate"):
        svc.elements.create_element(w.agent, w.repo, title="t", body="b\n")
    assert svc.curation.proposal_show(w.curator, p["proposal_id"])["status"] == "OPEN"
    assert svc.publishing.published(w.reader, w.repo)["baseline_id"] is None


def test_a_reader_cannot_propose_and_a_curator_cannot_promote(fresh: World):
    w, svc = fresh, fresh.svc
    el, v1 = w.canonical()
    with pytest.raises(PermissionDenied, match="may not propose"):
        svc.curation.propose(
            w.reader, w.repo, body="x\n", summary="s", element_id=el, target_version_id=v1
        )
    bl = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    with pytest.raises(PermissionDenied, match="may not publish"):
        svc.publishing.promote(w.curator, bl)
    assert svc.curation.proposal_list(w.curator, w.repo) == []


def test_acting_on_behalf_of_a_reader_cannot_propose_even_as_an_agent(fresh: World):
    w, svc = fresh, fresh.svc
    el, v1 = w.canonical()
    as_reader = replace(w.agent, on_behalf_of=w.reader.principal_id)
    svc.admin.grant(
        w.admin, w.agent.principal_id, "delegate", w.repo, on_behalf_of=w.reader.principal_id
    )
    with pytest.raises(PermissionDenied, match=f"on behalf of {w.reader.principal_id}"):
        svc.curation.propose(
            as_reader, w.repo, body="x\n", summary="s", element_id=el, target_version_id=v1
        )
    assert svc.elements.get_element(as_reader, el)["version"]["version_id"] == v1  # both may read
    on_behalf_of_stranger = replace(w.curator, on_behalf_of=w.stranger.principal_id)
    svc.admin.grant(
        w.admin, w.curator.principal_id, "delegate", w.repo, on_behalf_of=w.stranger.principal_id
    )
    with pytest.raises(NotFound):
        svc.elements.get_element(on_behalf_of_stranger, el)


def test_claiming_a_narrower_role_takes_the_wider_grant_away(fresh: World):
    w, svc = fresh, fresh.svc
    w.canonical()
    bl = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    as_curator = replace(w.publisher, roles=("publisher",))
    assert svc.publishing.baseline_show(as_curator, bl)["baseline_id"] == bl
    # Claimed roles select the grants that count: the publisher holds no reader grant, so
    # claiming "reader" leaves it nothing (the baseline is missing to it, not forbidden).
    as_reader = replace(w.publisher, roles=("reader",))
    with pytest.raises(NotFound):
        svc.publishing.promote(as_reader, bl)
    svc.admin.grant(w.admin, w.publisher.principal_id, "reader", w.repo)
    with pytest.raises(PermissionDenied, match="may not publish"):
        svc.publishing.promote(as_reader, bl)
    claims_admin = replace(w.reader, roles=("admin",))  # holds no admin grant: nothing
    with pytest.raises(NotFound):
        svc.admin.set_legal_hold(claims_admin, w.repo, True)
    with pytest.raises(NotFound):
        svc.elements.create_element(claims_admin, w.repo, title="t", body="b\n")
    claims_more = replace(w.reader, roles=("reader", "admin"))  # still only a reader
    with pytest.raises(PermissionDenied, match="may not admin"):
        svc.admin.set_legal_hold(claims_more, w.repo, True)
    with pytest.raises(PermissionDenied, match="may not curate"):
        svc.elements.create_element(claims_more, w.repo, title="t", body="b\n")


def test_an_element_above_the_callers_clearance_is_not_found_like_a_missing_one(fresh: World):
    w, svc = fresh, fresh.svc
    svc.admin.grant(w.admin, w.curator.principal_id, "curator", w.repo, clearance="confidential")
    public_el, _ = w.canonical(title="Public SOP", body="public\n")
    secret = svc.elements.create_element(
        w.curator, w.repo, title="Secret SOP", body="secret\n", classification="confidential"
    )
    secret_el = secret["element"]["element_id"]
    svc.elements.add_relationship(
        w.curator, public_el, secret_el, kind="REFERENCE", type_key="ameide:mentions"
    )
    unknown = new_id("el")

    def not_found(element_id: str) -> str:
        with pytest.raises(NotFound) as err:
            svc.elements.get_element(w.reader, element_id)
        return err.value.message.replace(element_id, "<id>")

    assert not_found(secret_el) == not_found(unknown)
    assert (
        svc.elements.get_element(w.curator, secret_el)["element"]["classification"]
        == "confidential"
    )
    # Nothing leaks through neighbours, baselines or history either.
    assert svc.elements.list_relationships(w.reader, public_el) == []
    assert len(svc.elements.list_relationships(w.curator, public_el)) == 1
    bl = svc.publishing.create_baseline(w.publisher, w.repo)
    shown = svc.publishing.baseline_show(w.reader, bl["baseline_id"])
    assert [p["element_id"] for p in shown["pins"]] == [public_el]
    assert secret_el not in {e["element_id"] for e in svc.history.history(w.reader, w.repo)}


def test_a_curator_cannot_create_content_above_their_own_clearance(fresh: World):
    w = fresh
    with pytest.raises(PermissionDenied, match="above your clearance"):
        w.svc.elements.create_element(
            w.curator, w.repo, title="Secret", body="s\n", classification="restricted"
        )
