"""Drift and gaps on the network surfaces and the console (docs/drift.md): REST over a real
app, MCP through the official SDK client, the console's drift page through its forms — each
listing the drifted page with its evidence diff, and none of them showing it to an agent
cleared below the evidence's level."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import html5lib
import jsonschema
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from mcp_adapter.server import MemoryMcp
from runtime import App
from server.rest.app import create_app
from service.authz import Caller
from tests.drift_world import V2, Scene
from tests.e2e.console_harness import csrf_of, sign_in
from tests.e2e.mcp_harness import structured


@pytest.fixture
def scene(sqlite_app: App, tmp_path: Path) -> Scene:
    s = Scene(sqlite_app, tmp_path)
    s.sync(V2)
    return s


@pytest.fixture
def client(scene: Scene) -> Iterator[TestClient]:
    with TestClient(create_app(scene.w.svc, settings=scene.w.app.settings)) as c:
        yield c


def token(scene: Scene, who: Caller) -> str:
    return str(scene.w.svc.tokens.create(scene.w.admin, who.principal_id)["token"])


def test_rest_lists_reviews_and_reports_gaps_trimmed_per_caller(scene: Scene, client: TestClient):
    w = scene.w
    path = "/v1/repositories/" + w.repo
    curator = {"Authorization": f"Bearer {token(scene, w.curator)}"}
    low = {"Authorization": f"Bearer {token(scene, scene.low)}"}
    listed = client.get(path + "/drift", headers=curator)
    assert listed.status_code == 200, listed.text
    (entry,) = listed.json()["entries"]
    assert entry["evidence_element_id"] == scene.evidence
    assert "+Run phase 0 and phase 1 with make test-all." in entry["diff"]
    assert client.get(path + "/drift", headers=low).json()["entries"] == []
    assert client.get(path + "/gaps", headers=low).json()["evidence"]["total"] == 0
    gaps = client.get(path + "/gaps", params={"topic": "phase"}, headers=curator).json()
    assert (gaps["evidence"]["live"], gaps["drifted"]) == (1, 0)  # the page says no "phase"
    review = f"/v1/elements/{scene.page}/drift/{scene.evidence}/review"
    refused = client.post(review, json={}, headers=low)  # it reads the page, curates nothing
    assert refused.status_code == 403, refused.text
    hidden = client.post(f"/v1/elements/{scene.page}/drift/{scene.evidence}/propose", headers=low)
    assert hidden.status_code == 404, hidden.text  # the drift it may not see does not exist
    moved = client.post(
        review, json={"evidence_version_id": entry["pinned"]["version_id"]}, headers=curator
    )
    assert moved.status_code == 409, moved.text
    done = client.post(
        review, json={"evidence_version_id": entry["current"]["version_id"]}, headers=curator
    )
    assert done.status_code == 201, done.text
    assert client.get(path + "/drift", headers=curator).json()["entries"] == []


def test_mcp_drift_and_gaps_tools_return_their_output_schemas(scene: Scene):
    w = scene.w

    async def main(who: Caller) -> tuple[dict, dict]:
        async with Client(MemoryMcp(w.svc, lambda ctx: who).server()) as client:
            schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
            drift = structured(await client.call_tool("memory.drift", {"repository": w.repo}))
            jsonschema.validate(drift, schemas["memory.drift"])
            gaps = structured(await client.call_tool("memory.gaps", {"repository": w.repo}))
            jsonschema.validate(gaps, schemas["memory.gaps"])
            return drift, gaps

    drift, gaps = anyio.run(main, w.agent)
    assert [e["curated_element_id"] for e in drift["entries"]] == [scene.page]
    assert gaps["drifted"] == 1
    drift, gaps = anyio.run(main, scene.low)
    assert drift["entries"] == []
    assert gaps["drifted"] == 0


def _valid(html: str) -> list[str]:
    parser = html5lib.HTMLParser(strict=False)
    parser.parse(html)
    return [f"{pos}: {code}" for pos, code, _ in parser.errors]


def test_the_console_drift_page_shows_the_diff_and_reviews_through_its_form(
    scene: Scene, client: TestClient
):
    w = scene.w
    page_path = f"/ui/repos/{w.repo}/drift"
    sign_in(client, token(scene, scene.low))
    hidden = client.get(page_path)
    assert hidden.status_code == 200, hidden.text
    assert "No drifted page." in hidden.text
    assert scene.evidence not in hidden.text
    sign_in(client, token(scene, w.curator))
    page = client.get(page_path, params={"topic": "phase"})
    assert page.status_code == 200, page.text
    assert _valid(page.text) == []
    assert "Testing SOP" in page.text
    assert "+Run phase 0 and phase 1 with make test-all." in page.text
    current = w.svc.elements.get_element(w.curator, scene.evidence)["version"]["version_id"]
    done = client.post(
        page_path + "/review",
        data={"csrf_token": csrf_of(page.text), "page": scene.page, "evidence": scene.evidence,
              "up_to": current, "note": "still right"},
    )  # fmt: skip
    assert done.status_code == 200, done.text  # followed the 303 back to the page
    assert "No drifted page." in done.text
