"""REST discovery (issue 14): who am I, the repositories I may read, a repository's elements a
page at a time, my own tokens — trimmed like every read, and a repository I may not read
answers exactly like one that does not exist."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from edge.results import as_json
from tests.conftest import World
from tests.e2e.rest_harness import Rest, rest_client


@pytest.fixture
def rest(world: World) -> Iterator[Rest]:
    with rest_client(world) as r:
        yield r


def test_whoami_names_the_caller_its_purpose_and_its_own_grants(rest: Rest) -> None:
    w = rest.world
    me = rest.ok("GET", "/v1/whoami", w.curator, headers={"X-Ameide-Purpose": "review"})
    assert me == as_json(w.svc.discovery.whoami(w.curator)) | {"purpose": "review"}
    assert me["grants"] == [{"role": "curator", "scope": w.repo, "clearance": "internal"}]
    assert rest.ok("GET", "/v1/whoami", w.admin)["global_admin"] is True
    assert rest.fail("GET", "/v1/whoami", None, 401)["code"] == "UNAUTHENTICATED"


def test_repositories_lists_the_readable_ones_and_no_other(rest: Rest) -> None:
    w = rest.world
    w.svc.admin.create_repository(w.admin, w.repo.rsplit("/", 1)[0] + "/other")
    mine = rest.ok("GET", "/v1/repositories", w.reader)
    assert mine == [
        {"repository_id": w.repo, "actions": ["read"], "read_clearance": "internal",
         "legal_hold": False}
    ]  # fmt: skip
    assert rest.ok("GET", "/v1/repositories", w.stranger) == []


def test_elements_come_a_page_at_a_time_until_next_cursor_is_null(rest: Rest) -> None:
    w = rest.world
    ids = sorted(w.canonical(title=f"Page {n}", body=f"# Page {n}\n\nText.\n")[0] for n in range(3))
    path = f"{rest.repo_path}/elements"
    seen, cursor = [], None
    while True:
        page = rest.ok(
            "GET", path, w.reader, params={"limit": 2, **({"cursor": cursor} if cursor else {})}
        )
        assert page["repository_id"] == w.repo
        assert len(page["elements"]) <= 2
        seen += [e["element_id"] for e in page["elements"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids
    first = rest.ok("GET", path, w.reader, params={"limit": 1})["elements"][0]
    assert set(first) == {
        "element_id", "title", "element_kind", "type_key", "source_kind", "classification",
        "head_version_id", "retired_at",
    }  # fmt: skip
    for bad in ({"limit": 0}, {"limit": 201}, {"cursor": "nope"}):
        assert rest.fail("GET", path, w.reader, 400, params=bad)["code"] == "INVALID_ARGUMENT"


def test_elements_of_a_repository_one_may_not_read_answer_like_a_missing_one(rest: Rest) -> None:
    w = rest.world
    w.canonical()
    forbidden = rest.fail("GET", f"{rest.repo_path}/elements", w.stranger, 404)
    missing_repo = w.repo.rsplit("/", 1)[0] + "/missing"
    missing = rest.fail("GET", f"/v1/repositories/{missing_repo}/elements", w.stranger, 404)
    assert forbidden["code"] == "NOT_FOUND"
    assert str(forbidden).replace(w.repo, "<repo>") == str(missing).replace(missing_repo, "<repo>")


def test_tokens_lists_the_callers_own_tokens_and_never_their_secrets(rest: Rest) -> None:
    w = rest.world
    made = rest.ok("POST", "/v1/tokens", w.reader, json={"principal_id": w.reader.principal_id})
    mine = rest.ok("GET", "/v1/tokens", w.reader)
    assert made["token_id"] in {t["token_id"] for t in mine}
    assert {t["principal_id"] for t in mine} == {w.reader.principal_id}
    assert all("token" not in t for t in mine)
    assert made["token"] not in str(mine)


def test_the_openapi_document_names_the_discovery_operations(rest: Rest) -> None:
    paths = rest.client.get("/openapi.json").json()["paths"]
    assert paths["/v1/whoami"]["get"]["operationId"] == "whoami"
    assert paths["/v1/repositories"]["get"]["operationId"] == "list_repositories"
    listing = paths["/v1/repositories/{tenant}/{org}/{repo}/elements"]
    assert listing["get"]["operationId"] == "list_elements"
    assert {"get", "post"} <= set(listing)
