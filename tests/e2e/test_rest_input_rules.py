"""The REST adapter's input rules are the domain's: OpenAPI publishes the very patterns and enums
the service validates with, the server enforces what the document says, and a 405 names every
method of its path (issue 12 item 4; schemathesis checks the same over the whole API in
``test_rest_schemathesis.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from domain.model import RelationshipKind
from domain.permissions import ROLE_LIST_PATTERN, ROLE_NAMES, SUBJECT_PATTERN
from domain.values import PRINCIPAL_PATTERN, SCOPE_PATTERN, SEGMENT_PATTERN, id_pattern
from tests.conftest import World
from tests.e2e.rest_harness import Rest, rest_client


@pytest.fixture
def rest(world: World) -> Iterator[Rest]:
    with rest_client(world) as client:
        yield client


def _parameter(openapi: dict[str, Any], path: str, method: str, name: str) -> dict[str, Any]:
    for parameter in openapi["paths"][path][method]["parameters"]:
        if parameter["name"] == name:
            schema: dict[str, Any] = parameter["schema"]
            return schema
    raise AssertionError(f"{method} {path} has no parameter {name}")


def test_openapi_publishes_the_domain_rules(rest: Rest) -> None:
    openapi = rest.client.get("/openapi.json").json()
    element = "/v1/elements/{element_id}"
    assert _parameter(openapi, element, "get", "element_id")["pattern"] == id_pattern("el")
    assert _parameter(openapi, element, "get", "version_id")["pattern"] == id_pattern("ver")
    assert _parameter(openapi, element, "get", "as_of")["format"] == "date-time"
    assert _parameter(openapi, "/v1/tokens/{token_id}", "delete", "token_id")["pattern"] == (
        id_pattern("tok")
    )
    assert _parameter(openapi, "/v1/grants", "get", "scope")["pattern"] == SCOPE_PATTERN
    revoke = {name: _parameter(openapi, "/v1/grants", "delete", name) for name in ("role",)}
    assert revoke["role"]["enum"] == list(ROLE_NAMES)
    subject = _parameter(openapi, "/v1/delegations", "delete", "on_behalf_of")
    assert subject["pattern"] == SUBJECT_PATTERN
    assert _parameter(openapi, "/v1/grants", "delete", "principal_id")["pattern"] == (
        PRINCIPAL_PATTERN
    )
    repo = "/v1/repositories/{tenant}/{org}/{repo}/published"
    assert _parameter(openapi, repo, "get", "tenant")["pattern"] == SEGMENT_PATTERN
    assert _parameter(openapi, repo, "get", "X-Ameide-Roles")["pattern"] == ROLE_LIST_PATTERN
    schemas = openapi["components"]["schemas"]
    kind = schemas["AddRelationship"]["properties"]["relationship_kind"]
    assert kind["enum"] == [k.value for k in RelationshipKind]
    assert schemas["RejectRequest"]["properties"]["rationale"]["maxLength"] == 10_000
    for role in ROLE_NAMES:  # the header pattern admits exactly the role lists
        assert re.fullmatch(ROLE_LIST_PATTERN, f"{role}, {ROLE_NAMES[0]}")
    assert not re.fullmatch(ROLE_LIST_PATTERN, "null")


def test_the_server_refuses_what_the_document_excludes(rest: Rest) -> None:
    w = rest.world
    element, _ = w.canonical()
    refused = rest.fail("GET", f"/v1/elements/{element}", w.reader, 400, params={"as_of": "0.5"})
    assert refused["message"].startswith("invalid request: query.as_of: unparsable as_of '0.5'")
    empty = rest.fail("GET", f"/v1/elements/{element}", w.reader, 400, params={"version_id": ""})
    assert "query.version_id: malformed version id ''" in empty["message"]
    roles = rest.fail(
        "GET", f"/v1/elements/{element}", w.reader, 400, headers={"X-Ameide-Roles": "null"}
    )
    assert "header.X-Ameide-Roles: unknown role 'null'" in roles["message"]
    held = rest.fail("PUT", f"{rest.repo_path}/legal-hold", w.admin, 400, json={"held": 0})
    assert held["code"] == "INVALID_ARGUMENT"
    for blank in ({"X-Ameide-Roles": ""}, {"X-Ameide-On-Behalf-Of": ""}):  # empty = absent
        rest.ok("GET", f"/v1/elements/{element}", w.reader, headers=blank)


def test_a_405_lists_every_method_of_the_path(rest: Rest) -> None:
    w = rest.world
    response = rest.call("DELETE", f"{rest.repo_path}/proposals", w.reader)
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, HEAD, POST"
