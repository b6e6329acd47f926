"""``POST /v1/sources/{id}/hook`` on a real ``ameide serve``: GitHub's and GitLab's signed push
deliveries over a real git repository.

A bad or missing signature is 401 and runs nothing; a valid push answers 202 at once and the
serve process's background scheduler ingests the new commit; the same delivery id again runs
nothing; pushes to another ref are ignored; past the source's rate the answer is 429.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from edge.network import MAX_REQUEST_BYTES
from tests.e2e.sources_harness import ADMIN, REPO, Served, make_home, open_home, serve
from tests.integration.ingest.conftest import GitRepo

SECRET = "s3cret-webhook-value"


def github_push(ref: str, after: str) -> bytes:
    """A GitHub push payload (the fields a push event carries that matter here, as GitHub
    serializes them)."""
    payload = {
        "ref": ref,
        "before": "0" * 40,
        "after": after,
        "repository": {"full_name": "acme/backlog", "default_branch": "main"},
        "pusher": {"name": "octocat"},
        "commits": [{"id": after, "message": "more backlog"}],
    }
    return json.dumps(payload).encode()


def gitlab_push(ref: str, after: str) -> bytes:
    payload = {"object_kind": "push", "ref": ref, "after": after, "project": {"id": 7}}
    return json.dumps(payload).encode()


def signed(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def github(
    delivery: str, body: bytes, signature: str | None, event: str = "push"
) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "X-GitHub-Event": event}
    headers["X-GitHub-Delivery"] = delivery
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    return headers


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    """A git backlog, a home with a source registered for it (run once by hand, so the next
    scheduled run is an hour away), and ``ameide serve`` on it."""
    git = GitRepo(tmp_path / "backlog")
    git.write("docs/a.md", "# Alpha\n\nThe first page.\n")
    git.commit("first")
    home = tmp_path / "home"
    make_home(home)
    secret_file = tmp_path / "hook.secret"
    secret_file.write_text(SECRET + "\n")
    app = open_home(home)
    try:
        added = app.service.sources.add_source(
            ADMIN, REPO, "backlog", path=str(git.root), interval_s=3600,
            hook_secret_file=str(secret_file),
        )  # fmt: skip
        first = app.service.sources.run_source(ADMIN, added.source_id)
    finally:
        app.close()
    assert first.status == "ok", first.error
    assert added.hook_secret is None  # given by reference: nothing to show
    return {"git": git, "home": home, "source": added.source_id, "tmp": tmp_path}


def runs(home: Path, source_id: str) -> list[Any]:
    app = open_home(home)
    try:
        return app.service.sources.source_status(ADMIN, source_id, 100).runs
    finally:
        app.close()


def elements(home: Path) -> int:
    app = open_home(home)
    try:
        return len(app.service.discovery.list_elements(ADMIN, REPO)["elements"])
    finally:
        app.close()


def wait_for_runs(home: Path, source_id: str, count: int, served: Served) -> list[Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = runs(home, source_id)
        if len(found) >= count and all(r.status != "running" for r in found):
            return found
        time.sleep(0.3)
    raise AssertionError(f"{count} runs expected, got {found}\n{served.stderr()}")


def test_signed_deliveries_queue_one_run_each_and_bad_ones_start_nothing(world) -> None:
    git, home, source_id = world["git"], world["home"], world["source"]
    git.write("docs/b.md", "# Beta\n\nPushed after the source was added.\n")
    after = git.commit("second")
    hook = f"/v1/sources/{source_id}/hook"
    body = github_push("refs/heads/main", after)
    with (
        serve(home, world["tmp"] / "serve.log") as served,
        httpx.Client(base_url=served.base) as http,
    ):
        before = elements(home)
        bad = [
            http.post(hook, content=body, headers=github("d-0", body, signed(body, "wrong"))),
            http.post(hook, content=body, headers=github("d-0", body, None)),
            http.post(hook, content=body, headers=github("d-0", body, signed(body + b" "))),
            http.post(
                hook, content=body,
                headers={"Content-Type": "application/json", "X-Gitlab-Token": "wrong"},
            ),
            http.post("/v1/sources/src_000000000000000000000000/hook", content=body,
                      headers=github("d-0", body, signed(body))),
        ]  # fmt: skip
        assert [r.status_code for r in bad] == [401] * 5
        assert all(r.json()["error"]["code"] == "UNAUTHENTICATED" for r in bad)
        time.sleep(3)  # the scheduler polls every second: long enough to see a wrong start
        assert len(runs(home, source_id)) == 1
        assert elements(home) == before  # nothing was ingested

        started = time.monotonic()
        ok = http.post(hook, content=body, headers=github("d-1", body, signed(body)))
        assert ok.status_code == 202, ok.text
        assert time.monotonic() - started < 5  # answered at once; the run is in the background
        assert ok.json()["outcome"] == "queued"
        assert ok.json()["provider"] == "github"
        done = wait_for_runs(home, source_id, 2, served)
        assert (done[0].trigger, done[0].status) == ("webhook", "ok"), done[0]
        assert done[0].report["counts"]["new"] == 1  # docs/b.md
        assert elements(home) == before + 1

        again = http.post(hook, content=body, headers=github("d-1", body, signed(body)))
        assert again.status_code == 202
        assert again.json()["outcome"] == "duplicate"
        ping = http.post(hook, content=b"{}", headers=github("d-2", b"{}", signed(b"{}"), "ping"))
        assert ping.json()["outcome"] == "ignored"
        other = github_push("refs/heads/feature", after)
        elsewhere = http.post(hook, content=other, headers=github("d-3", other, signed(other)))
        assert elsewhere.json()["outcome"] == "ignored"
        time.sleep(3)
        assert len(runs(home, source_id)) == 2  # the redelivery ran nothing

        lab = gitlab_push("refs/heads/main", after)
        gitlab_headers = {
            "Content-Type": "application/json",
            "X-Gitlab-Event": "Push Hook",
            "X-Gitlab-Token": SECRET,
            "X-Gitlab-Event-UUID": "g-1",
        }
        queued = http.post(hook, content=lab, headers=gitlab_headers)
        assert queued.status_code == 202
        assert queued.json()["provider"] == "gitlab"
        assert http.post(hook, content=lab, headers=gitlab_headers).json()["outcome"] == "duplicate"
        last = wait_for_runs(home, source_id, 3, served)[0]
        assert last.trigger == "webhook"
        assert last.report["noop"] is True
        time.sleep(2)
        assert len(runs(home, source_id)) == 3


def test_deliveries_past_the_rate_of_a_source_are_429_and_a_huge_body_413(world) -> None:
    hook = f"/v1/sources/{world['source']}/hook"
    body = github_push("refs/heads/elsewhere", "f" * 40)
    with (
        serve(world["home"], world["tmp"] / "serve.log") as served,
        httpx.Client(base_url=served.base) as http,
    ):
        codes = [
            http.post(hook, content=body, headers=github(f"r-{n}", body, signed(body))).status_code
            for n in range(14)
        ]
        huge = b'{"ref": "' + b"x" * MAX_REQUEST_BYTES + b'"}'
        too_large = http.post(hook, content=huge, headers=github("big", huge, signed(huge)))
    assert too_large.status_code == 413
    assert codes[:10] == [202] * 10
    assert 429 in codes[10:]
    assert runs(world["home"], world["source"])[0].trigger == "manual"  # nothing else ran
