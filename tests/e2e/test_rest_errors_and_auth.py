"""REST errors and authentication: one body shape, one status per error class, bearer tokens,
and a forbidden thing that answers exactly like a missing one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from server.rest.app import MAX_BODY_BYTES
from tests.conftest import World
from tests.e2e.rest_harness import Rest, rest_client


@pytest.fixture
def rest(world: World) -> Iterator[Rest]:
    with rest_client(world) as r:
        yield r


def _masked(error: dict, *ids: str) -> dict:
    """The error with the given ids blanked out (they name what was asked for)."""
    text = repr(error)
    for i in ids:
        text = text.replace(i, "<id>")
    return {"text": text}


def test_a_request_without_a_token_is_refused_with_401(rest: Rest) -> None:
    error = rest.fail("GET", f"{rest.repo_path}/published", None, 401)
    assert error["code"] == "UNAUTHENTICATED"
    response = rest.call("GET", f"{rest.repo_path}/published", None)
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "authorization",
    ["Bearer amt_not-a-real-token", "Bearer ", "Basic dXNlcjpwYXNz", "amt_without_scheme"],
)
def test_a_bad_or_malformed_token_is_refused_with_401(rest: Rest, authorization: str) -> None:
    error = rest.fail(
        "GET", f"{rest.repo_path}/published", None, 401, headers={"Authorization": authorization}
    )
    assert error["code"] == "UNAUTHENTICATED"


def test_a_revoked_token_stops_working(rest: Rest) -> None:
    w = rest.world
    made = rest.ok("POST", "/v1/tokens", w.reader, json={"principal_id": w.reader.principal_id})
    headers = {"Authorization": f"Bearer {made['token']}"}
    assert rest.call("GET", f"{rest.repo_path}/published", None, headers=headers).is_success
    rest.ok("DELETE", f"/v1/tokens/{made['token_id']}", w.reader)
    rest.fail("GET", f"{rest.repo_path}/published", None, 401, headers=headers)


def test_a_forbidden_element_answers_exactly_like_a_missing_one(rest: Rest) -> None:
    w = rest.world
    element, _ = w.canonical()
    missing = "el_" + "0" * 24
    hidden = rest.fail("GET", f"/v1/elements/{element}", w.stranger, 404)
    absent = rest.fail("GET", f"/v1/elements/{missing}", w.stranger, 404)
    assert _masked(hidden, element) == _masked(absent, missing)


def test_a_forbidden_repository_answers_exactly_like_a_missing_one(rest: Rest) -> None:
    w = rest.world
    tenant = w.repo.split("/")[0]
    other = f"{tenant}/eng/does-not-exist"
    hidden = rest.fail("GET", f"{rest.repo_path}/published", w.stranger, 404)
    absent = rest.fail("GET", f"/v1/repositories/{other}/published", w.stranger, 404)
    assert _masked(hidden, w.repo) == _masked(absent, other)
    body = {"summary": "x", "body": "# x\n", "change_kind": "CREATE", "title": "x"}
    proposing = rest.fail("POST", f"{rest.repo_path}/proposals", w.stranger, 404, json=body)
    assert proposing["code"] == "NOT_FOUND"


def test_every_error_class_has_its_status_and_the_one_body_shape(rest: Rest) -> None:
    w, base = rest.world, rest.repo_path
    _element, v1 = w.canonical()

    assert rest.fail("GET", "/v1/elements/not-an-id", w.reader, 400)["code"] == "INVALID_ARGUMENT"
    shape = rest.fail("POST", f"{base}/elements", w.curator, 400, json={"title": 3})
    assert shape["code"] == "INVALID_ARGUMENT"
    assert "body.body: Field required" in shape["details"]["problems"]
    assert rest.fail(
        "POST", f"{base}/elements", w.curator, 400, content=b"{not json",
        headers={"Content-Type": "application/json"},
    )["code"] == "INVALID_ARGUMENT"  # fmt: skip
    assert (
        rest.fail("POST", f"{base}/elements", w.reader, 403, json={"title": "t", "body": "b"})[
            "code"
        ]
        == "PERMISSION_DENIED"
    )
    assert (
        rest.fail("POST", "/v1/repositories", w.admin, 409, json={"repository_id": w.repo})["code"]
        == "ALREADY_EXISTS"
    )

    bl = rest.ok("POST", f"{base}/baselines", w.publisher, json={})["baseline_id"]
    rest.ok("POST", f"{base}/promote", w.publisher, json={"baseline_id": bl})
    lost = rest.fail(
        "POST", f"{base}/promote", w.publisher, 409,
        json={"baseline_id": bl, "expected_baseline_id": "bl_" + "0" * 24},
    )  # fmt: skip
    assert lost["code"] == "CONFLICT"
    assert (
        rest.fail("POST", f"{base}/promote", w.publisher, 412, json={"baseline_id": bl})["code"]
        == "FAILED_PRECONDITION"
    )

    rest.ok("PUT", f"{base}/legal-hold", w.admin, json={"held": True})
    held = rest.fail("POST", f"/v1/versions/{v1}/erase", w.admin, 412, json={"reason": "gdpr"})
    assert held["code"] == "LEGAL_HOLD"

    huge = {"title": "t", "body": "x" * (MAX_BODY_BYTES + 1)}
    too_large = rest.fail("POST", f"{base}/elements", w.curator, 413, json=huge)
    assert too_large["code"] == "PAYLOAD_TOO_LARGE"
    assert rest.fail("GET", "/v1/no-such-route", w.reader, 404)["code"] == "NOT_FOUND"
    assert rest.fail("DELETE", "/v1/context", w.reader, 405)["code"] == "METHOD_NOT_ALLOWED"


def test_on_behalf_of_narrows_to_the_intersection_and_purpose_is_recorded(rest: Rest) -> None:
    w = rest.world
    element, _ = w.canonical()
    for_stranger = {"X-Ameide-On-Behalf-Of": w.stranger.principal_id}
    # naming someone needs a delegation grant; with one, permissions are the intersection
    rest.fail("GET", f"/v1/elements/{element}", w.agent, 403, headers=for_stranger)
    for who in (w.stranger, w.reader):
        w.svc.admin.grant(
            w.admin, w.agent.principal_id, "delegate", w.repo, on_behalf_of=who.principal_id
        )
    rest.fail("GET", f"/v1/elements/{element}", w.agent, 404, headers=for_stranger)
    for_reader = {
        "X-Ameide-On-Behalf-Of": w.reader.principal_id,
        "X-Ameide-Purpose": "ticket 42",
    }
    rest.ok("GET", f"/v1/elements/{element}", w.agent, headers=for_reader)
    log = rest.ok("GET", f"{rest.repo_path}/access-log", w.auditor)
    reads = [r for r in log if r["operation"] == "element.get"]
    assert reads[0]["principal_id"] == w.agent.principal_id
    assert reads[0]["on_behalf_of"] == w.reader.principal_id
    assert reads[0]["purpose"] == "ticket 42"


def test_claimed_roles_only_narrow(rest: Rest) -> None:
    w, base = rest.world, rest.repo_path
    narrowed = {"X-Ameide-Roles": "reader"}
    body = {"title": "t", "body": "# t\n"}
    # a claimed role counts only through the caller's grants of that role: the curator holds
    # no reader grant, so claiming "reader" leaves it nothing (the repository is missing to it)
    rest.fail("POST", f"{base}/elements", w.curator, 404, json=body, headers=narrowed)
    rest.fail(
        "POST", f"{base}/elements", w.reader, 404, json=body, headers={"X-Ameide-Roles": "admin"}
    )
    rest.fail(
        "POST", f"{base}/elements", w.reader, 403, json=body,
        headers={"X-Ameide-Roles": "reader,admin"},
    )  # fmt: skip
    rest.ok("POST", f"{base}/elements", w.curator, json=body, headers={"X-Ameide-Roles": "curator"})


def test_without_required_auth_requests_act_as_the_local_principal(world: World) -> None:
    world.app.settings.principal = world.reader.principal_id
    with rest_client(world, require_auth=False) as rest:
        assert rest.ok("GET", f"{rest.repo_path}/published", None)["baseline_id"] is None
        # a token, when sent, is still checked
        rest.fail(
            "GET", f"{rest.repo_path}/published", None, 401,
            headers={"Authorization": "Bearer amt_bogus"},
        )  # fmt: skip


def test_every_request_logs_one_json_line_without_the_token(
    rest: Rest, caplog: pytest.LogCaptureFixture
) -> None:
    w = rest.world
    caplog.set_level("INFO", logger="ameide.access")
    response = rest.call(
        "GET", f"{rest.repo_path}/published", w.reader, headers={"X-Trace-Id": "trace-abc-123"}
    )
    assert response.headers["x-trace-id"] == "trace-abc-123"
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "ameide.access"]
    assert lines[-1]["trace_id"] == "trace-abc-123"
    assert lines[-1]["principal"] == w.reader.principal_id
    assert lines[-1]["operation"] == "published"
    assert (lines[-1]["status"], lines[-1]["http_status"]) == ("OK", 200)
    assert lines[-1]["latency_ms"] >= 0
    token = rest.tokens[w.reader.principal_id]
    assert all(token not in r.getMessage() for r in caplog.records)


def test_metrics_count_requests_by_operation_and_show_index_lag(rest: Rest) -> None:
    w = rest.world
    rest.ok("GET", f"{rest.repo_path}/published", w.reader)
    rest.fail("GET", f"{rest.repo_path}/published", None, 401)
    text = rest.client.get("/metrics", headers=rest.headers(w.reader)).text
    assert re.search(
        r'ameide_requests_total\{operation="published",status="OK",surface="rest"\} 1\.0', text
    )
    assert 'operation="published",status="UNAUTHENTICATED"' in text
    assert "ameide_request_duration_seconds_bucket" in text
    assert re.search(r"^ameide_index_lag 0\.0$", text, re.M)
    assert re.search(r"^ameide_database_up 1\.0$", text, re.M)


def test_metrics_need_a_token_and_name_no_repository_by_default(rest: Rest) -> None:
    w = rest.world
    refused = rest.client.get("/metrics")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "UNAUTHENTICATED"
    bad = rest.client.get("/metrics", headers={"Authorization": "Bearer amt_not-a-token"})
    assert bad.status_code == 401
    element, v1 = w.canonical()
    w.svc.curation.propose(
        w.agent, w.repo, body="# Testing SOP\n\nRun it.\n", summary="edit",
        element_id=element, target_version_id=v1,
    )  # fmt: skip
    text = rest.client.get("/metrics", headers=rest.headers(w.curator)).text
    assert re.search(r"^ameide_proposal_queue_size 1\.0$", text, re.M)
    assert w.repo not in text
    text = rest.client.get("/metrics", headers=rest.headers(w.reader)).text
    assert re.search(r"^ameide_proposal_queue_size 0\.0$", text, re.M)  # not hers to count


def test_metrics_show_the_proposal_queue_per_repository_when_asked(world: World) -> None:
    with rest_client(world, metrics_public=True, metrics_repository_labels=True) as rest:
        _proposal_queue_per_repository(rest)


def _proposal_queue_per_repository(rest: Rest) -> None:
    w = rest.world
    element, v1 = w.canonical()
    for n in range(2):
        w.svc.curation.propose(
            w.agent, w.repo, body=f"# Testing SOP\n\nRun it {n}.\n", summary=f"edit {n}",
            element_id=element, target_version_id=v1,
        )  # fmt: skip
    gauge = rf'^ameide_proposal_queue_size\{{repository="{re.escape(w.repo)}"\}} (\S+)$'
    curator = rest.headers(w.curator)
    assert (
        re.search(gauge, rest.client.get("/metrics", headers=curator).text, re.M).group(1) == "2.0"
    )
    newest = w.svc.curation.proposal_list(w.curator, w.repo, status="OPEN")[-1]
    w.svc.review.reject(w.curator, newest["proposal_id"], rationale="not now")
    assert (
        re.search(gauge, rest.client.get("/metrics", headers=curator).text, re.M).group(1) == "1.0"
    )
    assert "ameide_proposal_queue_size" not in rest.client.get("/metrics").text  # no token


def test_probes_and_openapi_are_served_without_a_token(rest: Rest) -> None:
    assert rest.client.get("/healthz").json() == {"status": "ok"}
    ready = rest.client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"
    spec = rest.client.get("/openapi.json").json()
    assert spec["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    statuses = {s for op in spec["paths"].values() for o in op.values() for s in o["responses"]}
    assert "422" not in statuses
    assert {"400", "401", "403", "404", "409", "412"} <= statuses
    assert rest.client.get("/docs").status_code == 200


def test_readiness_reports_lag_but_fails_only_when_the_index_cannot_answer(rest: Rest) -> None:
    w = rest.world
    indexer = w.app.indexer
    assert indexer is not None
    original = indexer.status
    lagging = {**original(), "pending": 3, "consistent": False}
    missing = {**lagging, "on_disk": False}
    answers = []
    try:
        for status in (lagging, missing):
            indexer.status = lambda status=status: status  # type: ignore[method-assign]
            answers.append(rest.client.get("/readyz"))
    finally:
        indexer.status = original  # type: ignore[method-assign]
    assert [a.status_code for a in answers] == [200, 503]
    assert answers[0].json()["index"]["pending"] == 3  # lag is reported, readiness does not flap
    assert answers[1].json()["status"] == "not_ready"


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b'{"title": "a\\ud800b", "body": "# x\\n"}', "lone surrogate"),
        (b'{"title": "ok", "body": "# x \\udfff\\n"}', "lone surrogate"),
        (b'{"title": "\xff\xfe", "body": "# x\\n"}', "not valid UTF-8"),
    ],
)
def test_text_that_is_not_unicode_is_invalid_argument(rest: Rest, raw: bytes, says: str) -> None:
    """A lone surrogate used to give 500 (UnicodeEncodeError at the database), invalid UTF-8 the
    off-taxonomy ``HTTP_400``: both are ``INVALID_ARGUMENT``, and nothing is written."""
    w = rest.world
    before = len(w.svc.history.history(w.admin, w.repo))
    error = rest.fail(
        "POST", f"{rest.repo_path}/elements", w.curator, 400,
        content=raw, headers={"Content-Type": "application/json"},
    )  # fmt: skip
    assert error["code"] == "INVALID_ARGUMENT"
    assert says in error["message"]
    assert len(w.svc.history.history(w.admin, w.repo)) == before


def test_a_lone_surrogate_in_any_field_is_refused_at_the_edge(rest: Rest) -> None:
    w = rest.world
    raw = ('{"query": "tests\\ud800", "scope": {"repositories": ["' + w.repo + '"]}}').encode()
    error = rest.fail(
        "POST", "/v1/context", w.reader, 400,
        content=raw, headers={"Content-Type": "application/json"},
    )  # fmt: skip
    assert error["code"] == "INVALID_ARGUMENT"
    assert "body.query" in error["message"]
