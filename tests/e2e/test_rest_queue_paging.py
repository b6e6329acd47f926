"""REST pages and filters the proposal queue like the CLI and console, and refuses query
parameters a route does not declare (issue 30 §2)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.authz import Caller
from tests.conftest import World
from tests.e2e.rest_harness import Rest, rest_client

BODY = "# Testing SOP\n\nRun it twice.\n"


@pytest.fixture
def rest(world: World) -> Iterator[Rest]:
    with rest_client(world) as r:
        yield r


def _update(w: World, who: object, el: str, ver: str, body: str = BODY) -> str:
    out = w.svc.curation.propose(
        who, w.repo, body=body, summary="s", element_id=el, target_version_id=ver
    )
    return str(out["proposal_id"])


def test_the_queue_filters_like_the_cli_and_pages_with_a_next_cursor(rest: Rest) -> None:
    w, base = rest.world, rest.repo_path
    e1, v1 = w.canonical(title="One")
    e2, v2 = w.canonical(title="Two")
    other_agent = Caller(w.agent.principal_id + "-2")
    w.svc.admin.grant(w.admin, other_agent.principal_id, "agent", w.repo)
    first = _update(w, w.agent, e1, v1, "# One\n\nfirst.\n")
    stale_one = _update(w, w.agent, e1, v1, "# One\n\nsecond.\n")
    by_other = _update(w, other_agent, e1, v1, "# One\n\nthird.\n")
    other = _update(w, w.agent, e2, v2)
    w.svc.review.accept(w.curator, first)  # the other two on e1 are stale now

    def ids(query: str) -> list[str]:
        return [p["proposal_id"] for p in rest.ok("GET", f"{base}/proposals?{query}", w.curator)]

    assert ids("stale=true") == [stale_one, by_other]
    assert ids("stale=false") == [first, other]
    assert ids(f"element_id={e2}") == [other]
    assert ids(f"proposer={other_agent.principal_id}") == [by_other]
    assert ids("status=OPEN&stale=false") == [other]
    assert ids("conflicts=true") == []
    assert ids("order=newest&limit=1") == [other]
    assert ids(f"since={w.svc.curation.proposal_show(w.curator, other)['created_at']}") == [other]

    page = rest.call("GET", f"{base}/proposals?limit=2", w.curator)
    assert page.status_code == 200
    assert [p["proposal_id"] for p in page.json()] == [first, stale_one]
    assert page.headers["X-Next-Cursor"] == stale_one
    assert 'rel="next"' in page.headers["Link"]
    assert f"cursor={stale_one}" in page.headers["Link"]
    last = rest.call("GET", f"{base}/proposals?limit=2&cursor={stale_one}", w.curator)
    assert [p["proposal_id"] for p in last.json()] == [by_other, other]
    assert "X-Next-Cursor" not in last.headers
    assert "Link" not in last.headers

    # the cursor is a position: its proposal leaving the filtered queue does not end the walk
    open_page = rest.call("GET", f"{base}/proposals?status=OPEN&limit=1", w.curator)
    assert [p["proposal_id"] for p in open_page.json()] == [stale_one]
    w.svc.review.withdraw(w.agent, stale_one)
    rest_of_it = rest.ok("GET", f"{base}/proposals?status=OPEN&cursor={stale_one}", w.curator)
    assert [p["proposal_id"] for p in rest_of_it] == [by_other, other]
    nowhere = rest.call("GET", f"{base}/proposals?cursor=prop_{'0' * 24}", w.curator)
    assert nowhere.status_code == 404, nowhere.text


def test_unknown_query_parameters_are_refused_by_name_on_every_route(rest: Rest) -> None:
    w, base = rest.world, rest.repo_path
    for path in (
        f"{base}/proposals?limit=2&stal=true&page=3",
        f"{base}/history?limit=3&stal=true&page=3",
        "/healthz?page=3&stal=true",
    ):
        r = rest.call("GET", path, w.curator)
        assert r.status_code == 400, (path, r.text)
        error = r.json()["error"]
        assert error["code"] == "INVALID_ARGUMENT"
        assert "page" in error["message"], error
        assert "stal" in error["message"], error
    # declared parameters still pass
    assert rest.call("GET", f"{base}/history?limit=3", w.curator).status_code == 200


def test_a_walk_over_a_250_item_queue_sees_each_once_while_proposals_are_added(
    rest: Rest,
) -> None:
    w, base = rest.world, rest.repo_path
    before = w.open_creates(250, "walk")
    seen: list[str] = []
    url: str | None = f"{base}/proposals?status=OPEN&limit=37"
    pages = 0
    while url is not None:
        r = rest.call("GET", url, w.curator)
        assert r.status_code == 200, r.text
        seen += [p["proposal_id"] for p in r.json()]
        pages += 1
        w.open_creates(2, f"added during page {pages}")  # the queue grows between pages
        link = r.headers.get("Link")
        url = link[link.index("<") + 1 : link.index(">")] if link else None
        assert pages < 50, "the walk does not end"
    assert pages >= 250 // 37, "the queue was not paged"
    assert len(seen) == len(set(seen)), "a proposal came twice"
    missing = [p for p in before if p not in seen]
    assert not missing, f"{len(missing)} pre-existing proposals were skipped"
    assert seen[: len(before)] == before  # oldest first, in the order they were opened


def _link(response: object, rel: str) -> str | None:
    header = response.headers.get("Link", "")  # type: ignore[attr-defined]
    for part in header.split(", "):
        if part.endswith(f'rel="{rel}"'):
            return part[part.index("<") + 1 : part.index(">")]
    return None


def test_history_pages_back_to_the_oldest_event_and_forward_to_the_newest(rest: Rest) -> None:
    w, base = rest.world, rest.repo_path
    for i in range(8):
        w.canonical(title=f"Doc {i}")
    everything = [e["event_id"] for e in rest.ok("GET", f"{base}/history", w.auditor)]
    assert len(everything) > 9

    newest = rest.call("GET", f"{base}/history?limit=3", w.auditor)
    assert [e["event_id"] for e in newest.json()] == everything[-3:]
    assert _link(newest, "next") is None  # nothing newer (yet)
    backwards: list[list[int]] = []
    url: str | None = f"{base}/history?limit=3"
    while url is not None:
        r = rest.call("GET", url, w.auditor)
        assert r.status_code == 200, r.text
        backwards.insert(0, [e["event_id"] for e in r.json()])
        url = _link(r, "prev")
        w.canonical(title=f"written while paging back {len(backwards)}")  # newer events only
        assert len(backwards) < 40
    assert [e for page in backwards for e in page] == everything

    oldest = rest.call("GET", f"{base}/history?limit=3&after=0", w.auditor)
    assert [e["event_id"] for e in oldest.json()] == everything[:3]
    assert _link(oldest, "prev") is None
    assert oldest.headers["X-Next-Cursor"] == str(oldest.json()[-1]["chain_seq"])
    forwards: list[int] = []
    url = f"{base}/history?limit=4&after=0"
    while url is not None:
        r = rest.call("GET", url, w.auditor)
        forwards += [e["event_id"] for e in r.json()]
        url = _link(r, "next")
        assert len(forwards) < 400
    assert forwards[: len(everything)] == everything
    assert len(forwards) == len(set(forwards))
    newer = [e["event_id"] for e in rest.ok("GET", f"{base}/history", w.auditor)]
    assert forwards == newer  # forwards reaches the newest event, written while paging back too

    back_one = _link(rest.call("GET", f"{base}/history?limit=4&after=0", w.auditor), "next")
    assert back_one is not None
    second = rest.call("GET", back_one, w.auditor)
    prev = _link(second, "prev")
    assert prev is not None
    assert [e["event_id"] for e in rest.ok("GET", prev, w.auditor)] == forwards[:4]
    seqs = [e["chain_seq"] for e in rest.ok("GET", f"{base}/history", w.auditor)]
    between = rest.ok("GET", f"{base}/history?after={seqs[1]}&before={seqs[5]}", w.auditor)
    assert [e["chain_seq"] for e in between] == seqs[2:5]
