"""Discovery (issue 14): whoami, the repositories one may read, and a repository's elements a
page at a time — trimmed like every read (nothing unreadable listed, counted or hinted at)."""

from __future__ import annotations

import pytest

from domain.errors import InvalidArgument, NotFound
from service.authz import Caller
from tests.conftest import World


def test_whoami_names_the_caller_and_its_own_grants(any_world: World) -> None:
    w = any_world
    me = w.svc.discovery.whoami(Caller(w.curator.principal_id, purpose="review"))
    assert me["principal_id"] == w.curator.principal_id
    assert me["purpose"] == "review"
    assert me["global_admin"] is False
    assert me["grants"] == [{"role": "curator", "scope": w.repo, "clearance": "internal"}]
    assert w.svc.discovery.whoami(w.admin)["global_admin"] is True


def test_the_repositories_a_caller_may_read_and_no_other(any_world: World) -> None:
    w = any_world
    other = w.repo.rsplit("/", 1)[0] + "/other"
    w.svc.admin.create_repository(w.admin, other)
    mine = w.svc.discovery.list_repositories(w.reader)
    assert [r["repository_id"] for r in mine] == [w.repo]
    assert mine[0]["actions"] == ["read"]
    assert mine[0]["read_clearance"] == "internal"
    assert mine[0]["legal_hold"] is False
    assert w.svc.discovery.list_repositories(w.stranger) == []
    assert {w.repo, other} <= {
        r["repository_id"] for r in w.svc.discovery.list_repositories(w.admin)
    }


def test_elements_are_listed_in_pages_and_trimmed_to_the_callers_clearance(
    any_world: World,
) -> None:
    w = any_world
    ids = sorted(w.canonical(title=f"Page {n}", body=f"# Page {n}\n\nText.\n")[0] for n in range(5))
    secret = w.svc.elements.create_element(
        w.admin, w.repo, title="Secret", body="# Secret\n", classification="confidential"
    )["element"]["element_id"]
    first = w.svc.discovery.list_elements(w.reader, w.repo, limit=2)
    assert [e["element_id"] for e in first["elements"]] == ids[:2]
    assert first["next_cursor"] == ids[1]
    seen = [e["element_id"] for e in first["elements"]]
    cursor = first["next_cursor"]
    while cursor:
        page = w.svc.discovery.list_elements(w.reader, w.repo, limit=2, cursor=cursor)
        seen += [e["element_id"] for e in page["elements"]]
        cursor = page["next_cursor"]
    assert seen == ids  # the confidential page is neither listed nor leaves a gap in a page
    assert secret not in seen
    assert {e["title"] for e in w.svc.discovery.list_elements(w.reader, w.repo)["elements"]} == {
        f"Page {n}" for n in range(5)
    }
    with pytest.raises(NotFound):
        w.svc.discovery.list_elements(w.stranger, w.repo)
    with pytest.raises(InvalidArgument):
        w.svc.discovery.list_elements(w.reader, w.repo, limit=0)


def test_hold_status_tells_readers_whether_a_hold_is_on(any_world: World) -> None:
    w = any_world
    assert w.svc.discovery.hold_status(w.reader, w.repo) == {
        "repository_id": w.repo,
        "legal_hold": False,
    }
    w.svc.admin.set_legal_hold(w.admin, w.repo, True)
    assert w.svc.discovery.hold_status(w.reader, w.repo)["legal_hold"] is True
    with pytest.raises(NotFound):
        w.svc.discovery.hold_status(w.stranger, w.repo)
